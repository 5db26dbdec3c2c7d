/// expand_pipelines on a specialized pipeline (`consumers C`): on sm_90a a producer warpgroup
/// issues the TMA copies on a ring of full/empty mbarriers and exits, the consumers compute
/// without group barriers and free each slot; register budgets where the group size is fixed;
/// elsewhere only the consumers compute; what is refused.
#include <gtest/gtest.h>

#include <string>

#include "iron/codegen/passes/expand_pipelines.hpp"
#include "iron/codegen/passes/lower_tile_copies.hpp"
#include "iron/core/error.hpp"
#include "iron/core/parser.hpp"
#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::expand_pipelines;
using codegen::MmaStrategy;
using codegen::TargetProfile;

const TargetProfile kHopper = TargetProfile::cuda(90, MmaStrategy::Wgmma);

// A 2-stage ring of 8 swizzled rows of 64 f16 (1024 bytes a stage) filled by a tile copy a step;
// the first warpgroup computes, the second loads.
constexpr std::string_view kSpecialized = R"(kernel tiles dtype=f16 mode=tiled
  param in x: f16
  param out out: f16
  param constexpr m: u32
  param constexpr k: u32
  shared t: f16[512] ring swizzle 64
  rule exactly 256
  values 15
{
  %0 = const 0 : u32
  %1 = constexpr m : u32
  %2 = constexpr k : u32
  %3 = const 64 : u32
  %4 = const 512 : u32
  pipeline %0 to %2 step %3 stages 2 consumers 128 : u32 {
    %5 = pipeline.index step : u32
    %6 = pipeline.index slot : u32
    %7 = mul %6, %4 : u32
    copy.tile @t[%7], x[%0], %1, %2, %0, %5, box 8, 64 : f16
  } then {
    %8 = pipeline.index step : u32
    %9 = pipeline.index slot : u32
    %10 = builtin thread_id.x : u32
    %11 = mul %9, %4 : u32
    %12 = add %11, %10 : u32
    %13 = shared.load @t[%12] : f16
    %14 = add %8, %10 : u32
    store out[%14], %13 : f16
  }
}
)";

/// The passes as the compiler runs them: tile copies lowered (kept for TMA on sm_90a), then the
/// pipelines expanded.
void lower_and_expand(ir::Kernel& kernel, const TargetProfile& target) {
  codegen::lower_tile_copies(kernel, target);
  expand_pipelines(kernel, target);
}

