/// select_target_paths: each target keeps the branch its answer takes, the query becomes a
/// constant, and shared memory only the dropped branch used goes with it; specializations the
/// profile binds likewise, the others become their conditions.
#include "iron/codegen/passes/select_target_paths.hpp"

#include <gtest/gtest.h>

#include <string>

#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::MmaStrategy;
using codegen::select_target_paths;
using codegen::TargetProfile;

void select(ir::Kernel& kernel, const TargetProfile& target) {
  select_target_paths(kernel, target);
}

// Each branch stages x through its own allocation; `wide` is the one the sm_90a path uses, `s`
// the one both use after the branch.
constexpr std::string_view kTwoPaths = R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  shared wide: f32[256]
  shared narrow: f32[64]
  shared s: f32[64]
  rule multiple_of 32
  values 12
{
  %0 = target.has warpgroup_products : bool
  %1 = builtin thread_id.x : u32
  %2 = load x[%1] : f32
  if %0 {
    shared.store @wide[%1], %2 : f32
    %3 = shared.load @wide[%1] : f32
    shared.store @s[%1], %3 : f32
  } else {
    shared.store @narrow[%1], %2 : f32
    %4 = shared.load @narrow[%1] : f32
    shared.store @s[%1], %4 : f32
  }
  %5 = select %0, %2, %2 : f32
  %6 = shared.load @s[%1] : f32
  %7 = add %6, %5 : f32
  store out[%1], %7 : f32
}
)";

TEST(PassSelectTargetPaths, Sm90aKeepsItsBranchAndItsAllocations) {
  EXPECT_EQ(run_pass(select, kTwoPaths, TargetProfile::cuda(90, MmaStrategy::Wgmma)),
            canonical(R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  shared wide: f32[256]
  shared s: f32[64]
  rule multiple_of 32
  values 12
{
  %0 = const 1 : bool
  %1 = builtin thread_id.x : u32
  %2 = load x[%1] : f32
  shared.store @wide[%1], %2 : f32
  %3 = shared.load @wide[%1] : f32
  shared.store @s[%1], %3 : f32
  %5 = select %0, %2, %2 : f32
  %6 = shared.load @s[%1] : f32
  %7 = add %6, %5 : f32
  store out[%1], %7 : f32
}
)"));
}

TEST(PassSelectTargetPaths, EveryOtherTargetKeepsTheElseBranch) {
  const std::string want = canonical(R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  shared narrow: f32[64]
  shared s: f32[64]
  rule multiple_of 32
  values 12
{
  %0 = const 0 : bool
  %1 = builtin thread_id.x : u32
  %2 = load x[%1] : f32
  shared.store @narrow[%1], %2 : f32
  %4 = shared.load @narrow[%1] : f32
  shared.store @s[%1], %4 : f32
  %5 = select %0, %2, %2 : f32
  %6 = shared.load @s[%1] : f32
  %7 = add %6, %5 : f32
  store out[%1], %7 : f32
}
)");
  for (const TargetProfile& target :
       {TargetProfile::cuda(90), TargetProfile::cuda(80),
        TargetProfile::cuda(90, MmaStrategy::Software), TargetProfile::metal(31)}) {
    EXPECT_EQ(run_pass(select, kTwoPaths, target), want) << target.name;
  }
}

// An overlay of the allocation only the else branch uses, staged through after the branch.
constexpr std::string_view kOverlaidPath = R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  shared wide: f32[256]
  shared narrow: f32[64]
  shared over: f32[32] overlays narrow
  rule multiple_of 32
  values 4
{
  %0 = target.has warpgroup_products : bool
  %1 = builtin thread_id.x : u32
  %2 = load x[%1] : f32
  if %0 {
    shared.store @wide[%1], %2 : f32
  } else {
    shared.store @narrow[%1], %2 : f32
  }
  barrier
  shared.store @over[%1], %2 : f32
  %3 = shared.load @over[%1] : f32
  store out[%1], %3 : f32
}
)";

