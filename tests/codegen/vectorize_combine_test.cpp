/// vectorize's merging of consecutive scalar accesses in straight-line code (IR in, IR out): a
/// per-thread chunk's loads and stores become vector accesses where the chunk's start is a known
/// multiple of the width (literals, `require` rules, enclosing branch conditions), and nothing
/// that could see the accesses move is in the way.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "vectorize_test_support.hpp"

namespace iron::vectorize_test {
namespace {

using namespace vectorize_support;

/// `count` loads of `from` at %B + 0 … %B + count - 1 (value ids from `first`), then the same
/// number of stores to `to` at the same indices, lane c storing load count - 1 - c. `%B` names
/// the base. Returns the ops; `next` becomes the first free value id.
std::string chunk_copy(int base, int first, int count, std::string_view from, std::string_view to,
                       std::string_view type, int& next) {
  std::string text;
  std::vector<int> index(count);
  std::vector<int> value(count);
  int v = first;
  for (int c = 0; c < count; ++c) {
    if (c == 0) {
      index[c] = base;
    } else {
      text += "  %" + std::to_string(v) + " = const " + std::to_string(c) + " : u32\n";
      text += "  %" + std::to_string(v + 1) + " = add %" + std::to_string(base) + ", %" +
              std::to_string(v) + " : u32\n";
      index[c] = v + 1;
      v += 2;
    }
    value[c] = v;
    text += "  %" + std::to_string(v) + " = load " + std::string(from) + "[%" +
            std::to_string(index[c]) + "] : " + std::string(type) + "\n";
    ++v;
  }
  for (int c = 0; c < count; ++c) {
    text += "  store " + std::string(to) + "[%" + std::to_string(index[c]) + "], %" +
            std::to_string(value[count - 1 - c]) + " : " + std::string(type) + "\n";
  }
  next = v;
  return text;
}

constexpr std::string_view kBaseOf4 = R"(
  %0 = builtin group_id.x : u32
  %1 = const 2 : u32
  %2 = shl %0, %1 : u32
)";

// Four f32 loads at a multiple of 4 become one 16-byte load (its lanes keep the loads' ids),
// the four stores one 16-byte store where the last of them was.
TEST(PassVectorizeCombine, AChunkOfFourF32MergesInto16Bytes) {
  int next = 0;
  const std::string body = std::string(kBaseOf4) + chunk_copy(2, 3, 4, "x", "out", "f32", next);
  expect_vectorized(body, next, R"(
  %0 = builtin group_id.x : u32
  %1 = const 2 : u32
  %2 = shl %0, %1 : u32
  %13 = load x[%2] : f32x4
  %3 = extract %13, 0 : f32
  %6 = extract %13, 1 : f32
  %9 = extract %13, 2 : f32
  %12 = extract %13, 3 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  %7 = const 2 : u32
  %8 = add %2, %7 : u32
  %10 = const 3 : u32
  %11 = add %2, %10 : u32
  store out[%2], %12, %9, %6, %3 : f32x4
)",
                    14);
}

// Eight bf16 at a constexpr the contract requires to be a multiple of 8: one 16-byte load and
// one 16-byte store.
TEST(PassVectorizeCombine, ARuleMakesTheBaseAligned) {
  int next = 0;
  const std::string body =
      "  %0 = constexpr m : u32\n" + chunk_copy(0, 1, 8, "xb", "outb", "bf16", next);
  expect_vectorized(body, next, R"(
  %0 = constexpr m : u32
  %23 = load xb[%0] : bf16x8
  %1 = extract %23, 0 : bf16
  %4 = extract %23, 1 : bf16
  %7 = extract %23, 2 : bf16
  %10 = extract %23, 3 : bf16
  %13 = extract %23, 4 : bf16
  %16 = extract %23, 5 : bf16
  %19 = extract %23, 6 : bf16
  %22 = extract %23, 7 : bf16
  %2 = const 1 : u32
  %3 = add %0, %2 : u32
  %5 = const 2 : u32
  %6 = add %0, %5 : u32
  %8 = const 3 : u32
  %9 = add %0, %8 : u32
  %11 = const 4 : u32
  %12 = add %0, %11 : u32
  %14 = const 5 : u32
  %15 = add %0, %14 : u32
  %17 = const 6 : u32
  %18 = add %0, %17 : u32
  %20 = const 7 : u32
  %21 = add %0, %20 : u32
  store outb[%0], %22, %19, %16, %13, %10, %7, %4, %1 : bf16x8
)",
                    24, {}, "  require m multiple_of 8\n");
}

