/// One call from a traced kernel to target source: the pipeline for the target's profile,
/// then the emitter for its language. Shared by `iron inspect`, `build`, `snap` and `diff`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "iron/codegen/pipeline.hpp"
#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

struct CompiledKernel {
  std::string symbol;  ///< the function name in the emitted source ("<kernel>_<dtype>")
  ir::Kernel lowered;  ///< the IR after the pipeline
  std::string source;  ///< CUDA C++ or MSL
  std::vector<PassStat> stats;
};

CompiledKernel compile_kernel(const ir::Kernel& traced, const TargetProfile& target);

/// ".cu" for CUDA, ".metal" for MSL.
std::string_view source_extension(TargetKind kind);
/// "cuda" or "msl".
std::string_view target_kind_name(TargetKind kind);

}  // namespace iron::codegen
