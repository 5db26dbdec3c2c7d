/// From a traced kernel to target source: pipeline, then the target's emitter.
#include "iron/codegen/compile.hpp"

#include "iron/codegen/emit.hpp"

namespace iron::codegen {

CompiledKernel compile_kernel(const ir::Kernel& traced, const TargetProfile& target) {
  PipelineResult result = run_pipeline(traced, target);
  CompiledKernel out;
  out.symbol = kernel_symbol(result.kernel);
  out.source = target.kind == TargetKind::Cuda ? emit_cuda(result.kernel, target)
                                               : emit_msl(result.kernel, target);
  out.lowered = std::move(result.kernel);
  out.stats = std::move(result.stats);
  return out;
}

std::string_view source_extension(TargetKind kind) {
  return kind == TargetKind::Cuda ? ".cu" : ".metal";
}

std::string_view target_kind_name(TargetKind kind) {
  return kind == TargetKind::Cuda ? "cuda" : "msl";
}

}  // namespace iron::codegen