std::string with(std::string text, std::string_view from, std::string_view to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(PassSpecializedPipeline, AProducerIssuesTheCopiesAndTheConsumersFreeTheirSlots) {
  EXPECT_EQ(run_pass(expand_pipelines, kSpecialized, kHopper),
            canonical(R"(kernel tiles dtype=f16 mode=tiled
  param in x: f16
  param out out: f16
  param constexpr m: u32
  param constexpr k: u32
  shared t: f16[1024] swizzle 64
  shared mbarriers0: u32[4]
  shared mbarriers1: u32[4]
  rule exactly 256
  occupancy 1
  tensor_map x [0, m, k] box 8, 64 swizzle 64
  values 63
{
  %0 = const 0 : u32
  %1 = constexpr m : u32
  %2 = constexpr k : u32
  %3 = const 64 : u32
  %4 = const 512 : u32
  %15 = const 0 : u32
  %16 = builtin lane : u32
  %17 = eq %16, %15 : bool
  %18 = builtin simdgroup : u32
  %19 = eq %18, %15 : bool
  %20 = and %19, %17 : bool
  if %20 {
    %21 = const 0 : u32
    mbar.init @mbarriers0[%21], 1
    %22 = const 1 : u32
    mbar.init @mbarriers0[%22], 1
  }
  if %20 {
    %23 = const 0 : u32
    mbar.init @mbarriers1[%23], 4
    %24 = const 1 : u32
    mbar.init @mbarriers1[%24], 4
  }
  barrier
  %25 = const 4 : u32
  %26 = builtin simdgroup : u32
  %27 = ge %26, %25 : bool
  if %27 {
    wg.registers dec 40
    %28 = builtin simdgroup : u32
    %29 = const 4 : u32
    %30 = eq %28, %29 : bool
    %31 = and %30, %17 : bool
    if %31 {
      for %32 = %0 to %2 step %3 : u32 {
        %33 = sub %32, %0 : u32
        %34 = div %33, %3 : u32
        %35 = const 2 : u32
        %36 = rem %34, %35 : u32
        %37 = div %34, %35 : u32
        %38 = const 1 : u32
        %39 = and %37, %38 : u32
        %40 = xor %39, %38 : u32
        mbar.wait @mbarriers1[%36], %40
        %41 = mul %36, %4 : u32
        mbar.expect @mbarriers0[%36], 1024
        copy.tensor @t[%41], map 0, %0, %32, @mbarriers0[%36] : f16
      }
    }
    exit
  } else {
    wg.registers inc 256
    for %42 = %0 to %2 step %3 : u32 {
      %43 = sub %42, %0 : u32
      %44 = div %43, %3 : u32
      %45 = const 2 : u32
      %46 = rem %44, %45 : u32
      %47 = div %44, %45 : u32
      %48 = const 1 : u32
      %49 = and %47, %48 : u32
      mbar.wait @mbarriers0[%46], %49
      %50 = builtin thread_id.x : u32
      %51 = mul %46, %4 : u32
      %52 = add %51, %50 : u32
      %53 = shared.load @t[%52] : f16
      %54 = add %42, %50 : u32
      store out[%54], %53 : f16
      %55 = sub %42, %0 : u32
      %56 = div %55, %3 : u32
      %57 = const 2 : u32
      %58 = rem %56, %57 : u32
      mbar.arrive @mbarriers1[%58]
    }
  }
  barrier
  if %20 {
    %59 = const 0 : u32
    mbar.inval @mbarriers0[%59]
    %60 = const 1 : u32
    mbar.inval @mbarriers0[%60]
  }
  if %20 {
    %61 = const 0 : u32
    mbar.inval @mbarriers1[%61]
    %62 = const 1 : u32
    mbar.inval @mbarriers1[%62]
  }
}
)"));
}

TEST(PassSpecializedPipeline, ALagFreesTheSlotOfTheStepWhoseProductsAreDone) {
  std::string lagged =
      with(std::string(kSpecialized), "stages 2 consumers", "stages 3 lag 1 consumers");
  const std::string text = run_pass(expand_pipelines, lagged, kHopper);
  const std::size_t arrive = text.find("mbar.arrive");
  ASSERT_NE(arrive, std::string::npos) << text;
  // from step 1 on, the slot of step i - 1
  const std::size_t from = text.rfind("ge %", arrive);
  const std::size_t back = text.rfind("sub %", arrive);
  EXPECT_NE(from, std::string::npos) << text;
  EXPECT_NE(back, std::string::npos) << text;
  EXPECT_LT(from, back) << text;
  const std::size_t loop = text.find("for %", text.find("} else {"));
  EXPECT_EQ(text.find("\n  barrier\n", loop), text.rfind("\n  barrier\n"))
      << "no group barrier in the consumers' loop, one after it:\n"
      << text;
  EXPECT_EQ(text.find("    barrier"), std::string::npos) << text;
}

TEST(PassSpecializedPipeline, RegisterBudgetsWhereTheGroupSizeIsFixed) {
  // 256 threads compiled for 248 registers each (ptxas's most): the consumers take 256
  const std::string fixed = run_pass(expand_pipelines, kSpecialized, kHopper);
  EXPECT_NE(fixed.find("wg.registers inc 256"), std::string::npos) << fixed;
  EXPECT_NE(fixed.find("occupancy 1"), std::string::npos) << "ptxas allocates all 248\n" << fixed;
  std::string wide = with(std::string(kSpecialized), "rule exactly 256", "rule exactly 384");
  wide = with(wide, "consumers 128", "consumers 256");
  const std::string text = run_pass(expand_pipelines, wide, kHopper);
  const std::size_t lower = text.find("wg.registers dec 40");
  const std::size_t raise = text.find("wg.registers inc 232");
  ASSERT_NE(lower, std::string::npos) << text;
  ASSERT_NE(raise, std::string::npos) << text;
  EXPECT_LT(lower, text.find("exit")) << text;
  EXPECT_LT(text.find("exit"), raise) << text;
  std::string loose = with(wide, "rule exactly 384", "rule at_most 384\n  rule multiple_of 128");
  EXPECT_EQ(run_pass(expand_pipelines, loose, kHopper).find("wg.registers"), std::string::npos)
      << "no budgets without a fixed group size";
}

TEST(PassSpecializedPipeline, TmaRingsRunMoreStagesThanCopyGroups) {
  // 12 stages of 1024 bytes: TMA copies on mbarriers run them all; where the copies become copy
  // groups (sm_90, whose waits leave at most 7 pending) the ring runs 8.
  const std::string deep = with(std::string(kSpecialized), "stages 2", "stages 12");
  ir::Kernel hopper = ir::parse_kernel(deep);
  codegen::lower_tile_copies(hopper, kHopper);
  EXPECT_EQ(codegen::pipeline_stages(hopper, kHopper), 12u);
  const TargetProfile sm90 = TargetProfile::cuda(90, MmaStrategy::MmaSync);
  ir::Kernel groups = ir::parse_kernel(deep);
  codegen::lower_tile_copies(groups, sm90);
  EXPECT_EQ(codegen::pipeline_stages(groups, sm90), 8u);
  expand_pipelines(groups, sm90);
  EXPECT_EQ(groups.shared.at(0).name, "t");
  EXPECT_EQ(groups.shared.at(0).size, 8u * 512u);
}

TEST(PassSpecializedPipeline, ElsewhereOnlyTheConsumersCompute) {
  const std::string text = run_pass(lower_and_expand, kSpecialized, TargetProfile::cuda(90));
  EXPECT_EQ(text.find("mbar."), std::string::npos) << text;
  // the compute's read sits in `if simdgroup < 4` (128 consumers), the copies outside it
  const std::size_t read = text.find("shared.load");
  const std::size_t branch = text.rfind("if %", read);
  const std::size_t simdgroup = text.rfind("builtin simdgroup", read);
  ASSERT_NE(read, std::string::npos) << text;
  ASSERT_LT(simdgroup, branch) << text;
  const std::string guard = text.substr(simdgroup, branch - simdgroup);
  EXPECT_NE(guard.find("lt %"), std::string::npos) << guard;
  EXPECT_NE(text.rfind("const 4 : u32", simdgroup), std::string::npos) << text;
  EXPECT_LT(text.rfind("copy.async"), branch) << text;
  EXPECT_EQ(text.find("wg.registers"), std::string::npos) << text;
}

TEST(PassSpecializedPipeline, CopiesThatCannotBeTmaOnHopperAreRefused) {
  const auto refusal = [](const std::string& text) {
    ir::Kernel kernel = ir::parse_kernel(text);
    try {
      codegen::lower_tile_copies(kernel, kHopper);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // A load in the load block (not pure arithmetic): its copies would become copy groups.
  const std::string loads =
      with(std::string(kSpecialized), "    copy.tile", "    %20 = load x[%5] : f16\n    copy.tile");
  const std::string impure = refusal(loads);
  EXPECT_NE(impure.find("the specialized pipeline at"), std::string::npos) << impure;
  EXPECT_NE(impure.find("load there is neither pure arithmetic nor a tile copy"), std::string::npos)
      << impure;
  // A copy whose base is the step (not a host expression): no tensor map.
  const std::string moving = with(std::string(kSpecialized), "x[%0], %1, %2", "x[%5], %1, %2");
  const std::string unmapped = refusal(moving);
  EXPECT_NE(unmapped.find("the tile copy there has no tensor map"), std::string::npos) << unmapped;
  // Both lower to copy groups where there are no tensor maps, as before.
  for (const std::string& text : {loads, moving}) {
    ir::Kernel kernel = ir::parse_kernel(text);
    EXPECT_NO_THROW(lower_and_expand(kernel, TargetProfile::cuda(90)));
  }
}

TEST(PassSpecializedPipeline, ABarrierInTheComputeBlockIsRefused) {
  const std::string barred = with(std::string(kSpecialized), "    store out[%14], %13 : f16\n",
                                  "    store out[%14], %13 : f16\n    barrier\n");
  ir::Kernel kernel = ir::parse_kernel(barred);
  try {
    expand_pipelines(kernel, kHopper);
    FAIL() << "a barrier the producer never reaches was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("its producer never reaches it"), std::string::npos)
        << e.what();
  }
}

// barrier.among C joins the consumers alone: the compute block may hold it, on sm_90a (where it
// stays inside the consumers' loop, with no group barrier there) and elsewhere (inside the
// consumers' branch); a barrier among other threads is refused like a group barrier.
TEST(PassSpecializedPipeline, TheConsumersOwnBarrierIsAllowedInTheComputeBlock) {
  const std::string among = with(std::string(kSpecialized), "    store out[%14], %13 : f16\n",
                                 "    barrier.among 128\n    store out[%14], %13 : f16\n");
  const std::string hopper = run_pass(lower_and_expand, among, kHopper);
  const std::size_t at = hopper.find("barrier.among 128");
  ASSERT_NE(at, std::string::npos) << hopper;
  EXPECT_LT(hopper.find("mbar.wait @mbarriers0"), at) << hopper;    // after the full slot's wait
  EXPECT_LT(at, hopper.find("mbar.arrive @mbarriers1")) << hopper;  // before freeing it
  const std::string sm90 = run_pass(lower_and_expand, among, TargetProfile::cuda(90));
  const std::size_t inside = sm90.find("barrier.among 128");
  ASSERT_NE(inside, std::string::npos) << sm90;
  EXPECT_LT(sm90.rfind("builtin simdgroup", inside), inside) << sm90;
  EXPECT_EQ(canonical(among), canonical(canonical(among)));

  ir::Kernel others = ir::parse_kernel(with(among, "barrier.among 128", "barrier.among 256"));
  try {
    lower_and_expand(others, kHopper);
    FAIL() << "a barrier among the producer's threads too was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("barrier among 256"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("barrier_among(128)"), std::string::npos) << e.what();
  }
}

TEST(PassSpecializedPipeline, TheVerifierWantsWholeSimdgroupsForABarrierAmongThreads) {
  const auto problems =
      [](std::string_view threads) {
        return problems_of(ir::parse_kernel(std::string(R"(kernel among dtype=f32 mode=tiled
  rule exactly 128
  values 0
{
  barrier.among )") + std::string(threads) + "\n}\n"));
      };
  EXPECT_EQ(problems("64").find("barrier"), std::string::npos) << problems("64");
  EXPECT_NE(problems("48").find("multiple of 32 from 32 to 1024"), std::string::npos)
      << problems("48");
  EXPECT_NE(problems("0").find("multiple of 32"), std::string::npos);
  EXPECT_NE(problems("2048").find("multiple of 32"), std::string::npos);
}

// The producer exits after its run on sm_90a: a specialized pipeline in a loop, or after another
// one, would wait for copies nobody issues. Elsewhere both run.
TEST(PassSpecializedPipeline, ASecondRunOnHopperIsRefused) {
  std::string looped = with(std::string(kSpecialized), "values 15", "values 16");
  looped = with(looped, "  pipeline %0", "  for %15 = %0 to %3 step %3 : u32 {\n  pipeline %0");
  looped = with(looped, "    store out[%14], %13 : f16\n  }\n}",
                "    store out[%14], %13 : f16\n  }\n  }\n}");
  ir::Kernel in_loop = ir::parse_kernel(looped);
  try {
    lower_and_expand(in_loop, kHopper);
    FAIL() << "a specialized pipeline in a loop was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("inside a loop"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(run_pass(lower_and_expand, looped, TargetProfile::cuda(90)));

  std::string twice = with(std::string(kSpecialized), "values 15", "values 25");
  twice = with(twice, "    store out[%14], %13 : f16\n  }\n}", R"(    store out[%14], %13 : f16
  }
  pipeline %0 to %2 step %3 stages 2 consumers 128 : u32 {
    %15 = pipeline.index step : u32
    %16 = pipeline.index slot : u32
    %17 = mul %16, %4 : u32
    copy.tile @t[%17], x[%0], %1, %2, %0, %15, box 8, 64 : f16
  } then {
    %18 = pipeline.index step : u32
    %19 = pipeline.index slot : u32
    %20 = builtin thread_id.x : u32
    %21 = mul %19, %4 : u32
    %22 = add %21, %20 : u32
    %23 = shared.load @t[%22] : f16
    %24 = add %18, %20 : u32
    store out[%24], %23 : f16
  }
})");
  ir::Kernel after = ir::parse_kernel(twice);
  try {
    lower_and_expand(after, kHopper);
    FAIL() << "a second specialized pipeline was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("after another one"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(run_pass(lower_and_expand, twice, TargetProfile::cuda(90)));
}

TEST(PassSpecializedPipeline, AGroupOfOnlyConsumersIsRefused) {
  ir::Kernel kernel =
      ir::parse_kernel(with(std::string(kSpecialized), "rule exactly 256", "rule exactly 128"));
  EXPECT_THROW(lower_and_expand(kernel, TargetProfile::cuda(90)), Error);
}

TEST(PassSpecializedPipeline, TheVerifierKeepsConsumersAndBudgetsWellFormed) {
  const ir::Kernel partial =
      ir::parse_kernel(with(std::string(kSpecialized), "consumers 128", "consumers 96"));
  EXPECT_NE(problems_of(partial).find("whole warpgroups"), std::string::npos)
      << problems_of(partial);
  const std::string budget = R"(kernel budget dtype=f32 mode=tiled
  rule exactly 128
  values 0
{
  wg.registers inc 20
}
)";
  EXPECT_NE(problems_of(ir::parse_kernel(budget)).find("multiple of 8 from 24 to 256"),
            std::string::npos);
}

TEST(PassSpecializedPipeline, TextFormRoundTrips) {
  EXPECT_EQ(canonical(canonical(kSpecialized)), canonical(kSpecialized));
  EXPECT_NE(canonical(kSpecialized).find("stages 2 consumers 128 : u32"), std::string::npos);
  const std::string expanded = run_pass(expand_pipelines, kSpecialized, kHopper);
  EXPECT_EQ(canonical(expanded), expanded);
}

}  // namespace
}  // namespace iron::pass_test