TEST(PassSelectTargetPaths, AnOverlayFollowsItsBaseOrKeepsItsBytesWhenTheBaseGoes) {
  const std::string hopper =
      run_pass(select, kOverlaidPath, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  EXPECT_NE(hopper.find("  shared wide: f32[256]\n  shared over: f32[32]\n"), std::string::npos)
      << hopper;
  const std::string other = run_pass(select, kOverlaidPath, TargetProfile::cuda(90));
  EXPECT_NE(other.find("  shared narrow: f32[64]\n  shared over: f32[32] overlays narrow\n"),
            std::string::npos)
      << other;
}

// A branch on whether n is a multiple of 8 (launch-constant), and one on the thread's index
// (not): only the first is bindable. The pipeline's ring is read after it, by the other path too.
constexpr std::string_view kSpecialized = R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  param constexpr n: u32
  shared r: f32[32] ring
  rule exactly 32
  values 17
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
  if %5 {
    pipeline %3 to %0 step %1 stages 2 : u32 {
      %9 = pipeline.index step : u32
      %10 = load x[%9] : f32
      shared.store @r[%6], %10 : f32
    } then {
      %15 = pipeline.index slot : u32
    }
  } else {
    %11 = load x[%6] : f32
    shared.store @r[%6], %11 : f32
  }
  %12 = shared.load @r[%6] : f32
  %13 = select %8, %12, %12 : f32
  %14 = select %5, %13, %12 : f32
  store out[%6], %14 : f32
}
)";

