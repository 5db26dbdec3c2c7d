/// eliminate_common_subexpressions: equal pure ops reuse a value visible at their position;
/// memory reads merge only without a possible write in between; collectives, atomics and vars
/// never merge.
#include "iron/codegen/passes/eliminate_common_subexpressions.hpp"

#include <gtest/gtest.h>

#include <string_view>

#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::eliminate_common_subexpressions;

TEST(PassEliminateCommonSubexpressions, EqualPureOpsInTheSameOrAnEnclosingBlockMerge) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = builtin global_id.x : u32
  %2 = const 4 : u32
  %3 = const 4 : u32
  %4 = mul %0, %2 : u32
  %5 = mul %1, %3 : u32
  %6 = add %4, %5 : u32
  %7 = constexpr n : u32
  for %8 = %0 to %7 step %2 : u32 {
    %9 = mul %1, %2 : u32
    %10 = add %9, %8 : u32
    %11 = add %9, %8 : u32
    %12 = mul %10, %11 : u32
    store outu[%12], %6 : u32
  }
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %2 = const 4 : u32
  %4 = mul %0, %2 : u32
  %6 = add %4, %4 : u32
  %7 = constexpr n : u32
  for %8 = %0 to %7 step %2 : u32 {
    %10 = add %4, %8 : u32
    %12 = mul %10, %10 : u32
    store outu[%12], %6 : u32
  }
)";
  expect_pass(eliminate_common_subexpressions, kBefore, 13, kAfter, 13);
}

TEST(PassEliminateCommonSubexpressions, ValuesOfSiblingOrClosedBlocksAreNotReused) {
  constexpr std::string_view kIr = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 0 : f32
  %3 = gt %1, %2 : bool
  if %3 {
    %4 = mul %1, %1 : f32
    store out[%0], %4 : f32
  } else {
    %5 = mul %1, %1 : f32
    store out[%0], %5 : f32
  }
  %6 = mul %1, %1 : f32
  store out[%0], %6 : f32
)";
  expect_unchanged(eliminate_common_subexpressions, kIr, 7);
}

TEST(PassEliminateCommonSubexpressions, ConstantsMergeByValueAndType) {
  // -0.0 and 0.0 differ; 0 as f32 and as u32 differ; 300 and 44 are the same u8.
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : f32
  %2 = const -0 : f32
  %3 = const 0 : f32
  %4 = add %1, %2 : f32
  %5 = add %4, %3 : f32
  store out[%0], %5 : f32
  %6 = const 300 : u8
  %7 = const 44 : u8
  %8 = add %6, %7 : u8
  %9 = cast %8 : u32
  %10 = const 0 : u32
  %11 = add %9, %10 : u32
  store outu[%0], %11 : u32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : f32
  %2 = const -0 : f32
  %4 = add %1, %2 : f32
  %5 = add %4, %1 : f32
  store out[%0], %5 : f32
  %6 = const 300 : u8
  %8 = add %6, %6 : u8
  %9 = cast %8 : u32
  %10 = const 0 : u32
  %11 = add %9, %10 : u32
  store outu[%0], %11 : u32
)";
  expect_pass(eliminate_common_subexpressions, kBefore, 12, kAfter, 12);
}

TEST(PassEliminateCommonSubexpressions, LoadsMergeWithoutAWriteInBetween) {
  // In the loop body, the load repeated in the branch reuses the one before it. The loop stores,
  // so no load from before it is reused inside; a store or an atomic separates the rest.
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 0 : u32
  %3 = constexpr n : u32
  %4 = const 1 : u32
  for %5 = %2 to %3 step %4 : u32 {
    %6 = load x[%0] : f32
    %7 = load x[%5] : f32
    %8 = add %6, %7 : f32
    %9 = const 0 : f32
    %10 = gt %8, %9 : bool
    if %10 {
      %11 = load x[%0] : f32
      %12 = add %11, %8 : f32
      store out[%5], %12 : f32
      %13 = load x[%0] : f32
      store out[%0], %13 : f32
    }
  }
  %14 = load x[%0] : f32
  store out[%0], %14 : f32
  %15 = load x[%0] : f32
  %16 = atomic.add out[%0], %15 : f32
  %17 = load x[%0] : f32
  store out[%0], %17 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 0 : u32
  %3 = constexpr n : u32
  %4 = const 1 : u32
  for %5 = %2 to %3 step %4 : u32 {
    %6 = load x[%0] : f32
    %7 = load x[%5] : f32
    %8 = add %6, %7 : f32
    %9 = const 0 : f32
    %10 = gt %8, %9 : bool
    if %10 {
      %12 = add %6, %8 : f32
      store out[%5], %12 : f32
      %13 = load x[%0] : f32
      store out[%0], %13 : f32
    }
  }
  %14 = load x[%0] : f32
  store out[%0], %14 : f32
  %15 = load x[%0] : f32
  %16 = atomic.add out[%0], %15 : f32
  %17 = load x[%0] : f32
  store out[%0], %17 : f32
)";
  expect_pass(eliminate_common_subexpressions, kBefore, 18, kAfter, 18);
}

