/// fold_constants: pure ops on constants become constants with the simulator's arithmetic;
/// undefined or host-specific results stay; constant branches and empty constant loops go.
#include "iron/codegen/passes/fold_constants.hpp"

#include <gtest/gtest.h>

#include <string_view>

#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::fold_constants;

TEST(PassFoldConstants, ArithmeticChainsBecomeConstants) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 2 : i32
  %2 = const 3 : i32
  %3 = mul %1, %2 : i32
  %4 = sub %3, %1 : i32
  %5 = neg %4 : i32
  store outi[%0], %5 : i32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 2 : i32
  %2 = const 3 : i32
  %3 = const 6 : i32
  %4 = const 4 : i32
  %5 = const -4 : i32
  store outi[%0], %5 : i32
)";
  expect_pass(fold_constants, kBefore, 6, kAfter, 6);
}

TEST(PassFoldConstants, IntegersWrapToTheirWidth) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 2147483647 : i32
  %2 = const 1 : i32
  %3 = add %1, %2 : i32
  store outi[%0], %3 : i32
  %4 = const 0 : u32
  %5 = const 1 : u32
  %6 = sub %4, %5 : u32
  store outu[%0], %6 : u32
  %7 = const 200 : u8
  %8 = const 100 : u8
  %9 = add %7, %8 : u8
  %10 = cast %9 : u32
  store outu[%0], %10 : u32
  %11 = const 100 : i8
  %12 = add %11, %11 : i8
  %13 = cast %12 : i32
  store outi[%0], %13 : i32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 2147483647 : i32
  %2 = const 1 : i32
  %3 = const -2147483648 : i32
  store outi[%0], %3 : i32
  %4 = const 0 : u32
  %5 = const 1 : u32
  %6 = const 4294967295 : u32
  store outu[%0], %6 : u32
  %7 = const 200 : u8
  %8 = const 100 : u8
  %9 = const 44 : u8
  %10 = const 44 : u32
  store outu[%0], %10 : u32
  %11 = const 100 : i8
  %12 = const -56 : i8
  %13 = const -56 : i32
  store outi[%0], %13 : i32
)";
  expect_pass(fold_constants, kBefore, 14, kAfter, 14);
}

TEST(PassFoldConstants, HalfResultsAreRoundedToTheirType) {
  // 2048 + 1 is not an f16 (ties to even gives 2048); 256 + 1 is not a bf16 either.
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 2048 : f16
  %2 = const 1 : f16
  %3 = add %1, %2 : f16
  store outh[%0], %3 : f16
  %4 = const 256 : bf16
  %5 = const 1 : bf16
  %6 = add %4, %5 : bf16
  %7 = cast %6 : f32
  %8 = const 3 : f32
  %9 = div %5, %5 : bf16
  %10 = cast %9 : f32
  %11 = div %10, %8 : f32
  %12 = add %7, %11 : f32
  store out[%0], %12 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 2048 : f16
  %2 = const 1 : f16
  %3 = const 2048 : f16
  store outh[%0], %3 : f16
  %4 = const 256 : bf16
  %5 = const 1 : bf16
  %6 = const 256 : bf16
  %7 = const 256 : f32
  %8 = const 3 : f32
  %9 = const 1 : bf16
  %10 = const 1 : f32
  %11 = const 0.3333333432674408 : f32
  %12 = const 256.3333435058594 : f32
  store out[%0], %12 : f32
)";
  expect_pass(fold_constants, kBefore, 13, kAfter, 13);
}

TEST(PassFoldConstants, ComparisonsGiveBools) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const -1 : i32
  %2 = const 1 : i32
  %3 = lt %1, %2 : bool
  store outb[%0], %3 : bool
  %4 = const 4294967295 : u32
  %5 = const 1 : u32
  %6 = lt %4, %5 : bool
  store outb[%0], %6 : bool
  %7 = const nan : f32
  %8 = eq %7, %7 : bool
  store outb[%0], %8 : bool
  %9 = ne %7, %7 : bool
  %10 = not %9 : bool
  store outb[%0], %10 : bool
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const -1 : i32
  %2 = const 1 : i32
  %3 = const 1 : bool
  store outb[%0], %3 : bool
  %4 = const 4294967295 : u32
  %5 = const 1 : u32
  %6 = const 0 : bool
  store outb[%0], %6 : bool
  %7 = const nan : f32
  %8 = const 0 : bool
  store outb[%0], %8 : bool
  %9 = const 1 : bool
  %10 = const 0 : bool
  store outb[%0], %10 : bool
)";
  expect_pass(fold_constants, kBefore, 11, kAfter, 11);
}

TEST(PassFoldConstants, CastsTruncateAndSaturate) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const -3.75 : f32
  %2 = cast %1 : i32
  store outi[%0], %2 : i32
  %3 = const 1e+10 : f32
  %4 = cast %3 : i32
  store outi[%0], %4 : i32
  %5 = const nan : f32
  %6 = cast %5 : i32
  store outi[%0], %6 : i32
  %7 = cast %1 : u32
  store outu[%0], %7 : u32
  %8 = const -1 : i32
  %9 = cast %8 : u32
  store outu[%0], %9 : u32
  %10 = cast %8 : f16
  store outh[%0], %10 : f16
  %11 = const 1 : f32
  %12 = bitcast %11 : u32
  store outu[%0], %12 : u32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const -3.75 : f32
  %2 = const -3 : i32
  store outi[%0], %2 : i32
  %3 = const 1e+10 : f32
  %4 = const 2147483647 : i32
  store outi[%0], %4 : i32
  %5 = const nan : f32
  %6 = const 0 : i32
  store outi[%0], %6 : i32
  %7 = const 0 : u32
  store outu[%0], %7 : u32
  %8 = const -1 : i32
  %9 = const 4294967295 : u32
  store outu[%0], %9 : u32
  %10 = const -1 : f16
  store outh[%0], %10 : f16
  %11 = const 1 : f32
  %12 = const 1065353216 : u32
  store outu[%0], %12 : u32
)";
  expect_pass(fold_constants, kBefore, 13, kAfter, 13);
}

