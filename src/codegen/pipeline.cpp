/// The pass pipeline in order, and the driver that runs it with per-pass statistics.
#include "iron/codegen/pipeline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>

#include "iron/codegen/passes/convert_ifs.hpp"
#include "iron/codegen/passes/eliminate_common_subexpressions.hpp"
#include "iron/codegen/passes/eliminate_dead_code.hpp"
#include "iron/codegen/passes/expand_pipelines.hpp"
#include "iron/codegen/passes/fold_constants.hpp"
#include "iron/codegen/passes/hoist_loop_invariants.hpp"
#include "iron/codegen/passes/layout_shared_memory.hpp"
#include "iron/codegen/passes/legalize.hpp"
#include "iron/codegen/passes/lower_reductions.hpp"
#include "iron/codegen/passes/lower_tile_copies.hpp"
#include "iron/codegen/passes/lower_warpgroup_products.hpp"
#include "iron/codegen/passes/promote_registers.hpp"
#include "iron/codegen/passes/select_target_paths.hpp"
#include "iron/codegen/passes/simplify.hpp"
#include "iron/codegen/passes/unroll_loops.hpp"
#include "iron/codegen/passes/vectorize.hpp"
#include "iron/core/error.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"

namespace iron::codegen {

const std::vector<PassInfo>& pipeline_passes() {
  static const std::vector<PassInfo> passes = {
      {"select_target_paths",
       static_cast<void (*)(ir::Kernel&, const TargetProfile&)>(select_target_paths),
       "first: keeps the path the target takes, so that only its shared memory is counted"},
      {"lower_tile_copies", lower_tile_copies,
       "tile copies become each thread's copies, except a pipeline's on targets with tensor maps"},
      {"expand_pipelines", expand_pipelines,
       "sizes each ring for the stages the target holds and writes the pipeline's loop"},
      {"lower_warpgroup_products", lower_warpgroup_products,
       "warpgroup products the target lacks become fragment products, before folding and "
       "unrolling shape their index math"},
      {"fold_constants", fold_constants,
       "variant parameters trace as literals: fold them first so every later pass sees constants"},
      {"simplify", simplify, "removes identities left by folding and turns pow2 math into shifts"},
      {"eliminate_common_subexpressions", eliminate_common_subexpressions,
       "merges repeated index math and loads before hoisting and unrolling copy them"},
      {"hoist_loop_invariants", hoist_loop_invariants,
       "computes loop-invariant math once, before unrolling would copy it into every trip"},
      {"unroll_loops", unroll_loops,
       "unrolls small constant loops, after hoisting so the copies stay small"},
      {"fold_constants", fold_constants,
       "unrolling made induction values constants: fold what depends on them"},
      {"simplify", simplify, "simplifies what the second folding exposed (x*1, x+0 per copy)"},
      {"promote_registers", promote_registers,
       "register arrays whose indices unrolling made constant become scalar variables"},
      {"convert_ifs", convert_ifs,
       "turns small pure branches into selects, on the final shape of the arithmetic"},
      {"vectorize", vectorize,
       "widens contiguous accesses once index math is simplified, before reductions expand"},
      {"lower_reductions", lower_reductions,
       "expands reduce.* into simdgroup ops and shared partials after the generic rewrites"},
      {"legalize", legalize,
       "widens f16/bf16 math the target lacks, after every pass that creates arithmetic"},
      {"simplify", simplify,
       "turns the vectorizer's divisibility checks (n % 8, n / 8) into masks and shifts"},
      {"eliminate_common_subexpressions", eliminate_common_subexpressions,
       "merges what unrolling, vectorization and lowering repeated (lane ids, constants, index "
       "math)"},
      {"hoist_loop_invariants", hoist_loop_invariants,
       "hoists the invariants that vectorization and lowering created inside loops"},
      {"eliminate_dead_code", eliminate_dead_code,
       "drops everything the earlier passes left unused, just before layout and emission"},
      {"layout_shared_memory", layout_shared_memory,
       "last: gives every shared allocation, lowering's partials included, its offset"},
  };
  return passes;
}

PipelineResult run_pipeline(ir::Kernel kernel, const TargetProfile& target,
                            const PipelineOptions& options) {
  PipelineResult result;
  for (const PassInfo& pass : pipeline_passes()) {
    PassStat stat{std::string(pass.name), ir::count_ops(kernel)};
    const auto start = std::chrono::steady_clock::now();
    pass.run(kernel, target);
    stat.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    stat.ops_after = ir::count_ops(kernel);
    result.stats.push_back(std::move(stat));
    if (options.verify_each) {
      const std::vector<std::string> problems = ir::verify(kernel, ir::Stage::Traced);
      if (!problems.empty()) {
        throw IrError(fmt::format("after pass {}: {}\n{}", pass.name, fmt::join(problems, "\n"),
                                  ir::print_kernel(kernel)));
      }
    }
    if (options.keep_ir) result.ir_after.push_back(ir::print_kernel(kernel));
  }
  if (const std::vector<std::string> problems = ir::verify(kernel, ir::Stage::Lowered);
      !problems.empty()) {
    throw IrError(fmt::format("{}", fmt::join(problems, "\n")));
  }
  result.kernel = std::move(kernel);
  return result;
}

}  // namespace iron::codegen