TEST(PassEliminateCommonSubexpressions, LoadsMergeAcrossControlFlowWithoutWrites) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 0 : f32
  %3 = gt %1, %2 : bool
  if %3 {
    %4 = load x[%0] : f32
    %5 = shared.load @s[%0] : f32
    %6 = add %4, %5 : f32
    store out[%0], %6 : f32
  }
  %7 = shared.load @s[%0] : f32
  barrier
  %8 = shared.load @s[%0] : f32
  %9 = add %7, %8 : f32
  store out[%0], %9 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 0 : f32
  %3 = gt %1, %2 : bool
  if %3 {
    %5 = shared.load @s[%0] : f32
    %6 = add %1, %5 : f32
    store out[%0], %6 : f32
  }
  %7 = shared.load @s[%0] : f32
  barrier
  %8 = shared.load @s[%0] : f32
  %9 = add %7, %8 : f32
  store out[%0], %9 : f32
)";
  expect_pass(eliminate_common_subexpressions, kBefore, 10, kAfter, 10);
}

TEST(PassEliminateCommonSubexpressions, VarLoadsMergeOnlyWithNothingInBetween) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : f32
  %2 = var %1 : f32
  %3 = var %1 : f32
  %4 = var.load %2 : f32
  %5 = var.load %2 : f32
  %6 = add %4, %5 : f32
  var.store %2, %6 : f32
  %7 = var.load %2 : f32
  %8 = gt %7, %1 : bool
  if %8 {
    %9 = var.load %2 : f32
    var.store %3, %9 : f32
  }
  %10 = var.load %2 : f32
  %11 = var.load %3 : f32
  %12 = add %10, %11 : f32
  store out[%0], %12 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : f32
  %2 = var %1 : f32
  %3 = var %1 : f32
  %4 = var.load %2 : f32
  %6 = add %4, %4 : f32
  var.store %2, %6 : f32
  %7 = var.load %2 : f32
  %8 = gt %7, %1 : bool
  if %8 {
    %9 = var.load %2 : f32
    var.store %3, %9 : f32
  }
  %10 = var.load %2 : f32
  %11 = var.load %3 : f32
  %12 = add %10, %11 : f32
  store out[%0], %12 : f32
)";
  expect_pass(eliminate_common_subexpressions, kBefore, 13, kAfter, 13);
}

TEST(PassEliminateCommonSubexpressions, CollectivesAtomicsAndEffectsNeverMerge) {
  constexpr std::string_view kIr = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = simd.sum %1 : f32
  %3 = simd.sum %1 : f32
  %4 = reduce.max %1 : f32
  %5 = reduce.max %1 : f32
  %6 = builtin lane : u32
  %7 = simd.shuffle %1, %6 : f32
  %8 = simd.shuffle %1, %6 : f32
  %9 = add %2, %3 : f32
  %10 = add %4, %5 : f32
  %11 = add %7, %8 : f32
  %12 = add %9, %10 : f32
  %13 = add %12, %11 : f32
  %14 = atomic.add out[%0], %13 : f32
  %15 = atomic.add out[%0], %13 : f32
  %16 = add %14, %15 : f32
  %17 = var %16 : f32
  %18 = var %16 : f32
  %19 = var.load %17 : f32
  %20 = var.load %18 : f32
  %21 = add %19, %20 : f32
  store out[%0], %21 : f32
  store out[%0], %21 : f32
  barrier
  barrier
)";
  expect_unchanged(eliminate_common_subexpressions, kIr, 22);
}

TEST(PassEliminateCommonSubexpressions, FragmentCoordinatesMergeBySlotAndReadsNotAcrossAProduct) {
  // The coordinates of slot 0 merge, slot 1's stays; frag.mma writes the accumulator, so the
  // element read after it is another value.
  constexpr std::string_view kBefore = R"(
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 8 : f32
  %2 = const 0 : u32
  %3 = const 8 : u32
  frag.load x[%2], %1, %3, row : f32
  %4 = frag.coord %1, 0, row : u32
  %5 = frag.coord %1, 1, row : u32
  %6 = frag.coord %1, 0, row : u32
  %7 = frag.get %1, 0 : f32
  %8 = frag %0, a, 16, 16 : f32
  %9 = frag %0, b, 16, 8 : f32
  frag.mma %1, %8, %9 : f32
  %10 = frag.get %1, 0 : f32
  %11 = add %7, %10 : f32
  %12 = add %4, %5 : u32
  %13 = add %12, %6 : u32
  store out[%13], %11 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 8 : f32
  %2 = const 0 : u32
  %3 = const 8 : u32
  frag.load x[%2], %1, %3, row : f32
  %4 = frag.coord %1, 0, row : u32
  %5 = frag.coord %1, 1, row : u32
  %7 = frag.get %1, 0 : f32
  %8 = frag %0, a, 16, 16 : f32
  %9 = frag %0, b, 16, 8 : f32
  frag.mma %1, %8, %9 : f32
  %10 = frag.get %1, 0 : f32
  %11 = add %7, %10 : f32
  %12 = add %4, %5 : u32
  %13 = add %12, %4 : u32
  store out[%13], %11 : f32
)";
  expect_pass(eliminate_common_subexpressions, kBefore, 14, kAfter, 14);
}

