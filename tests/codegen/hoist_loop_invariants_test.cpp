/// hoist_loop_invariants: pure ops that do not depend on the loop move in front of it, in order
/// and through several loops; reads, collectives, branch contents and faulting divisions stay.
#include "iron/codegen/passes/hoist_loop_invariants.hpp"

#include <gtest/gtest.h>

#include <string_view>

#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::hoist_loop_invariants;

TEST(PassHoistLoopInvariants, InvariantsMoveBeforeTheLoopInOrder) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = constexpr n : u32
  %2 = const 1 : u32
  %3 = load x[%0] : f32
  for %4 = %0 to %1 step %2 : u32 {
    %5 = const 2 : f32
    %6 = mul %3, %5 : f32
    %7 = load x[%4] : f32
    %8 = add %7, %6 : f32
    %9 = exp %6 : f32
    %10 = mul %8, %9 : f32
    store out[%4], %10 : f32
  }
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = constexpr n : u32
  %2 = const 1 : u32
  %3 = load x[%0] : f32
  %5 = const 2 : f32
  %6 = mul %3, %5 : f32
  %9 = exp %6 : f32
  for %4 = %0 to %1 step %2 : u32 {
    %7 = load x[%4] : f32
    %8 = add %7, %6 : f32
    %10 = mul %8, %9 : f32
    store out[%4], %10 : f32
  }
)";
  expect_pass(hoist_loop_invariants, kBefore, 11, kAfter, 11);
}

TEST(PassHoistLoopInvariants, InvariantsClimbAsFarAsTheirOperandsAllow) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = constexpr n : u32
  %2 = const 1 : u32
  for %3 = %0 to %1 step %2 : u32 {
    for %4 = %0 to %1 step %2 : u32 {
      %5 = mul %1, %1 : u32
      %6 = mul %3, %5 : u32
      %7 = add %6, %4 : u32
      store outu[%7], %5 : u32
    }
  }
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = constexpr n : u32
  %2 = const 1 : u32
  %5 = mul %1, %1 : u32
  for %3 = %0 to %1 step %2 : u32 {
    %6 = mul %3, %5 : u32
    for %4 = %0 to %1 step %2 : u32 {
      %7 = add %6, %4 : u32
      store outu[%7], %5 : u32
    }
  }
)";
  expect_pass(hoist_loop_invariants, kBefore, 8, kAfter, 8);
}

TEST(PassHoistLoopInvariants, ReadsCollectivesAndBranchContentsStay) {
  constexpr std::string_view kIr = R"(
  %0 = builtin global_id.x : u32
  %1 = constexpr n : u32
  %2 = const 1 : u32
  %3 = const 0 : f32
  %4 = var %3 : f32
  %5 = load x[%0] : f32
  for %6 = %0 to %1 step %2 : u32 {
    %7 = load x[%0] : f32
    %8 = shared.load @s[%0] : f32
    %9 = var.load %4 : f32
    %10 = simd.sum %5 : f32
    %11 = add %7, %8 : f32
    %12 = add %9, %10 : f32
    %13 = add %11, %12 : f32
    var.store %4, %13 : f32
    %14 = gt %6, %0 : bool
    if %14 {
      %15 = mul %5, %5 : f32
      store out[%6], %15 : f32
    }
  }
  %16 = var.load %4 : f32
  store out[%0], %16 : f32
)";
  expect_unchanged(hoist_loop_invariants, kIr, 17);
}

TEST(PassHoistLoopInvariants, IntegerDivisionMovesOnlyByANonZeroConstant) {
  // With n == 0 the loop never runs; `div %0, %1` before it would divide by zero.
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = constexpr n : u32
  %2 = const 1 : u32
  %3 = const 3 : u32
  for %4 = %0 to %1 step %2 : u32 {
    %5 = div %0, %1 : u32
    %6 = rem %0, %3 : u32
    %7 = add %5, %6 : u32
    store outu[%4], %7 : u32
  }
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = constexpr n : u32
  %2 = const 1 : u32
  %3 = const 3 : u32
  %6 = rem %0, %3 : u32
  for %4 = %0 to %1 step %2 : u32 {
    %5 = div %0, %1 : u32
    %7 = add %5, %6 : u32
    store outu[%4], %7 : u32
  }
)";
  expect_pass(hoist_loop_invariants, kBefore, 8, kAfter, 8);
}

}  // namespace
}  // namespace iron::pass_test
