/// simplify: exact algebraic identities and unsigned power-of-two strength reduction; float
/// rewrites that would change -0.0, NaN or infinities never happen.
#include "iron/codegen/passes/simplify.hpp"

#include <gtest/gtest.h>

#include <string_view>

#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::simplify;

TEST(PassSimplify, IntegerIdentities) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = load xi[%0] : i32
  %2 = const 0 : i32
  %3 = const 1 : i32
  %4 = add %1, %2 : i32
  %5 = add %2, %4 : i32
  %6 = sub %5, %2 : i32
  %7 = mul %6, %3 : i32
  %8 = mul %3, %7 : i32
  %9 = div %8, %3 : i32
  store outi[%0], %9 : i32
  %10 = mul %1, %2 : i32
  store outi[%0], %10 : i32
  %11 = sub %1, %1 : i32
  store outi[%0], %11 : i32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = load xi[%0] : i32
  %2 = const 0 : i32
  %3 = const 1 : i32
  store outi[%0], %1 : i32
  %10 = const 0 : i32
  store outi[%0], %10 : i32
  %11 = const 0 : i32
  store outi[%0], %11 : i32
)";
  expect_pass(simplify, kBefore, 12, kAfter, 12);
}

TEST(PassSimplify, BooleanIdentities) {
  // x && true and x || false give x back; x && false and x || true are fold_constants' business
  // only when both sides are constant, so they stay.
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 8 : u32
  %2 = lt %0, %1 : bool
  %3 = const 1 : bool
  %4 = const 0 : bool
  %5 = and %2, %3 : bool
  %6 = or %4, %5 : bool
  %7 = and %6, %4 : bool
  %8 = select %7, %0, %1 : u32
  store outu[%0], %8 : u32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 8 : u32
  %2 = lt %0, %1 : bool
  %3 = const 1 : bool
  %4 = const 0 : bool
  %7 = and %2, %4 : bool
  %8 = select %7, %0, %1 : u32
  store outu[%0], %8 : u32
)";
  expect_pass(simplify, kBefore, 9, kAfter, 9);
}

TEST(PassSimplify, ExactFloatIdentities) {
  // x * 1, x / 1, x - (+0.0), x + (-0.0) and --x give x back for every x, -0.0 and NaN included.
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 1 : f32
  %3 = const 0 : f32
  %4 = const -0 : f32
  %5 = mul %1, %2 : f32
  %6 = div %5, %2 : f32
  %7 = sub %6, %3 : f32
  %8 = add %7, %4 : f32
  %9 = add %4, %8 : f32
  %10 = neg %9 : f32
  %11 = neg %10 : f32
  store out[%0], %11 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 1 : f32
  %3 = const 0 : f32
  %4 = const -0 : f32
  %10 = neg %1 : f32
  store out[%0], %1 : f32
)";
  expect_pass(simplify, kBefore, 12, kAfter, 12);
}

TEST(PassSimplify, InexactFloatRewritesStay) {
  // x + 0.0 turns -0.0 into 0.0; x * 0.0 and x - x are NaN for infinities; x - (-0.0) as well.
  constexpr std::string_view kIr = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 0 : f32
  %3 = const -0 : f32
  %4 = add %1, %2 : f32
  store out[%0], %4 : f32
  %5 = mul %1, %2 : f32
  store out[%0], %5 : f32
  %6 = sub %1, %1 : f32
  store out[%0], %6 : f32
  %7 = sub %1, %3 : f32
  store out[%0], %7 : f32
  %8 = const 2 : f32
  %9 = div %1, %8 : f32
  store out[%0], %9 : f32
)";
  expect_unchanged(simplify, kIr, 10);
}

TEST(PassSimplify, UnsignedPowersOfTwoBecomeShiftsAndMasks) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = load xu[%0] : u32
  %2 = const 8 : u32
  %3 = mul %1, %2 : u32
  %4 = const 16 : u32
  %5 = div %3, %4 : u32
  %6 = const 32 : u32
  %7 = rem %5, %6 : u32
  %8 = mul %2, %7 : u32
  store outu[%0], %8 : u32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = load xu[%0] : u32
  %2 = const 8 : u32
  %9 = const 3 : u32
  %3 = shl %1, %9 : u32
  %4 = const 16 : u32
  %10 = const 4 : u32
  %5 = shr %3, %10 : u32
  %6 = const 32 : u32
  %11 = const 31 : u32
  %7 = and %5, %11 : u32
  %12 = const 3 : u32
  %8 = shl %7, %12 : u32
  store outu[%0], %8 : u32
)";
  expect_pass(simplify, kBefore, 9, kAfter, 13);
}

TEST(PassSimplify, SignedAndNonPowerOfTwoArithmeticStays) {
  // Signed division rounds toward zero, unlike a shift; 6 and 1 are not 2^k with k >= 1.
  constexpr std::string_view kIr = R"(
  %0 = builtin global_id.x : u32
  %1 = load xi[%0] : i32
  %2 = const 4 : i32
  %3 = div %1, %2 : i32
  %4 = rem %3, %2 : i32
  %5 = mul %4, %2 : i32
  store outi[%0], %5 : i32
  %6 = load xu[%0] : u32
  %7 = const 6 : u32
  %8 = mul %6, %7 : u32
  %9 = rem %8, %7 : u32
  store outu[%0], %9 : u32
)";
  expect_unchanged(simplify, kIr, 10);
}

TEST(PassSimplify, CastsNegationsAndSelectsThatChangeNothing) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = load xu[%0] : u32
  %2 = cast %1 : u32
  %3 = bitcast %2 : u32
  %4 = not %3 : u32
  %5 = not %4 : u32
  %6 = load x[%0] : f32
  %7 = const 0 : f32
  %8 = gt %6, %7 : bool
  %9 = select %8, %5, %5 : u32
  store outu[%0], %9 : u32
  %10 = cast %6 : i32
  store outi[%0], %10 : i32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = load xu[%0] : u32
  %4 = not %1 : u32
  %6 = load x[%0] : f32
  %7 = const 0 : f32
  %8 = gt %6, %7 : bool
  store outu[%0], %1 : u32
  %10 = cast %6 : i32
  store outi[%0], %10 : i32
)";
  expect_pass(simplify, kBefore, 11, kAfter, 11);
}

TEST(PassSimplify, RewritesReachNestedBlocks) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = constexpr n : u32
  %3 = const 1 : u32
  for %4 = %1 to %2 step %3 : u32 {
    %5 = add %4, %1 : u32
    %6 = mul %5, %3 : u32
    store outu[%6], %0 : u32
  }
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = constexpr n : u32
  %3 = const 1 : u32
  for %4 = %1 to %2 step %3 : u32 {
    store outu[%4], %0 : u32
  }
)";
  expect_pass(simplify, kBefore, 7, kAfter, 7);
}

}  // namespace
}  // namespace iron::pass_test