TEST(PassEliminateCommonSubexpressions, FragmentRowValuesMergeBySlotAndNotAcrossARowReduce) {
  // frag.rowvalue reads the row vector like frag.get reads a fragment: slot 0's second read
  // merges, slot 1's (the same row, another slot) stays; frag.rowreduce writes the row vector,
  // so the read after it is another value.
  constexpr std::string_view kBefore = R"(
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 16 : f32
  %2 = frag %0, acc, 16, 8 : f32
  %3 = const 0 : u32
  %4 = const 16 : u32
  frag.load x[%3], %1, %4, row : f32
  frag.rowreduce %2, %1, max : f32
  %5 = frag.rowvalue %1, %2, 0 : f32
  %6 = frag.rowvalue %1, %2, 1 : f32
  %7 = frag.rowvalue %1, %2, 0 : f32
  frag.rowreduce %2, %1, sum : f32
  %8 = frag.rowvalue %1, %2, 0 : f32
  %9 = add %5, %6 : f32
  %10 = add %9, %7 : f32
  %11 = add %10, %8 : f32
  store out[%3], %11 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 16 : f32
  %2 = frag %0, acc, 16, 8 : f32
  %3 = const 0 : u32
  %4 = const 16 : u32
  frag.load x[%3], %1, %4, row : f32
  frag.rowreduce %2, %1, max : f32
  %5 = frag.rowvalue %1, %2, 0 : f32
  %6 = frag.rowvalue %1, %2, 1 : f32
  frag.rowreduce %2, %1, sum : f32
  %8 = frag.rowvalue %1, %2, 0 : f32
  %9 = add %5, %6 : f32
  %10 = add %9, %5 : f32
  %11 = add %10, %8 : f32
  store out[%3], %11 : f32
)";
  expect_pass(eliminate_common_subexpressions, kBefore, 12, kAfter, 12);
}

TEST(PassEliminateCommonSubexpressions, FragmentReadsMergeAcrossWritesToOtherMemory) {
  // A fragment is one lane's registers: writes to another fragment, to shared or tensor memory
  // leave it as it was, so slot 0 of %1 is read once; frag.rowvalue reads only its row vector
  // (%2), so writing %1 does not stop its second read merging; frag.set of %1 does stop %1's.
  constexpr std::string_view kBefore = R"(
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 8 : f32
  %2 = frag %0, acc, 16, 8 : f32
  %3 = const 0 : u32
  %4 = const 8 : u32
  frag.load x[%3], %1, %4, row : f32
  frag.rowreduce %2, %1, max : f32
  %5 = frag.get %1, 0 : f32
  frag.set %2, %5, 1 : f32
  %6 = frag.rowvalue %1, %2, 0 : f32
  store out[%3], %5 : f32
  %7 = frag.get %1, 0 : f32
  frag.set %1, %6, 0 : f32
  %8 = frag.rowvalue %1, %2, 0 : f32
  %9 = frag.get %1, 0 : f32
  %10 = add %7, %8 : f32
  %11 = add %10, %9 : f32
  store out[%4], %11 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 8 : f32
  %2 = frag %0, acc, 16, 8 : f32
  %3 = const 0 : u32
  %4 = const 8 : u32
  frag.load x[%3], %1, %4, row : f32
  frag.rowreduce %2, %1, max : f32
  %5 = frag.get %1, 0 : f32
  frag.set %2, %5, 1 : f32
  %6 = frag.rowvalue %1, %2, 0 : f32
  store out[%3], %5 : f32
  frag.set %1, %6, 0 : f32
  %9 = frag.get %1, 0 : f32
  %10 = add %5, %6 : f32
  %11 = add %10, %9 : f32
  store out[%4], %11 : f32
)";
  expect_pass(eliminate_common_subexpressions, kBefore, 12, kAfter, 12);
}

TEST(PassEliminateCommonSubexpressions, AFragmentWrittenInALoopIsReadAnewInAndAfterIt) {
  // The loop writes %1: a read inside it sees an earlier iteration's write and a read after it
  // the last one, so neither merges with the read before the loop.
  constexpr std::string_view kBefore = R"(
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 8 : f32
  %2 = const 0 : u32
  %3 = const 1 : u32
  %4 = constexpr n : u32
  %5 = frag.get %1, 0 : f32
  for %6 = %2 to %4 step %3 : u32 {
    %7 = frag.get %1, 0 : f32
    %8 = add %7, %5 : f32
    frag.set %1, %8, 0 : f32
  }
  %9 = frag.get %1, 0 : f32
  %10 = add %5, %9 : f32
  store out[%2], %10 : f32
)";
  expect_unchanged(eliminate_common_subexpressions, kBefore, 11);
}

}  // namespace
}  // namespace iron::pass_test
