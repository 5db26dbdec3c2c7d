/// A traced kernel made launchable on the CUDA device: compiled (through the module cache),
/// its function loaded, and what each launch needs to know about it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver.hpp"
#include "iron/core/ir.hpp"

namespace iron::runtime::cuda {

struct PreparedKernel {
  std::string symbol;
  CUfunction function = nullptr;
  std::uint64_t max_threads = 0;           ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  unsigned int dynamic_shared = 0;         ///< bytes of dynamic shared memory each launch asks for
  std::vector<ir::TensorMap> tensor_maps;  ///< what each launch encodes (encode_tensor_maps)
};

/// Compiles `kernel` for a device of compute capability `sm` × 10 (the profile of
/// TargetProfile::cuda_device) with its specializations bound to `specialization` (none when
/// empty), loads it in the current context and opts it in to its dynamic shared memory. Throws
/// iron::Error naming the kernel on a failure.
PreparedKernel prepare_kernel(const ir::Kernel& kernel, int sm,
                              const std::vector<bool>& specialization = {});

/// Throws DispatchError when `threads` per group exceed what the compiled function allows.
void check_threads(const ir::Kernel& kernel, const PreparedKernel& prepared, std::uint64_t threads);

}  // namespace iron::runtime::cuda
