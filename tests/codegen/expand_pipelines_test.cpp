/// expand_pipelines: the prologue, the steady loop and the ring's size for the stages the target
/// holds; one stage where copies are synchronous; what the verifier refuses around pipelines.
#include "iron/codegen/passes/expand_pipelines.hpp"

#include <gtest/gtest.h>

#include <string>

#include "iron/core/parser.hpp"
#include "iron/core/verifier.hpp"
#include "pass_test_harness.hpp"
#include "test_target_profiles.hpp"

namespace iron::pass_test {
namespace {

using codegen::expand_pipelines;
using codegen::pipeline_stages;

// Each step copies 32 elements of x into its slot of the ring; the compute block adds the slot
// into out.
constexpr std::string_view kPipeline = R"(kernel piped dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  param constexpr n: u32
  shared r: f32[32] ring
  rule exactly 32
  values 16
{
  %0 = builtin thread_id.x : u32
  %1 = const 0 : u32
  %2 = constexpr n : u32
  %3 = const 32 : u32
  pipeline %1 to %2 step %3 stages 3 : u32 {
    %4 = pipeline.index step : u32
    %5 = pipeline.index slot : u32
    %6 = add %4, %0 : u32
    %7 = load x[%6] : f32
    %8 = mul %5, %3 : u32
    %9 = add %8, %0 : u32
    shared.store @r[%9], %7 : f32
  } then {
    %10 = pipeline.index step : u32
    %11 = pipeline.index slot : u32
    %12 = mul %11, %3 : u32
    %13 = add %12, %0 : u32
    %14 = shared.load @r[%13] : f32
    %15 = add %10, %0 : u32
    store out[%15], %14 : f32
  }
}
)";

codegen::TargetProfile with_shared(std::uint64_t bytes) {
  codegen::TargetProfile t = native_target();
  t.max_shared_bytes = bytes;
  return t;
}

TEST(PassExpandPipelines, PrologueSteadyLoopAndARingPerStage) {
  EXPECT_EQ(run_pass(expand_pipelines, kPipeline, native_target()),
            R"(kernel piped dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  param constexpr n: u32
  shared r: f32[96]
  rule exactly 32
  values 47
{
  %0 = builtin thread_id.x : u32
  %1 = const 0 : u32
  %2 = constexpr n : u32
  %3 = const 32 : u32
  %16 = const 0 : u32
  %17 = const 1 : u32
  %18 = const 2 : u32
  for %19 = %16 to %18 step %17 : u32 {
    %20 = mul %19, %3 : u32
    %21 = add %1, %20 : u32
    %22 = lt %21, %2 : bool
    if %22 {
      %23 = add %21, %0 : u32
      %24 = load x[%23] : f32
      %25 = mul %19, %3 : u32
      %26 = add %25, %0 : u32
      shared.store @r[%26], %24 : f32
    }
    async.commit
  }
  for %27 = %1 to %2 step %3 : u32 {
    %28 = sub %27, %1 : u32
    %29 = div %28, %3 : u32
    %30 = const 3 : u32
    %31 = rem %29, %30 : u32
    async.wait 1
    barrier
    %32 = mul %31, %3 : u32
    %33 = add %32, %0 : u32
    %34 = shared.load @r[%33] : f32
    %35 = add %27, %0 : u32
    store out[%35], %34 : f32
    %36 = const 2 : u32
    %37 = mul %36, %3 : u32
    %38 = add %27, %37 : u32
    %39 = const 2 : u32
    %40 = add %29, %39 : u32
    %41 = rem %40, %30 : u32
    %42 = lt %38, %2 : bool
    if %42 {
      %43 = add %38, %0 : u32
      %44 = load x[%43] : f32
      %45 = mul %41, %3 : u32
      %46 = add %45, %0 : u32
      shared.store @r[%46], %44 : f32
    }
    async.commit
  }
  barrier
}
)");
}

// Two stages: the loads run one step ahead, so step i + 1's copies start right after the
// barrier that frees their slot, before step i's compute (else none would be in flight during it).
TEST(PassExpandPipelines, TwoStagesStartTheNextStepBeforeTheCompute) {
  std::string two(kPipeline);
  two.replace(two.find("stages 3"), 8, "stages 2");
  EXPECT_EQ(run_pass(expand_pipelines, two, native_target()),
            R"(kernel piped dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  param constexpr n: u32
  shared r: f32[64]
  rule exactly 32
  values 47
{
  %0 = builtin thread_id.x : u32
  %1 = const 0 : u32
  %2 = constexpr n : u32
  %3 = const 32 : u32
  %16 = const 0 : u32
  %17 = const 1 : u32
  %18 = const 1 : u32
  for %19 = %16 to %18 step %17 : u32 {
    %20 = mul %19, %3 : u32
    %21 = add %1, %20 : u32
    %22 = lt %21, %2 : bool
    if %22 {
      %23 = add %21, %0 : u32
      %24 = load x[%23] : f32
      %25 = mul %19, %3 : u32
      %26 = add %25, %0 : u32
      shared.store @r[%26], %24 : f32
    }
    async.commit
  }
  for %27 = %1 to %2 step %3 : u32 {
    %28 = sub %27, %1 : u32
    %29 = div %28, %3 : u32
    %30 = const 2 : u32
    %31 = rem %29, %30 : u32
    async.wait 0
    barrier
    %32 = const 1 : u32
    %33 = mul %32, %3 : u32
    %34 = add %27, %33 : u32
    %35 = const 1 : u32
    %36 = add %29, %35 : u32
    %37 = rem %36, %30 : u32
    %38 = lt %34, %2 : bool
    if %38 {
      %39 = add %34, %0 : u32
      %40 = load x[%39] : f32
      %41 = mul %37, %3 : u32
      %42 = add %41, %0 : u32
      shared.store @r[%42], %40 : f32
    }
    async.commit
    %43 = mul %31, %3 : u32
    %44 = add %43, %0 : u32
    %45 = shared.load @r[%44] : f32
    %46 = add %27, %0 : u32
    store out[%46], %45 : f32
  }
  barrier
}
)");
}

TEST(PassExpandPipelines, StagesShrinkUntilTheRingsFit) {
  const ir::Kernel kernel = ir::parse_kernel(kPipeline);
  EXPECT_EQ(pipeline_stages(kernel, native_target()), 3u) << "as asked";
  EXPECT_EQ(pipeline_stages(kernel, with_shared(std::uint64_t{2} * 128)), 2u)
      << "128 bytes a stage";
  EXPECT_EQ(pipeline_stages(kernel, with_shared(64)), 1u) << "never fewer than one";
  std::string deep(kPipeline);
  deep.replace(deep.find("stages 3"), 8, "stages 12");
  EXPECT_EQ(pipeline_stages(ir::parse_kernel(deep), native_target()), 8u)
      << "copy groups: a wait leaves at most 7 pending";
  ir::Kernel two = kernel;
  expand_pipelines(two, with_shared(std::uint64_t{2} * 128));
  EXPECT_EQ(two.shared[0].size, 64u);
  EXPECT_FALSE(two.shared[0].ring);
  EXPECT_EQ(problems_of(two), "");
}

// A kernel asking for two groups a multiprocessor gets half of it, less what each group leaves
// to the system: 3 stages of 128 bytes where one group fits them, 1 where two do not.
TEST(PassExpandPipelines, StagesFitTheShareOfTheGroupsAMultiprocessorHolds) {
  std::string text(kPipeline);
  text.replace(text.find("  rule"), 0, "  occupancy 2\n");
  const ir::Kernel kernel = ir::parse_kernel(text);
  codegen::TargetProfile target = with_shared(std::uint64_t{4} * 128);
  target.multiprocessor_shared_bytes = std::uint64_t{8} * 128;
  target.reserved_shared_bytes = 128;
  EXPECT_EQ(pipeline_stages(kernel, target), 3u) << "512 bytes a group less 128: three stages";
  target.multiprocessor_shared_bytes = std::uint64_t{6} * 128;
  EXPECT_EQ(pipeline_stages(kernel, target), 2u) << "384 bytes less 128: two";
  target.multiprocessor_shared_bytes = 0;
  EXPECT_EQ(pipeline_stages(kernel, target), 3u)
      << "unknown: a group's own limit, which holds the three asked";
  EXPECT_EQ(codegen::TargetProfile::cuda(90).shared_bytes_for(2), std::uint64_t{113} * 1024)
      << "sm_90: 228 KB a multiprocessor, 1 KB a group";
  EXPECT_EQ(codegen::TargetProfile::cuda(90).shared_bytes_for(1), std::uint64_t{227} * 1024);
}

// An overlay of the 128-byte ring stage (a 200-byte staging) fits in its base from 2 stages on;
// at fewer it takes bytes of its own, which the stages must leave room for.
TEST(PassExpandPipelines, StagesCountTheBytesOfAnOverlayTheirRingsDoNotHold) {
  std::string text(kPipeline);
  text.replace(text.find("  rule"), 0, "  shared staged: f32[50] overlays r\n");
  const ir::Kernel kernel = ir::parse_kernel(text);
  EXPECT_EQ(pipeline_stages(kernel, with_shared(std::uint64_t{3} * 128)), 3u)
      << "three stages hold it";
  EXPECT_EQ(pipeline_stages(kernel, with_shared(std::uint64_t{2} * 128)), 2u) << "so do two";
  EXPECT_EQ(pipeline_stages(kernel, with_shared(std::uint64_t{2} * 128 - 16)), 1u)
      << "one stage (128) and the staging's own 208 bytes";
}

TEST(PassExpandPipelines, OneStageWhereCopiesAreSynchronous) {
  codegen::TargetProfile metal = metal31_target();
  metal.async_copies = false;
  ir::Kernel kernel = ir::parse_kernel(kPipeline);
  EXPECT_EQ(pipeline_stages(kernel, metal), 1u);
  expand_pipelines(kernel, metal);
  const std::string text = text_of(kernel);
  EXPECT_NE(text.find("shared r: f32[32]\n"), std::string::npos) << text;
  // Each step: a barrier (done with the slot), the load, its wait, a barrier, the compute.
  const std::size_t loop = text.find("for ");
  ASSERT_NE(loop, std::string::npos) << text;
  const std::string body = text.substr(loop);
  std::size_t at = 0;
  for (const char* step : {"barrier", "load x[", "async.commit", "async.wait 0", "barrier",
                           "shared.load @r[", "store out["}) {
    at = body.find(step, at);
    ASSERT_NE(at, std::string::npos) << step << " missing in order:\n" << body;
  }
  EXPECT_EQ(text.find("if "), std::string::npos) << "no prologue with one stage:\n" << text;
}

TEST(PassExpandPipelines, KernelsWithoutPipelinesStayAsTheyAre) {
  const std::string text = kernel_with(
      "  %0 = builtin thread_id.x : u32\n"
      "  %1 = load x[%0] : f32\n"
      "  store out[%0], %1 : f32\n",
      2);
  EXPECT_EQ(run_pass(expand_pipelines, text, native_target()), canonical(text));
}

TEST(PassExpandPipelines, TheVerifierKeepsPipelinesWellFormed) {
  const auto problems = [](const std::string& text, ir::Stage stage = ir::Stage::Traced) {
    std::string all;
    for (const std::string& p : ir::verify(ir::parse_kernel(text), stage)) all += p + "\n";
    return all;
  };
  const std::string good(kPipeline);
  EXPECT_EQ(problems(good), "");
  EXPECT_NE(problems(good, ir::Stage::Lowered).find("pipeline reached lowering"),
            std::string::npos);
  EXPECT_NE(problems(good, ir::Stage::Lowered).find("ring r reached lowering"), std::string::npos);

  std::string commit_inside = good;
  commit_inside.replace(commit_inside.find("    shared.store"), 0, "    async.commit\n");
  EXPECT_NE(problems(commit_inside).find("async.commit inside a pipeline"), std::string::npos);

  std::string stages = good;
  stages.replace(stages.find("stages 3"), 8, "stages 17");
  EXPECT_NE(problems(stages).find("a pipeline has 1 to 16 stages, not 17"), std::string::npos);

  std::string no_pipeline = kernel_with(
      "  %0 = builtin thread_id.x : u32\n"
      "  %1 = load x[%0] : f32\n"
      "  store out[%0], %1 : f32\n",
      2);
  no_pipeline.replace(no_pipeline.find("  shared s: f32[64]"), 19, "  shared s: f32[64] ring");
  EXPECT_NE(problems(no_pipeline).find("ring s without a pipeline"), std::string::npos);
}

TEST(PassExpandPipelines, TextFormRoundTrips) {
  EXPECT_EQ(canonical(canonical(kPipeline)), canonical(kPipeline));
  EXPECT_NE(canonical(kPipeline).find("} then {"), std::string::npos);
}

// With a lag of 1 on sm_90a (asynchronous products) the loads run one step less ahead: the
// prologue starts one step, each step waits for all its copies and refills the slot of the step
// two before it; on sm_90 the lag changes nothing.
TEST(PassExpandPipelines, ALagKeepsSlotsForProductsStillInFlight) {
  std::string lagged(kPipeline);
  lagged.replace(lagged.find("stages 3"), 8, "stages 3 lag 1");
  EXPECT_NE(canonical(lagged).find("stages 3 lag 1 : u32"), std::string::npos);
  const std::string hopper = run_pass(
      expand_pipelines, lagged, codegen::TargetProfile::cuda(90, codegen::MmaStrategy::Wgmma));
  EXPECT_NE(hopper.find("%18 = const 1 : u32\n  for %19 = %16 to %18 step %17"), std::string::npos)
      << hopper;
  EXPECT_NE(hopper.find("async.wait 0"), std::string::npos) << hopper;
  EXPECT_EQ(hopper.find("async.wait 1"), std::string::npos) << hopper;
  std::string plain(kPipeline);
  EXPECT_EQ(run_pass(expand_pipelines, lagged, native_target()),
            run_pass(expand_pipelines, plain, native_target()));
}

TEST(PassExpandPipelines, ALagNeedsTwoMoreStages) {
  std::string lagged(kPipeline);
  lagged.replace(lagged.find("stages 3"), 8, "stages 2 lag 1");
  const std::string problems = problems_of(ir::parse_kernel(lagged));
  EXPECT_NE(problems.find("a pipeline with lag 1 needs at least 3 stages, not 2"),
            std::string::npos)
      << problems;
}

}  // namespace
}  // namespace iron::pass_test
