/// One call from a traced kernel to target source: the pipeline for the target's profile,
/// then the emitter its registry entry names. Shared by `iron inspect`, `build`, `snap` and
/// `diff`.
#pragma once

#include <string>
#include <vector>

#include "iron/codegen/pipeline.hpp"
#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

struct CompiledKernel {
  std::string symbol;  ///< the function name in the emitted source ("<kernel>_<dtype>")
  ir::Kernel lowered;  ///< the IR after the pipeline
  std::string source;  ///< in the language of the profile's target (CUDA C++, MSL)
  std::vector<PassStat> stats;
  std::string profile;         ///< the profile it was compiled for ("sm_90a")
  bool arch_specific = false;  ///< CUDA: NVRTC compiles it for sm_NNa (TargetProfile)
};

CompiledKernel compile_kernel(const ir::Kernel& traced, const TargetProfile& target);

/// The code a launch on a CUDA device of compute capability `sm` × 10 loads: compile_kernel
/// with TargetProfile::cuda_device's profile for the kernel (wgmma where it has warpgroup
/// products) and its specializations bound to `specialization` (none when empty).
CompiledKernel compile_for_cuda_device(const ir::Kernel& traced, int sm,
                                       const std::vector<bool>& specialization);

}  // namespace iron::codegen