// A base known to be a multiple of 2 only: two 8-byte halves.
TEST(PassVectorizeCombine, AnEvenBaseTakesEightBytes) {
  int next = 0;
  const std::string body = R"(
  %0 = builtin group_id.x : u32
  %1 = const 1 : u32
  %2 = shl %0, %1 : u32
)" + chunk_copy(2, 3, 4, "x", "out", "f32", next);
  expect_vectorized(body, next, R"(
  %0 = builtin group_id.x : u32
  %1 = const 1 : u32
  %2 = shl %0, %1 : u32
  %13 = load x[%2] : f32x2
  %3 = extract %13, 0 : f32
  %6 = extract %13, 1 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  %7 = const 2 : u32
  %8 = add %2, %7 : u32
  %14 = const 2 : u32
  %15 = add %2, %14 : u32
  %16 = load x[%15] : f32x2
  %9 = extract %16, 0 : f32
  %12 = extract %16, 1 : f32
  %10 = const 3 : u32
  %11 = add %2, %10 : u32
  store out[%2], %12, %9 : f32x2
  %17 = const 2 : u32
  %18 = add %2, %17 : u32
  store out[%18], %6, %3 : f32x2
)",
                    19);
}

// Inside `if (m & 3) == 0`, m is a multiple of 4; in the else-block it is not known to be.
TEST(PassVectorizeCombine, ABranchConditionMakesTheBaseAligned) {
  int next = 0;
  const std::string then_ops = chunk_copy(0, 5, 4, "x", "out", "f32", next);
  const int after_then = next;
  const std::string else_ops = chunk_copy(0, after_then, 4, "w", "out", "f32", next);
  const std::string body = R"(
  %0 = constexpr m : u32
  %1 = const 3 : u32
  %2 = and %0, %1 : u32
  %3 = const 0 : u32
  %4 = eq %2, %3 : bool
  if %4 {
)" + then_ops + "  } else {\n" +
                           else_ops + "  }\n";
  expect_vectorized(body, next, R"(
  %0 = constexpr m : u32
  %1 = const 3 : u32
  %2 = and %0, %1 : u32
  %3 = const 0 : u32
  %4 = eq %2, %3 : bool
  if %4 {
    %25 = load x[%0] : f32x4
    %5 = extract %25, 0 : f32
    %8 = extract %25, 1 : f32
    %11 = extract %25, 2 : f32
    %14 = extract %25, 3 : f32
    %6 = const 1 : u32
    %7 = add %0, %6 : u32
    %9 = const 2 : u32
    %10 = add %0, %9 : u32
    %12 = const 3 : u32
    %13 = add %0, %12 : u32
    store out[%0], %14, %11, %8, %5 : f32x4
  } else {
    %15 = load w[%0] : f32
    %16 = const 1 : u32
    %17 = add %0, %16 : u32
    %18 = load w[%17] : f32
    %19 = const 2 : u32
    %20 = add %0, %19 : u32
    %21 = load w[%20] : f32
    %22 = const 3 : u32
    %23 = add %0, %22 : u32
    %24 = load w[%23] : f32
    store out[%0], %24 : f32
    store out[%17], %21 : f32
    store out[%20], %18 : f32
    store out[%23], %15 : f32
  }
)",
                    26);
}

