/// legalize: widening of f16/bf16 arithmetic, the bf16 refusal, and no-ops on native targets.
#include "iron/codegen/passes/legalize.hpp"

#include <gtest/gtest.h>

#include <string>

#include "iron/core/error.hpp"
#include "iron/runtime/sim.hpp"
#include "iron/testing/data.hpp"
#include "pass_test_harness.hpp"
#include "test_target_profiles.hpp"

namespace iron::pass_test {
namespace {

using codegen::legalize;

/// Every kind of arithmetic on HALF, plus ops that only move HALF values (select, shuffle).
constexpr std::string_view kHalfMath = R"(kernel halfmath dtype=HALF mode=reduction
  param in inp: HALF
  param out out: HALF
  rule multiple_of 32
  values 13
{
  %0 = builtin global_id.x : u32
  %1 = load inp[%0] : HALF
  %2 = const 0.5 : HALF
  %3 = add %1, %2 : HALF
  %4 = exp %3 : HALF
  %5 = fma %4, %2, %1 : HALF
  %6 = lt %5, %2 : bool
  %7 = select %6, %5, %2 : HALF
  %8 = simd.sum %7 : HALF
  %9 = const 1 : u32
  %10 = simd.shuffle_xor %8, %9 : HALF
  %11 = reduce.max %10 : HALF
  %12 = neg %11 : HALF
  store out[%0], %12 : HALF
}
)";

constexpr std::string_view kHalfMathWidened = R"(kernel halfmath dtype=HALF mode=reduction
  param in inp: HALF
  param out out: HALF
  rule multiple_of 32
  values 30
{
  %0 = builtin global_id.x : u32
  %1 = load inp[%0] : HALF
  %2 = const 0.5 : HALF
  %13 = cast %1 : f32
  %14 = cast %2 : f32
  %15 = add %13, %14 : f32
  %3 = cast %15 : HALF
  %16 = cast %3 : f32
  %17 = exp %16 : f32
  %4 = cast %17 : HALF
  %18 = cast %4 : f32
  %19 = cast %2 : f32
  %20 = cast %1 : f32
  %21 = fma %18, %19, %20 : f32
  %5 = cast %21 : HALF
  %22 = cast %5 : f32
  %23 = cast %2 : f32
  %6 = lt %22, %23 : bool
  %7 = select %6, %5, %2 : HALF
  %24 = cast %7 : f32
  %25 = simd.sum %24 : f32
  %8 = cast %25 : HALF
  %9 = const 1 : u32
  %10 = simd.shuffle_xor %8, %9 : HALF
  %26 = cast %10 : f32
  %27 = reduce.max %26 : f32
  %11 = cast %27 : HALF
  %28 = cast %11 : f32
  %29 = neg %28 : f32
  %12 = cast %29 : HALF
  store out[%0], %12 : HALF
}
)";

/// `text` with HALF replaced by `dtype`.
std::string with_type(std::string_view text, DType dtype) {
  std::string out(text);
  for (std::size_t at = out.find("HALF"); at != std::string::npos; at = out.find("HALF", at)) {
    out.replace(at, 4, dtype_name(dtype));
  }
  return out;
}

std::string unchanged(std::string_view text) { return text_of(ir::parse_kernel(text)); }

codegen::TargetProfile native_only(DType dtype) {
  codegen::TargetProfile t = widening_target();
  t.native_f16_arithmetic = dtype == DType::F16;
  t.native_bf16_arithmetic = dtype == DType::BF16;
  return t;
}

TEST(PassLegalize, WidensF16ArithmeticToF32WhereTheTargetLacksIt) {
  EXPECT_EQ(run_pass(legalize, with_type(kHalfMath, DType::F16), widening_target()),
            with_type(kHalfMathWidened, DType::F16));
}

TEST(PassLegalize, WidensBf16ArithmeticToF32WhereTheTargetLacksIt) {
  EXPECT_EQ(run_pass(legalize, with_type(kHalfMath, DType::BF16), widening_target()),
            with_type(kHalfMathWidened, DType::BF16));
}

