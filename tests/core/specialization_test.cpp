/// Specializations: which a launch can bind, and the values a launch's constexpr arguments give
/// them, computed as the kernel would.
#include "iron/core/specialization.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "iron/core/error.hpp"
#include "iron/core/parser.hpp"

namespace iron::ir {
namespace {

// s0: n % 8 == 0; s1: the thread's index is 0 (not launch-constant); s2: 64 / m > 3 (m = 0 is a
// division by zero); s3: f < exp2(f) (an approximate op, not bindable).
constexpr std::string_view kKernel = R"(kernel t dtype=f32 mode=elementwise
  param out out: f32
  param constexpr n: u32
  param constexpr m: u32
  param constexpr f: f32
  values 22
{
  %0 = constexpr n : u32
  %1 = const 8 : u32
  %2 = rem %0, %1 : u32
  %3 = const 0 : u32
  %4 = eq %2, %3 : bool
  %5 = specialize %4 : bool
  %6 = builtin thread_id.x : u32
  %7 = eq %6, %3 : bool
  %8 = specialize %7 : bool
  %9 = constexpr m : u32
  %10 = const 64 : u32
  %11 = div %10, %9 : u32
  %12 = const 3 : u32
  %13 = gt %11, %12 : bool
  %14 = specialize %13 : bool
  %15 = constexpr f : f32
  %16 = exp2.approx %15 : f32
  %17 = lt %15, %16 : bool
  %18 = specialize %17 : bool
  %19 = and %5, %8 : bool
  %20 = and %14, %18 : bool
  %21 = select %19, %15, %15 : f32
  store out[%6], %21 : f32
}
)";

std::vector<ScalarValue> params(std::uint32_t n, std::uint32_t m) {
  return {{},
          constant_value(DType::U32, 0, n),
          constant_value(DType::U32, 0, m),
          constant_value(DType::F32, 1.5, 0)};
}

TEST(Specialization, OnlyConditionsOfConstantsAndConstexprsAreBindable) {
  const Kernel kernel = parse_kernel(kKernel);
  EXPECT_EQ(bindable_specializations(kernel), (std::vector<ValueId>{5, 14}));
  EXPECT_EQ(usual_specialization(kernel), (std::vector<bool>{true, true}));
  EXPECT_EQ(SpecializationPlan(kernel).size(), 2u);
}

TEST(Specialization, ValuesAreTheConditionsForTheLaunchsArguments) {
  const SpecializationPlan plan(parse_kernel(kKernel));
  EXPECT_EQ(plan.values(params(16, 8)), (std::vector<bool>{true, true}));
  EXPECT_EQ(plan.values(params(12, 8)), (std::vector<bool>{false, true}));
  EXPECT_EQ(plan.values(params(24, 17)), (std::vector<bool>{true, false}));
}

TEST(Specialization, NoValuesWhereAConditionHasNoSingleValue) {
  const SpecializationPlan plan(parse_kernel(kKernel));
  EXPECT_EQ(plan.values(params(16, 0)), std::nullopt) << "64 / 0";
  std::vector<ScalarValue> wrong = params(16, 8);
  wrong[1] = constant_value(DType::F32, 16.0, 0);
  EXPECT_EQ(plan.values(wrong), std::nullopt) << "n given as an f32";
  EXPECT_EQ(plan.values(std::vector<ScalarValue>(2)), std::nullopt) << "too few arguments";
}

TEST(Specialization, KernelsWithoutThemBindNothing) {
  const SpecializationPlan plan(parse_kernel(R"(kernel t dtype=f32 mode=elementwise
  param out out: f32
  values 2
{
  %0 = builtin thread_id.x : u32
  %1 = const 0 : f32
  store out[%0], %1 : f32
}
)"));
  EXPECT_EQ(plan.size(), 0u);
  EXPECT_EQ(plan.values({}), std::vector<bool>{});
}

TEST(Specialization, BitsNumberTheValuesInOrder) {
  EXPECT_EQ(specialization_bits({true, false, true}), 5u);
  EXPECT_EQ(specialization_bits({}), 0u);
}

TEST(Specialization, ValuesForALaunchShapeByName) {
  const Kernel kernel = parse_kernel(kKernel);
  EXPECT_EQ(specialization_for(kernel, {{"n", 16}, {"m", 8}, {"f", 1.5}}),
            (std::vector<bool>{true, true}));
  EXPECT_EQ(specialization_for(kernel, {{"n", 12}, {"m", 32}, {"f", 1.5}}),
            (std::vector<bool>{false, false}));
  EXPECT_EQ(specialization_for(kernel, {{"n", 12}, {"m", 0}, {"f", 1.5}}),
            std::vector<bool>{});  // 64 / 0: the launch binds none
  try {
    specialization_for(kernel, {{"n", 16}, {"f", 1.5}});
    ADD_FAILURE() << "no error for a missing constexpr";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t needs constexpr 'm', which is not given");
  }
}

}  // namespace
}  // namespace iron::ir
