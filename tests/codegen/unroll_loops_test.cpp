/// unroll_loops: small constant loops become renumbered copies of their body with a constant
/// induction value each; long, large or non-constant loops stay; loops that never run go.
#include "iron/codegen/passes/unroll_loops.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::unroll_loops;

TEST(PassUnrollLoops, ConstantLoopBecomesOneCopyPerTrip) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 7 : u32
  %3 = const 3 : u32
  for %4 = %1 to %2 step %3 : u32 {
    %5 = add %0, %4 : u32
    %6 = load x[%5] : f32
    store out[%5], %6 : f32
  }
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 7 : u32
  %3 = const 3 : u32
  %7 = const 0 : u32
  %8 = add %0, %7 : u32
  %9 = load x[%8] : f32
  store out[%8], %9 : f32
  %10 = const 3 : u32
  %11 = add %0, %10 : u32
  %12 = load x[%11] : f32
  store out[%11], %12 : f32
  %13 = const 6 : u32
  %14 = add %0, %13 : u32
  %15 = load x[%14] : f32
  store out[%14], %15 : f32
)";
  expect_pass(unroll_loops, kBefore, 7, kAfter, 16);
}

TEST(PassUnrollLoops, NestedLoopsUnrollInsideOutAndThroughTheInductionValue) {
  // The inner loop runs to the outer induction value: constant once the outer loop is unrolled.
  // Trips -2 and 0 of a signed loop; barriers in a uniform loop are copied like anything else.
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const -2 : i32
  %2 = const 2 : i32
  %3 = const 0 : i32
  for %4 = %1 to %2 step %2 : i32 {
    barrier
    for %5 = %1 to %4 step %2 : i32 {
      store outi[%0], %5 : i32
    }
  }
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const -2 : i32
  %2 = const 2 : i32
  %3 = const 0 : i32
  %6 = const -2 : i32
  barrier
  %8 = const 0 : i32
  barrier
  %10 = const -2 : i32
  store outi[%0], %10 : i32
)";
  expect_pass(unroll_loops, kBefore, 6, kAfter, 11);
}

TEST(PassUnrollLoops, LoopsThatNeverRunGo) {
  // The outer loop is not constant, but is left with nothing once its inner loop goes.
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 5 : u32
  %2 = const 5 : u32
  %3 = constexpr n : u32
  for %4 = %1 to %2 step %3 : u32 {
    store outu[%4], %0 : u32
  }
  for %5 = %0 to %3 step %3 : u32 {
    for %6 = %2 to %1 step %3 : u32 {
      store outu[%6], %5 : u32
    }
  }
  store outu[%0], %0 : u32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 5 : u32
  %2 = const 5 : u32
  %3 = constexpr n : u32
  store outu[%0], %0 : u32
)";
  expect_pass(unroll_loops, kBefore, 7, kAfter, 7);
}

TEST(PassUnrollLoops, LongOrNonConstantLoopsStay) {
  // 9 trips; a bound from a constexpr; a step from a constexpr; a zero step; a u8 counter that
  // wraps from 253 to 0 and so runs far more than 8 times.
  constexpr std::string_view kIr = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 9 : u32
  %3 = const 1 : u32
  %4 = constexpr n : u32
  for %5 = %1 to %2 step %3 : u32 {
    store outu[%5], %0 : u32
  }
  for %6 = %1 to %4 step %3 : u32 {
    store outu[%6], %0 : u32
  }
  for %7 = %1 to %2 step %4 : u32 {
    store outu[%7], %0 : u32
  }
  for %8 = %1 to %2 step %1 : u32 {
    store outu[%8], %0 : u32
  }
  %9 = const 250 : u8
  %10 = const 255 : u8
  %11 = const 3 : u8
  for %12 = %9 to %10 step %11 : u8 {
    %13 = cast %12 : u32
    store outu[%13], %0 : u32
  }
)";
  expect_unchanged(unroll_loops, kIr, 14);
}

// A loop asked to stay rolled (dsl::rolled_range) stays, its constant bounds notwithstanding.
TEST(PassUnrollLoops, RolledLoopsStay) {
  expect_unchanged(unroll_loops, R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 4 : u32
  %3 = const 1 : u32
  for %4 = %1 to %2 step %3 rolled : u32 {
    %5 = add %0, %4 : u32
    %6 = load x[%5] : f32
    store out[%5], %6 : f32
  }
)",
                   7);
}

TEST(PassUnrollLoops, BodiesTooLargeOnceUnrolledStay) {
  // 8 trips of a 33-op body would be 264 ops, over the 256 limit; 32 ops would be 256.
  std::string body = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 8 : u32
  %3 = const 1 : u32
  for %4 = %1 to %2 step %3 : u32 {
    %5 = add %0, %4 : u32
)";
  for (int v = 6; v < 37; ++v) {
    body += "    %" + std::to_string(v) + " = add %" + std::to_string(v - 1) + ", %4 : u32\n";
  }
  body += "    store outu[%36], %0 : u32\n  }\n";
  expect_unchanged(unroll_loops, body, 37);
}

TEST(PassUnrollLoops, CollectivesInNestedLoopsKeepTheLoopRolled) {
  constexpr std::string_view kIr = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 2 : u32
  %3 = const 1 : u32
  %4 = constexpr n : u32
  for %5 = %1 to %2 step %3 : u32 {
    for %6 = %1 to %4 step %3 : u32 {
      %7 = load x[%6] : f32
      %8 = simd.sum %7 : f32
      store out[%5], %8 : f32
    }
  }
)";
  expect_unchanged(unroll_loops, kIr, 9);
}

}  // namespace
}  // namespace iron::pass_test