TEST(PassLegalize, WidensOnlyTheTypeTheTargetLacks) {
  const std::string f16 = with_type(kHalfMath, DType::F16);
  const std::string bf16 = with_type(kHalfMath, DType::BF16);
  EXPECT_EQ(run_pass(legalize, f16, native_only(DType::F16)), unchanged(f16));
  EXPECT_EQ(run_pass(legalize, bf16, native_only(DType::BF16)), unchanged(bf16));
  EXPECT_EQ(run_pass(legalize, f16, native_only(DType::BF16)),
            with_type(kHalfMathWidened, DType::F16));
  EXPECT_EQ(run_pass(legalize, bf16, native_only(DType::F16)),
            with_type(kHalfMathWidened, DType::BF16));
}

TEST(PassLegalize, ChangesNothingWhereEverythingIsNative) {
  for (const codegen::TargetProfile& target : {native_target(), metal31_target()}) {
    for (DType dtype : {DType::F16, DType::BF16}) {
      const std::string text = with_type(kHalfMath, dtype);
      EXPECT_EQ(run_pass(legalize, text, target), unchanged(text))
          << target.name << " " << dtype_name(dtype);
    }
  }
}

TEST(PassLegalize, LeavesF32ArithmeticAlone) {
  const std::string text = with_type(kHalfMath, DType::F32);
  EXPECT_EQ(run_pass(legalize, text, widening_target()), unchanged(text));
}

TEST(PassLegalize, Metal30AcceptsF16) {
  const std::string text = with_type(kHalfMath, DType::F16);
  EXPECT_EQ(run_pass(legalize, text, metal30_target()), unchanged(text));
}

/// The message legalize refuses `text` with on Metal 3.0; "" when it accepts it.
std::string refusal(std::string_view text) {
  ir::Kernel kernel = ir::parse_kernel(text);
  try {
    legalize(kernel, metal30_target());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(PassLegalize, Metal30RefusesABf16Parameter) {
  EXPECT_EQ(refusal(with_type(kHalfMath, DType::BF16)),
            "kernel halfmath: target metal3.0 has no bfloat type, but the kernel uses bf16 "
            "(parameter 'inp'); build it for metal3.1 or later, or use f16");
}

TEST(PassLegalize, Metal30RefusesBf16SharedMemoryAndBf16Values) {
  const std::string shared = R"(kernel staged dtype=f32 mode=reduction
  param out out: f32
  shared tile: bf16[32]
  rule multiple_of 32
  values 2
{
  %0 = builtin thread_id.x : u32
  %1 = const 1 : f32
  store out[%0], %1 : f32
}
)";
  EXPECT_EQ(refusal(shared),
            "kernel staged: target metal3.0 has no bfloat type, but the kernel uses bf16 (shared "
            "allocation @tile); build it for metal3.1 or later, or use f16");
  const std::string value = R"(kernel rounding dtype=f32 mode=elementwise
  param out out: f32
  values 4
{
  %0 = builtin global_id.x : u32
  %1 = const 1 : f32
  %2 = cast %1 : bf16  ; kernels/x.cpp:7
  %3 = cast %2 : f32
  store out[%0], %3 : f32
}
)";
  EXPECT_EQ(refusal(value),
            "kernel rounding: target metal3.0 has no bfloat type, but the kernel uses bf16 (cast "
            "at kernels/x.cpp:7); build it for metal3.1 or later, or use f16");
}

TEST(PassLegalize, WidenedKernelGivesTheSameBitsOnTheSimulator) {
  for (DType dtype : {DType::F16, DType::BF16}) {
    const std::string text = with_type(kHalfMath, dtype);
    const ir::Kernel before = ir::parse_kernel(text);
    const ir::Kernel after = apply(legalize, text, widening_target());
    testing::Rng rng(11);
    runtime::HostTensor x = testing::pack(rng.uniform(128, -3.0f, 3.0f), dtype);
    runtime::HostTensor want = testing::pack(std::vector<float>(128), dtype);
    runtime::HostTensor got = want;
    const runtime::Grid grid{{2, 1, 1}, {64, 1, 1}};
    runtime::sim_run({&before, {&x, &want}, grid});
    runtime::sim_run({&after, {&x, &got}, grid});
    EXPECT_EQ(got.bytes, want.bytes) << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace iron::pass_test