TEST(PassFoldConstants, UndefinedAndHostSpecificResultsStay) {
  // Division by zero (the simulator reports it), INT_MIN / -1, shifts by the width or of a
  // negative value, NaN results, and anything with a non-constant operand.
  constexpr std::string_view kIr = R"(
  %0 = builtin global_id.x : u32
  %1 = const 7 : i32
  %2 = const 0 : i32
  %3 = div %1, %2 : i32
  store outi[%0], %3 : i32
  %4 = rem %1, %2 : i32
  store outi[%0], %4 : i32
  %5 = const -2147483648 : i32
  %6 = const -1 : i32
  %7 = div %5, %6 : i32
  store outi[%0], %7 : i32
  %8 = const 32 : i32
  %9 = shl %1, %8 : i32
  store outi[%0], %9 : i32
  %10 = const 1 : i32
  %11 = shr %6, %10 : i32
  store outi[%0], %11 : i32
  %12 = const 0 : f32
  %13 = div %12, %12 : f32
  store out[%0], %13 : f32
  %14 = load x[%0] : f32
  %15 = add %14, %12 : f32
  store out[%0], %15 : f32
  %16 = constexpr n : u32
  %17 = cast %16 : i32
  %18 = add %17, %1 : i32
  store outi[%0], %18 : i32
)";
  expect_unchanged(fold_constants, kIr, 19);
}

TEST(PassFoldConstants, ShiftsAndBitsOnDefinedOperands) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 3 : u32
  %2 = const 31 : u32
  %3 = shl %1, %2 : u32
  %4 = shr %3, %2 : u32
  %5 = xor %3, %4 : u32
  %6 = const 4 : i8
  %7 = const 5 : i8
  %8 = shl %6, %7 : i8
  %9 = cast %8 : u32
  %10 = or %5, %9 : u32
  store outu[%0], %10 : u32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 3 : u32
  %2 = const 31 : u32
  %3 = const 2147483648 : u32
  %4 = const 1 : u32
  %5 = const 2147483649 : u32
  %6 = const 4 : i8
  %7 = const 5 : i8
  %8 = const -128 : i8
  %9 = const 4294967168 : u32
  %10 = const 4294967169 : u32
  store outu[%0], %10 : u32
)";
  expect_pass(fold_constants, kBefore, 11, kAfter, 11);
}

TEST(PassFoldConstants, BranchOnConstantKeepsTheTakenSide) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 1 : u32
  %2 = const 2 : u32
  %3 = lt %1, %2 : bool
  if %3 {
    %4 = add %1, %2 : u32
    store outu[%0], %4 : u32
  } else {
    store outu[%0], %1 : u32
  }
  %5 = gt %1, %2 : bool
  if %5 {
    store outu[%0], %2 : u32
  } else {
    %6 = load xu[%0] : u32
    if %3 {
      store outu[%0], %6 : u32
    }
  }
  if %5 {
    store outu[%0], %2 : u32
  }
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 1 : u32
  %2 = const 2 : u32
  %3 = const 1 : bool
  %4 = const 3 : u32
  store outu[%0], %4 : u32
  %5 = const 0 : bool
  %6 = load xu[%0] : u32
  store outu[%0], %6 : u32
)";
  expect_pass(fold_constants, kBefore, 7, kAfter, 7);
}

TEST(PassFoldConstants, SelectOnConstantUsesTheChosenValue) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 0 : bool
  %3 = const 2 : f32
  %4 = select %2, %3, %1 : f32
  %5 = mul %4, %4 : f32
  store out[%0], %5 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 0 : bool
  %3 = const 2 : f32
  %5 = mul %1, %1 : f32
  store out[%0], %5 : f32
)";
  expect_pass(fold_constants, kBefore, 6, kAfter, 6);
}

TEST(PassFoldConstants, LoopsWithAnEmptyConstantRangeGo) {
  // 5 to 2 never runs; as i32, -1 to 0 runs once (kept); a loop left empty goes too.
  constexpr std::string_view kBefore = R"(
  %0 = builtin global_id.x : u32
  %1 = const 5 : u32
  %2 = const 2 : u32
  %3 = constexpr n : u32
  for %4 = %1 to %2 step %3 : u32 {
    store outu[%4], %0 : u32
  }
  %5 = const -1 : i32
  %6 = const 0 : i32
  %7 = const 1 : i32
  for %8 = %5 to %6 step %7 : i32 {
    %9 = add %7, %7 : i32
    store outi[%0], %9 : i32
  }
  %10 = lt %2, %1 : bool
  for %11 = %0 to %3 step %2 : u32 {
    if %10 {
    } else {
      store outu[%11], %0 : u32
    }
  }
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin global_id.x : u32
  %1 = const 5 : u32
  %2 = const 2 : u32
  %3 = constexpr n : u32
  %5 = const -1 : i32
  %6 = const 0 : i32
  %7 = const 1 : i32
  for %8 = %5 to %6 step %7 : i32 {
    %9 = const 2 : i32
    store outi[%0], %9 : i32
  }
  %10 = const 1 : bool
)";
  expect_pass(fold_constants, kBefore, 12, kAfter, 12);
}

}  // namespace
}  // namespace iron::pass_test