// A barrier between the second and the third load: the 16-byte merge would move loads across
// it, the two 8-byte ones do not.
TEST(PassVectorizeCombine, ABarrierSplitsTheChunk) {
  expect_vectorized(std::string(kBaseOf4) + R"(
  %3 = load x[%2] : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  %6 = load x[%5] : f32
  barrier
  %7 = const 2 : u32
  %8 = add %2, %7 : u32
  %9 = load x[%8] : f32
  %10 = const 3 : u32
  %11 = add %2, %10 : u32
  %12 = load x[%11] : f32
  %13 = add %3, %6 : f32
  %14 = add %9, %12 : f32
  %15 = add %13, %14 : f32
  store out[%0], %15 : f32
)",
                    16, R"(
  %0 = builtin group_id.x : u32
  %1 = const 2 : u32
  %2 = shl %0, %1 : u32
  %16 = load x[%2] : f32x2
  %3 = extract %16, 0 : f32
  %6 = extract %16, 1 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  barrier
  %7 = const 2 : u32
  %8 = add %2, %7 : u32
  %17 = const 2 : u32
  %18 = add %2, %17 : u32
  %19 = load x[%18] : f32x2
  %9 = extract %19, 0 : f32
  %12 = extract %19, 1 : f32
  %10 = const 3 : u32
  %11 = add %2, %10 : u32
  %13 = add %3, %6 : f32
  %14 = add %9, %12 : f32
  %15 = add %13, %14 : f32
  store out[%0], %15 : f32
)",
                    20);
}

// Stores of one chunk in any order, even interleaved with stores at the same base: each writes
// its own element.
TEST(PassVectorizeCombine, StoresInAnyOrderMerge) {
  expect_vectorized(std::string(kBaseOf4) + R"(
  %3 = const 1.5 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  %6 = const 2 : u32
  %7 = add %2, %6 : u32
  %8 = const 3 : u32
  %9 = add %2, %8 : u32
  store out[%7], %3 : f32
  store out[%2], %3 : f32
  store out[%9], %3 : f32
  store out[%5], %3 : f32
)",
                    10, R"(
  %0 = builtin group_id.x : u32
  %1 = const 2 : u32
  %2 = shl %0, %1 : u32
  %3 = const 1.5 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  %6 = const 2 : u32
  %7 = add %2, %6 : u32
  %8 = const 3 : u32
  %9 = add %2, %8 : u32
  store out[%2], %3, %3, %3, %3 : f32x4
)",
                    10);
}

// An epilogue's row r and columns c0 + e: indices x + y, then x + (y + e), x and y each a
// multiple of 4 (the second, y + (x + 3), with the other order at both adds): one 16-byte store
// at x + y, made where the last store was.
constexpr std::string_view kPairStores = R"(
  %0 = builtin group_id.x : u32
  %1 = const 2 : u32
  %2 = shl %0, %1 : u32
  %3 = builtin thread_id.x : u32
  %4 = shl %3, %1 : u32
  %5 = const 1.5 : f32
  %6 = add %2, %4 : u32
  store out[%6], %5 : f32
  %7 = const 1 : u32
  %8 = add %4, %7 : u32
  %9 = add %2, %8 : u32
  store out[%9], %5 : f32
  %10 = add %4, %1 : u32
  %11 = add %2, %10 : u32
  store out[%11], %5 : f32
  %12 = const 3 : u32
  %13 = add %12, %2 : u32
  %14 = add %4, %13 : u32
  store out[%14], %5 : f32
)";

TEST(PassVectorizeCombine, AnIndexThatIsASumOfTwoAlignedValuesMerges) {
  expect_vectorized(kPairStores, 15, R"(
  %0 = builtin group_id.x : u32
  %1 = const 2 : u32
  %2 = shl %0, %1 : u32
  %3 = builtin thread_id.x : u32
  %4 = shl %3, %1 : u32
  %5 = const 1.5 : f32
  %6 = add %2, %4 : u32
  %7 = const 1 : u32
  %8 = add %4, %7 : u32
  %9 = add %2, %8 : u32
  %10 = add %4, %1 : u32
  %11 = add %2, %10 : u32
  %12 = const 3 : u32
  %13 = add %12, %2 : u32
  %14 = add %4, %13 : u32
  %15 = add %2, %4 : u32
  store out[%15], %5, %5, %5, %5 : f32x4
)",
                    16);
}

// The same with one of the two values not known to be a multiple of 4: left alone.
TEST(PassVectorizeCombine, ASumWithAnUnalignedTermStaysScalar) {
  std::string body(kPairStores);
  body.replace(body.find("%4 = shl %3, %1 : u32"), 21, "%4 = add %3, %1 : u32");
  expect_unchanged(body, 15);
}

