/// The pass pipeline: its order, and the driver's statistics, kept IR and per-pass verification.
#include "iron/codegen/pipeline.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "iron/core/error.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"
#include "iron/dsl/kernel.hpp"

namespace iron::pass_test {
namespace {

using codegen::TargetProfile;

TEST(PassPipeline, RunsThePassesInOrderEachWithAReason) {
  const std::vector<std::string> want = {"select_target_paths",
                                         "lower_tile_copies",
                                         "expand_pipelines",
                                         "lower_warpgroup_products",
                                         "fold_constants",
                                         "simplify",
                                         "eliminate_common_subexpressions",
                                         "hoist_loop_invariants",
                                         "unroll_loops",
                                         "fold_constants",
                                         "simplify",
                                         "promote_registers",
                                         "convert_ifs",
                                         "vectorize",
                                         "lower_reductions",
                                         "legalize",
                                         "simplify",
                                         "eliminate_common_subexpressions",
                                         "hoist_loop_invariants",
                                         "eliminate_dead_code",
                                         "layout_shared_memory"};
  std::vector<std::string> got;
  for (const codegen::PassInfo& pass : codegen::pipeline_passes()) {
    got.emplace_back(pass.name);
    EXPECT_NE(pass.run, nullptr) << pass.name;
    EXPECT_FALSE(pass.why.empty()) << pass.name;
  }
  EXPECT_EQ(got, want);
}

TEST(PassPipeline, RecordsEveryPassAndKeepsItsIr) {
  const ir::Kernel kernel = dsl::kernel_ir_for("iron_softmax", DType::F16);
  const codegen::PipelineResult result =
      codegen::run_pipeline(kernel, TargetProfile::cuda(90), {.keep_ir = true});
  const auto& passes = codegen::pipeline_passes();
  ASSERT_EQ(result.stats.size(), passes.size());
  ASSERT_EQ(result.ir_after.size(), passes.size());
  EXPECT_EQ(result.stats.front().ops_before, ir::count_ops(kernel));
  for (std::size_t i = 0; i < passes.size(); ++i) {
    EXPECT_EQ(result.stats[i].name, passes[i].name);
    EXPECT_GE(result.stats[i].milliseconds, 0.0);
    if (i > 0) {
      EXPECT_EQ(result.stats[i].ops_before, result.stats[i - 1].ops_after);
    }
  }
  EXPECT_EQ(result.stats.back().ops_after, ir::count_ops(result.kernel));
  EXPECT_EQ(result.ir_after.back(), ir::print_kernel(result.kernel));
  EXPECT_TRUE(ir::verify(result.kernel).empty());
}

TEST(PassPipeline, KeepsNoIrUnlessAsked) {
  const codegen::PipelineResult result = codegen::run_pipeline(
      dsl::kernel_ir_for("iron_rms_norm", DType::BF16), TargetProfile::metal(31));
  EXPECT_TRUE(result.ir_after.empty());
  EXPECT_EQ(result.stats.size(), codegen::pipeline_passes().size());
}

TEST(PassPipeline, AVerifierProblemNamesThePassAndShowsTheIr) {
  // Malformed input (it writes nothing) is caught right after the first pass.
  const ir::Kernel kernel = ir::parse_kernel(R"(kernel writes_nothing dtype=f32 mode=elementwise
  param in x: f32
  param out out: f32
  values 2
{
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
}
)");
  try {
    codegen::run_pipeline(kernel, TargetProfile::cuda(90));
    FAIL() << "run_pipeline accepted a kernel that writes nothing";
  } catch (const IrError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("after pass select_target_paths: kernel writes_nothing: ", 0), 0u) << what;
    EXPECT_NE(what.find("writes no output"), std::string::npos) << what;
    EXPECT_NE(what.find("kernel writes_nothing dtype=f32 mode=elementwise"), std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace iron::pass_test
