/// convert_ifs: small pure branches become selects; branches with effects or long arms stay.
#include "iron/codegen/passes/convert_ifs.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "iron/runtime/sim.hpp"
#include "iron/testing/data.hpp"
#include "pass_test_harness.hpp"
#include "test_target_profiles.hpp"

namespace iron::pass_test {
namespace {

using codegen::convert_ifs;

/// A kernel around `branch` (an if and what it becomes) that may use x = %1, the constants 0.0
/// and 1.0 (%2, %3), the variables %4 and %5 and the condition x > 0 (%6); values %90 to %92
/// come after it. The mode and rule allow collectives.
std::string kernel_with(std::string_view branch, int values) {
  return std::string(R"(kernel branchy dtype=f32 mode=reduction
  param in inp: f32
  param out out: f32
  rule multiple_of 32
  values )") +
         std::to_string(values) + R"(
{
  %0 = builtin global_id.x : u32
  %1 = load inp[%0] : f32
  %2 = const 0 : f32
  %3 = const 1 : f32
  %4 = var %2 : f32
  %5 = var %3 : f32
  %6 = gt %1, %2 : bool
)" + std::string(branch) +
         R"(  %90 = var.load %4 : f32
  %91 = var.load %5 : f32
  %92 = add %90, %91 : f32
  store out[%0], %92 : f32
}
)";
}

TEST(PassConvertIfs, BothArmsAssigningAVariableBecomeOneSelect) {
  constexpr std::string_view kBranch = R"(  if %6 {
    %7 = mul %1, %1 : f32
    var.store %4, %7 : f32
  } else {
    %8 = neg %1 : f32
    var.store %4, %8 : f32
  }
)";
  constexpr std::string_view kSelects = R"(  %7 = mul %1, %1 : f32
  %8 = neg %1 : f32
  %93 = select %6, %7, %8 : f32
  var.store %4, %93 : f32
)";
  EXPECT_EQ(run_pass(convert_ifs, kernel_with(kBranch, 93)), kernel_with(kSelects, 94));
}

TEST(PassConvertIfs, AnArmThatDoesNotAssignKeepsTheValueBeforeTheBranch) {
  constexpr std::string_view kBranch = R"(  if %6 {
    %7 = mul %1, %1 : f32
    var.store %4, %7 : f32
  }
)";
  constexpr std::string_view kSelects = R"(  %7 = mul %1, %1 : f32
  %93 = var.load %4 : f32
  %94 = select %6, %7, %93 : f32
  var.store %4, %94 : f32
)";
  EXPECT_EQ(run_pass(convert_ifs, kernel_with(kBranch, 93)), kernel_with(kSelects, 95));
}

TEST(PassConvertIfs, EachArmAssigningADifferentVariable) {
  constexpr std::string_view kBranch = R"(  if %6 {
    var.store %5, %1 : f32
  } else {
    %7 = var.load %4 : f32
    %8 = sub %7, %1 : f32
    var.store %4, %8 : f32
  }
)";
  constexpr std::string_view kSelects = R"(  %7 = var.load %4 : f32
  %8 = sub %7, %1 : f32
  %93 = var.load %5 : f32
  %94 = select %6, %1, %93 : f32
  var.store %5, %94 : f32
  %95 = var.load %4 : f32
  %96 = select %6, %95, %8 : f32
  var.store %4, %96 : f32
)";
  EXPECT_EQ(run_pass(convert_ifs, kernel_with(kBranch, 93)), kernel_with(kSelects, 97));
}

TEST(PassConvertIfs, ReadsAfterAStoreInTheArmSeeTheStoredValue) {
  constexpr std::string_view kBranch = R"(  if %6 {
    %7 = add %1, %3 : f32
    var.store %4, %7 : f32
    %8 = var.load %4 : f32
    %9 = mul %8, %8 : f32
    var.store %4, %9 : f32
    %10 = var.load %4 : f32
    var.store %5, %10 : f32
  } else {
    var.store %4, %2 : f32
  }
)";
  constexpr std::string_view kSelects = R"(  %7 = add %1, %3 : f32
  %9 = mul %7, %7 : f32
  %93 = select %6, %9, %2 : f32
  var.store %4, %93 : f32
  %94 = var.load %5 : f32
  %95 = select %6, %9, %94 : f32
  var.store %5, %95 : f32
)";
  EXPECT_EQ(run_pass(convert_ifs, kernel_with(kBranch, 93)), kernel_with(kSelects, 96));
}

