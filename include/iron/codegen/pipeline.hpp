/// The optimizing pass pipeline: the ordered list of passes (one place, with why each sits
/// where it does), and a driver that runs them with per-pass op counts, time and verification.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

using PassFn = void (*)(ir::Kernel&, const TargetProfile&);

struct PassInfo {
  std::string_view name;  ///< as used by `iron inspect --pass NAME`
  PassFn run;
  std::string_view why;  ///< why it is in the pipeline at this position
};

/// Every pass in pipeline order (a pass may appear more than once).
const std::vector<PassInfo>& pipeline_passes();

struct PassStat {
  std::string name;
  std::size_t ops_before = 0;
  std::size_t ops_after = 0;
  double milliseconds = 0.0;
};

struct PipelineOptions {
  bool verify_each = true;  ///< run the verifier after every pass (IrError names the pass)
  bool keep_ir = false;     ///< keep the printed IR after every pass in `ir_after`
};

struct PipelineResult {
  ir::Kernel kernel;
  std::vector<PassStat> stats;
  std::vector<std::string> ir_after;  ///< one per pass when keep_ir
};

PipelineResult run_pipeline(ir::Kernel kernel, const TargetProfile& target,
                            const PipelineOptions& options = {});

}  // namespace iron::codegen
