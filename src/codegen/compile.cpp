/// From a traced kernel to target source: pipeline, then the emitter of the profile's target.
#include "iron/codegen/compile.hpp"

#include "iron/codegen/emit.hpp"
#include "iron/codegen/passes/lower_warpgroup_products.hpp"
#include "iron/codegen/targets.hpp"

namespace iron::codegen {

CompiledKernel compile_kernel(const ir::Kernel& traced, const TargetProfile& target) {
  PipelineResult result = run_pipeline(traced, target);
  CompiledKernel out;
  out.symbol = kernel_symbol(result.kernel);
  out.source = target_of(target).emit(result.kernel, target);
  out.lowered = std::move(result.kernel);
  out.stats = std::move(result.stats);
  out.profile = target.name;
  out.arch_specific = target.arch_specific();
  return out;
}

CompiledKernel compile_for_cuda_device(const ir::Kernel& traced, int sm,
                                       const std::vector<bool>& specialization) {
  TargetProfile profile = TargetProfile::cuda_device(sm, has_warpgroup_products(traced));
  profile.specialization = specialization;
  return compile_kernel(traced, profile);
}

}  // namespace iron::codegen