TEST(PassSelectTargetPaths, BoundSpecializationsKeepTheirBranch) {
  TargetProfile target = TargetProfile::cuda(90);
  target.specialization = {true};
  EXPECT_EQ(run_pass(select, kSpecialized, target), canonical(R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  param constexpr n: u32
  shared r: f32[32] ring
  rule exactly 32
  values 17
{
  %0 = constexpr n : u32
  %1 = const 8 : u32
  %2 = rem %0, %1 : u32
  %3 = const 0 : u32
  %4 = eq %2, %3 : bool
  %5 = const 1 : bool
  %6 = builtin thread_id.x : u32
  %7 = eq %6, %3 : bool
  pipeline %3 to %0 step %1 stages 2 : u32 {
    %9 = pipeline.index step : u32
    %10 = load x[%9] : f32
    shared.store @r[%6], %10 : f32
  } then {
    %15 = pipeline.index slot : u32
  }
  %12 = shared.load @r[%6] : f32
  %13 = select %7, %12, %12 : f32
  %14 = select %5, %13, %12 : f32
  store out[%6], %14 : f32
}
)"));
}

TEST(PassSelectTargetPaths, AFalseSpecializationDropsThePipelineAndItsRing) {
  TargetProfile target = TargetProfile::cuda(90);
  target.specialization = {false};
  EXPECT_EQ(run_pass(select, kSpecialized, target), canonical(R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  param constexpr n: u32
  shared r: f32[32]
  rule exactly 32
  values 17
{
  %0 = constexpr n : u32
  %1 = const 8 : u32
  %2 = rem %0, %1 : u32
  %3 = const 0 : u32
  %4 = eq %2, %3 : bool
  %5 = const 0 : bool
  %6 = builtin thread_id.x : u32
  %7 = eq %6, %3 : bool
  %11 = load x[%6] : f32
  shared.store @r[%6], %11 : f32
  %12 = shared.load @r[%6] : f32
  %13 = select %7, %12, %12 : f32
  %14 = select %5, %13, %12 : f32
  store out[%6], %14 : f32
}
)"));
}

TEST(PassSelectTargetPaths, UnboundSpecializationsAreTheirConditions) {
  EXPECT_EQ(run_pass(select, kSpecialized, TargetProfile::cuda(90)),
            canonical(R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  param constexpr n: u32
  shared r: f32[32] ring
  rule exactly 32
  values 17
{
  %0 = constexpr n : u32
  %1 = const 8 : u32
  %2 = rem %0, %1 : u32
  %3 = const 0 : u32
  %4 = eq %2, %3 : bool
  %6 = builtin thread_id.x : u32
  %7 = eq %6, %3 : bool
  if %4 {
    pipeline %3 to %0 step %1 stages 2 : u32 {
      %9 = pipeline.index step : u32
      %10 = load x[%9] : f32
      shared.store @r[%6], %10 : f32
    } then {
      %15 = pipeline.index slot : u32
    }
  } else {
    %11 = load x[%6] : f32
    shared.store @r[%6], %11 : f32
  }
  %12 = shared.load @r[%6] : f32
  %13 = select %7, %12, %12 : f32
  %14 = select %4, %13, %12 : f32
  store out[%6], %14 : f32
}
)"));
}

TEST(PassSelectTargetPaths, KernelsWithoutQueriesAreLeftAlone) {
  const std::string text = kernel_with(R"(
  %0 = builtin thread_id.x : u32
  %1 = load x[%0] : f32
  store out[%0], %1 : f32
)",
                                       2);
  EXPECT_EQ(run_pass(select, text, TargetProfile::cuda(90, MmaStrategy::Wgmma)), canonical(text));
}

TEST(PassSelectTargetPaths, QueriesReadTheirFeatureOfTheProfile) {
  constexpr auto kFeature = ir::TargetFeature::WarpgroupProducts;
  EXPECT_TRUE(codegen::target_has(TargetProfile::cuda(90, MmaStrategy::Wgmma), kFeature));
  EXPECT_FALSE(codegen::target_has(TargetProfile::cuda(90), kFeature));
  EXPECT_FALSE(codegen::target_has(TargetProfile::metal(31), kFeature));
}

TEST(PassSelectTargetPaths, TensorMapsAreSm90aLaunchedByTheRuntimeOnly) {
  constexpr auto kFeature = ir::TargetFeature::TensorMaps;
  TargetProfile aot = TargetProfile::cuda(90, MmaStrategy::Wgmma);
  EXPECT_TRUE(codegen::target_has(aot, kFeature));
  aot.tensor_maps = false;  // as an AOT bundle compiles its sm_90a cubins
  EXPECT_FALSE(codegen::target_has(aot, kFeature));
  EXPECT_FALSE(codegen::target_has(TargetProfile::cuda(90), kFeature));
  EXPECT_FALSE(codegen::target_has(TargetProfile::metal(31), kFeature));
  // Asked together with warpgroup_products (an `and` of the two queries decides the `if`).
  std::string both(kTwoPaths);
  const std::string query = "%0 = target.has warpgroup_products : bool";
  both.replace(both.find(query), query.size(),
               "%10 = target.has warpgroup_products : bool\n"
               "  %11 = target.has tensor_maps : bool\n"
               "  %0 = and %10, %11 : bool");
  const auto wide = [&](const TargetProfile& target) {
    const std::string out = run_pass(select, both, target);
    EXPECT_EQ(out.find("if %0"), std::string::npos) << out;
    return out.find("@wide") != std::string::npos;
  };
  EXPECT_TRUE(wide(TargetProfile::cuda(90, MmaStrategy::Wgmma)));
  EXPECT_FALSE(wide(aot));
  EXPECT_FALSE(wide(TargetProfile::cuda(90)));
}

TEST(PassSelectTargetPaths, PairedAccumulatorColumnsAreEveryTargetsButWmmas) {
  // The same kernel asking the other feature: wmma's unknown lane map takes the else branch.
  std::string paired(kTwoPaths);
  const std::string query = "target.has warpgroup_products";
  paired.replace(paired.find(query), query.size(), "target.has paired_accumulator_columns");
  const auto kept = [&](const TargetProfile& target) {
    const std::string out = run_pass(select, paired, target);
    const bool wide = out.find("@wide") != std::string::npos;
    const bool narrow = out.find("@narrow") != std::string::npos;
    EXPECT_NE(wide, narrow) << out;
    return wide;
  };
  EXPECT_TRUE(kept(TargetProfile::cuda(80)));
  EXPECT_TRUE(kept(TargetProfile::cuda(90, MmaStrategy::Wgmma)));
  EXPECT_TRUE(kept(TargetProfile::metal(31)));
  EXPECT_FALSE(kept(TargetProfile::cuda(90, MmaStrategy::Wmma)));
}

TEST(PassSelectTargetPaths, LargeSharedMemoryIsEveryCudaProfilesButNotMetals) {
  std::string large(kTwoPaths);
  const std::string query = "target.has warpgroup_products";
  large.replace(large.find(query), query.size(), "target.has large_shared_memory");
  const auto kept = [&](const TargetProfile& target) {
    return run_pass(select, large, target).find("@wide") != std::string::npos;
  };
  EXPECT_TRUE(kept(TargetProfile::cuda(80)));
  EXPECT_TRUE(kept(TargetProfile::cuda(90, MmaStrategy::Software)));
  EXPECT_TRUE(kept(TargetProfile::cuda(90, MmaStrategy::Wgmma)));
  EXPECT_FALSE(kept(TargetProfile::metal(30)));
  EXPECT_FALSE(kept(TargetProfile::metal(31)));
}

}  // namespace
}  // namespace iron::pass_test
