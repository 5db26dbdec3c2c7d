/// eliminate_dead_code: unused values without effects, unread vars with their stores, and
/// emptied loops and branches go; stores, atomics, barriers and used values stay.
#include "iron/codegen/passes/eliminate_dead_code.hpp"

#include <gtest/gtest.h>

#include <string_view>

#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::eliminate_dead_code;

TEST(PassEliminateDeadCode, UnusedChainsAndLoadsGo) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = exp %1 : f32
  %3 = mul %2, %2 : f32
  %4 = load xi[%0] : i32
  %5 = shared.load @s[%0] : f32
  %6 = const 2 : f32
  %7 = mul %1, %6 : f32
  store out[%0], %7 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %6 = const 2 : f32
  %7 = mul %1, %6 : f32
  store out[%0], %7 : f32
)";
  expect_pass(eliminate_dead_code, kBefore, 8, kAfter, 8);
}

TEST(PassEliminateDeadCode, UnreadVarsGoWithTheirStoresAndTheirValues) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : f32
  %2 = var %1 : f32
  %3 = var %1 : f32
  %4 = constexpr n : u32
  %5 = const 1 : u32
  for %6 = %0 to %4 step %5 : u32 {
    %7 = load x[%6] : f32
    %8 = var.load %2 : f32
    %9 = add %8, %7 : f32
    var.store %2, %9 : f32
    %10 = var.load %3 : f32
    %11 = max %10, %7 : f32
    var.store %3, %11 : f32
  }
  %12 = var.load %3 : f32
  store out[%0], %12 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : f32
  %3 = var %1 : f32
  %4 = constexpr n : u32
  %5 = const 1 : u32
  for %6 = %0 to %4 step %5 : u32 {
    %7 = load x[%6] : f32
    %10 = var.load %3 : f32
    %11 = max %10, %7 : f32
    var.store %3, %11 : f32
  }
  %12 = var.load %3 : f32
  store out[%0], %12 : f32
)";
  expect_pass(eliminate_dead_code, kBefore, 13, kAfter, 13);
}

TEST(PassEliminateDeadCode, EmptiedLoopsAndBranchesGoHeaderAndAll) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = constexpr n : u32
  %2 = const 1 : u32
  %3 = const 0 : f32
  %4 = var %3 : f32
  for %5 = %0 to %1 step %2 : u32 {
    %6 = load x[%5] : f32
    %7 = var.load %4 : f32
    %8 = add %7, %6 : f32
    var.store %4, %8 : f32
    for %9 = %0 to %5 step %2 : u32 {
      %10 = mul %9, %9 : u32
    }
  }
  %11 = load x[%0] : f32
  %12 = gt %11, %3 : bool
  if %12 {
    %13 = sqrt %11 : f32
  } else {
    %14 = neg %11 : f32
  }
  store out[%0], %3 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %3 = const 0 : f32
  store out[%0], %3 : f32
)";
  expect_pass(eliminate_dead_code, kBefore, 15, kAfter, 15);
}

TEST(PassEliminateDeadCode, EffectsAndUsedValuesStay) {
  constexpr std::string_view kIr = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = atomic.add out[%0], %1 : f32
  %3 = load xi[%0] : i32
  atomic.max outi[%0], %3 : i32
  shared.store @s[%0], %1 : f32
  barrier
  %4 = shared.load @s[%0] : f32
  %5 = reduce.sum %4 : f32
  %6 = const 0 : f32
  %7 = gt %5, %6 : bool
  if %7 {
    store out[%0], %5 : f32
  }
  %8 = constexpr n : u32
  %9 = const 1 : u32
  for %10 = %0 to %8 step %9 : u32 {
    barrier
  }
)";
  expect_unchanged(eliminate_dead_code, kIr, 11);
}

TEST(PassEliminateDeadCode, UnusedCollectivesGo) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = simd.sum %1 : f32
  %3 = reduce.max %1 : f32
  %4 = builtin lane : u32
  %5 = simd.shuffle_xor %1, %4 : f32
  %6 = reduce.sum %1 : f32
  store out[%0], %6 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %6 = reduce.sum %1 : f32
  store out[%0], %6 : f32
)";
  expect_pass(eliminate_dead_code, kBefore, 7, kAfter, 7);
}

TEST(PassEliminateDeadCode, UnreadRowValuesGoFragmentTransformsStay) {
  // frag.rowvalue only reads; frag.rowreduce and frag.convert write fragments, which count as
  // memory, so they stay like frag.load does.
  constexpr std::string_view kBefore = R"(
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 16 : f32
  %2 = frag %0, acc, 16, 8 : f32
  %3 = frag %0, a, 16, 16 : f32
  frag.rowreduce %2, %1, sum : f32
  frag.convert %3, %1 : f32
  %4 = frag.rowvalue %1, %2, 5 : f32
  %5 = const 0 : u32
  store out[%5], %0 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 16 : f32
  %2 = frag %0, acc, 16, 8 : f32
  %3 = frag %0, a, 16, 16 : f32
  frag.rowreduce %2, %1, sum : f32
  frag.convert %3, %1 : f32
  %5 = const 0 : u32
  store out[%5], %0 : f32
)";
  expect_pass(eliminate_dead_code, kBefore, 6, kAfter, 6);
}

}  // namespace
}  // namespace iron::pass_test
