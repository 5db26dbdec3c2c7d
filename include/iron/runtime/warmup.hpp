/// Compiling a set of kernels into the disk module cache ahead of their first launch, in
/// parallel (`iron warmup`), so that an application's first call loads instead of compiling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::runtime {

/// Where a compiled module's fragment and warpgroup products run: none; on the CUDA cores (f32
/// fragments, which every CUDA strategy multiplies with fma); on the tensor cores.
enum class Products : std::uint8_t { None, CudaCores, TensorCores };

/// What warming one kernel form did.
struct WarmupResult {
  std::string symbol;                  ///< "<kernel>_<dtype>"
  bool compiled = false;               ///< false: its cubin was already in the cache
  Products products = Products::None;  ///< the module's products (the latency report's classes)
  double ms = 0.0;                     ///< the pipeline, NVRTC and the store (or the cache check)
  std::string error;                   ///< non-empty: it failed, and why
};

/// A traced kernel and the specialization (docs/compiler.md, "Specializations") to compile it
/// with: the values a launch's constexprs give (ir::specialization_for, so that a model's own
/// shapes are warmed), or ir::usual_specialization.
struct WarmupForm {
  ir::Kernel kernel;
  std::vector<bool> specialization;
};

/// Compiles each form for a CUDA device of compute capability `sm` × 10 with the profile
/// launches use (TargetProfile::cuda_device, so IRON_CUDA_MMA counts) and its specialization,
/// and stores its cubin in the disk module cache under the key a launch binding those values
/// looks up, `jobs` at a time; forms already cached are only checked. Needs NVRTC and a cache
/// folder (module_store()), not a GPU. Never throws for one form (its error is in the result);
/// throws iron::Error when there is no cache folder or no NVRTC. Results are in the order of
/// `forms`.
std::vector<WarmupResult> warm_module_cache(const std::vector<WarmupForm>& forms, int sm,
                                            unsigned jobs);

/// warm_module_cache of each kernel with its usual specialization (every one true: the aligned
/// shapes).
std::vector<WarmupResult> warm_module_cache(const std::vector<ir::Kernel>& kernels, int sm,
                                            unsigned jobs);

/// Milliseconds cuModuleLoadData takes for `cubin` on this machine's device (the module is
/// unloaded again): the device half of a warm first launch. nullopt without CUDA.
std::optional<double> time_module_load(std::span<const std::byte> cubin);

}  // namespace iron::runtime