TEST(PassConvertIfs, InnerBranchesConvertFirstSoTheOuterOneConvertsToo) {
  constexpr std::string_view kBranch = R"(  if %6 {
    %7 = gt %1, %3 : bool
    if %7 {
      var.store %4, %3 : f32
    } else {
      var.store %4, %1 : f32
    }
  } else {
    var.store %5, %2 : f32
  }
)";
  constexpr std::string_view kSelects = R"(  %7 = gt %1, %3 : bool
  %93 = select %7, %3, %1 : f32
  %94 = var.load %4 : f32
  %95 = select %6, %93, %94 : f32
  var.store %4, %95 : f32
  %96 = var.load %5 : f32
  %97 = select %6, %96, %2 : f32
  var.store %5, %97 : f32
)";
  EXPECT_EQ(run_pass(convert_ifs, kernel_with(kBranch, 93)), kernel_with(kSelects, 98));
}

/// An arm of `adds` additions and one var.store.
std::string long_arm(int adds) {
  std::string text = "  if %6 {\n    %7 = add %1, %3 : f32\n";
  for (int i = 8; i < 7 + adds; ++i) {
    text += "    %" + std::to_string(i) + " = add %" + std::to_string(i - 1) + ", %3 : f32\n";
  }
  return text + "    var.store %4, %" + std::to_string(6 + adds) + " : f32\n  }\n";
}

TEST(PassConvertIfs, ArmsUpToTheSizeLimitConvert) {
  const std::string out = run_pass(convert_ifs, kernel_with(long_arm(15), 93));
  EXPECT_EQ(out.find("if "), std::string::npos) << out;
}

/// Branches that must stay branches, each in the kernel_with() frame.
class PassConvertIfsKeeps : public ::testing::TestWithParam<std::string> {};

TEST_P(PassConvertIfsKeeps, TheBranch) {
  const std::string in = kernel_with(GetParam(), 93);
  EXPECT_EQ(run_pass(convert_ifs, in), text_of(ir::parse_kernel(in)));
}

/// One branch of each kind that must stay a branch.
std::vector<std::string> kept_branches() {
  return {
      // A load may fault or read what another thread writes: never speculated.
      R"(  if %6 {
    %7 = load inp[%0] : f32
    var.store %4, %7 : f32
  }
)",
      R"(  if %6 {
    store out[%0], %1 : f32
  }
)",
      R"(  if %6 {
    %7 = atomic.add out[%0], %1 : f32
  }
)",
      R"(  if %6 {
    barrier
  }
)",
      R"(  if %6 {
    %7 = simd.sum %1 : f32
    var.store %4, %7 : f32
  }
)",
      R"(  if %6 {
    %7 = reduce.max %1 : f32
    var.store %4, %7 : f32
  }
)",
      R"(  if %6 {
    %7 = const 0 : u32
  } else {
    %8 = const 4 : u32
    %9 = const 1 : u32
    for %10 = %8 to %8 step %9 : u32 {
      var.store %4, %1 : f32
    }
  }
)",
      // A variable declared in the arm is not visible after the branch.
      R"(  if %6 {
    %7 = var %1 : f32
    var.store %7, %3 : f32
  }
)",
      // An integer division may be what the branch guards against (a zero divisor).
      R"(  if %6 {
    %7 = div %0, %0 : u32
    %8 = cast %7 : f32
    var.store %4, %8 : f32
  }
)",
      // 17 ops: too long to run on every thread.
      long_arm(16),
  };
}

INSTANTIATE_TEST_SUITE_P(PassConvertIfs, PassConvertIfsKeeps, ::testing::ValuesIn(kept_branches()));

TEST(PassConvertIfs, ConvertedKernelComputesTheSameOnTheSimulator) {
  constexpr std::string_view kBranch = R"(  if %6 {
    %7 = mul %1, %1 : f32
    var.store %4, %7 : f32
    %8 = var.load %5 : f32
    %9 = add %8, %7 : f32
    var.store %5, %9 : f32
  } else {
    %10 = neg %1 : f32
    var.store %5, %10 : f32
  }
)";
  const std::string in = kernel_with(kBranch, 93);
  const ir::Kernel before = ir::parse_kernel(in);
  const ir::Kernel after = apply(convert_ifs, in, native_target());
  ASSERT_EQ(text_of(after).find("if "), std::string::npos);
  testing::Rng rng(7);
  runtime::HostTensor x = testing::pack(rng.uniform(256, -2.0f, 2.0f), DType::F32);
  runtime::HostTensor want = testing::pack(std::vector<float>(256), DType::F32);
  runtime::HostTensor got = want;
  const runtime::Grid grid{{8, 1, 1}, {32, 1, 1}};
  runtime::sim_run({&before, {&x, &want}, grid});
  runtime::sim_run({&after, {&x, &got}, grid});
  EXPECT_EQ(testing::unpack(got), testing::unpack(want));
}

}  // namespace
}  // namespace iron::pass_test