// Shared memory as tensors: four f32 reads of a run at a multiple of 4 become one 16-byte read.
TEST(PassVectorizeCombine, SharedReadsOfARunMergeInto16Bytes) {
  expect_vectorized(std::string(kBaseOf4) + R"(
  %3 = shared.load @s[%2] : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  %6 = shared.load @s[%5] : f32
  %7 = const 2 : u32
  %8 = add %2, %7 : u32
  %9 = shared.load @s[%8] : f32
  %10 = const 3 : u32
  %11 = add %2, %10 : u32
  %12 = shared.load @s[%11] : f32
  %13 = add %3, %6 : f32
  %14 = add %9, %12 : f32
  %15 = add %13, %14 : f32
  store out[%0], %15 : f32
)",
                    16, std::string(kBaseOf4) + R"(
  %16 = shared.load @s[%2] : f32x4
  %3 = extract %16, 0 : f32
  %6 = extract %16, 1 : f32
  %9 = extract %16, 2 : f32
  %12 = extract %16, 3 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  %7 = const 2 : u32
  %8 = add %2, %7 : u32
  %10 = const 3 : u32
  %11 = add %2, %10 : u32
  %13 = add %3, %6 : f32
  %14 = add %9, %12 : f32
  %15 = add %13, %14 : f32
  store out[%0], %15 : f32
)",
                    17);
}

// A tensor store between shared reads writes no shared memory: the reads still merge (a staged
// epilogue stores each sum to out as it reads the next).
TEST(PassVectorizeCombine, TensorStoresBetweenSharedReadsLeaveThemMergeable) {
  expect_vectorized(std::string(kBaseOf4) + R"(
  %3 = shared.load @s[%2] : f32
  store out[%0], %3 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  %6 = shared.load @s[%5] : f32
  store out[%5], %6 : f32
)",
                    7, std::string(kBaseOf4) + R"(
  %7 = shared.load @s[%2] : f32x2
  %3 = extract %7, 0 : f32
  %6 = extract %7, 1 : f32
  store out[%0], %3 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  store out[%5], %6 : f32
)",
                    8);
}

// What could observe the move, or an alignment that is not known, leaves the accesses alone.
TEST(PassVectorizeCombine, LeavesAccessesThatCannotMoveAlone) {
  const struct {
    std::string_view why;
    std::string body;
    int values;
  } cases[] = {
      {"a base not known to be aligned",
       [] {
         int next = 0;
         return "  %0 = builtin group_id.x : u32\n" + chunk_copy(0, 1, 4, "x", "out", "f32", next);
       }(),
       11},
      {"a store to the loaded tensor between the loads", std::string(kBaseOf4) + R"(
  %3 = load out[%2] : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  store out[%0], %3 : f32
  %6 = load out[%5] : f32
  %7 = add %3, %6 : f32
  store outu[%0], %0 : u32
  store out[%5], %7 : f32
)",
       8},
      {"a load of the stored tensor between the stores", std::string(kBaseOf4) + R"(
  %3 = const 1.5 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  store out[%2], %3 : f32
  %6 = load out[%0] : f32
  store out[%5], %6 : f32
)",
       7},
      {"a store at another base between the stores", std::string(kBaseOf4) + R"(
  %3 = const 1.5 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  store out[%2], %3 : f32
  store out[%0], %3 : f32
  store out[%5], %3 : f32
)",
       6},
      {"a shared store between shared loads", std::string(kBaseOf4) + R"(
  %3 = shared.load @s[%2] : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  shared.store @s[%0], %3 : f32
  %6 = shared.load @s[%5] : f32
  %7 = add %3, %6 : f32
  store out[%0], %7 : f32
)",
       8},
      {"a shared load between shared stores", std::string(kBaseOf4) + R"(
  %3 = const 1.5 : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  shared.store @s[%2], %3 : f32
  %6 = shared.load @s[%0] : f32
  shared.store @s[%5], %6 : f32
  store out[%0], %6 : f32
)",
       7},
      {"a branch between the loads", std::string(kBaseOf4) + R"(
  %3 = load x[%2] : f32
  %4 = const 1 : u32
  %5 = add %2, %4 : u32
  %6 = const 1 : bool
  if %6 {
    store outu[%0], %0 : u32
  }
  %7 = load x[%5] : f32
  %8 = add %3, %7 : f32
  store out[%0], %8 : f32
)",
       9},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.why);
    expect_unchanged(c.body, c.values);
  }
}

}  // namespace
}  // namespace iron::vectorize_test
