/// The process's loaded CUDA modules, one per kernel key: reused from memory, else read from the
/// disk cache, else compiled with NVRTC (and stored).
#pragma once

#include <string>

#include "driver.hpp"
#include "iron/codegen/compile.hpp"

namespace iron::runtime::cuda {

/// The key of `compiled` (the pipeline's output for sm_`sm`) in the module cache:
/// module_cache_key() over its lowered IR, the architecture, Iron's and NVRTC's versions and the
/// source.
std::string module_key(const codegen::CompiledKernel& compiled, int sm);

/// The module of `compiled` (the pipeline's output for sm_`sm`), loaded into the current
/// context, which must be the device's primary context. Keyed by module_cache_key(); records one
/// CacheEvent per call (a compile, a disk hit with any rejected entry before it, or a memory
/// hit). Thread-safe: concurrent calls for one key load it once. Throws iron::Error naming the
/// kernel when NVRTC or the driver fails.
CUmodule load_module(const codegen::CompiledKernel& compiled, int sm);

/// Opts `function` (loaded from `compiled`) in to the dynamic shared memory its kernel declares
/// past CUDA's static limit (cuFuncSetAttribute); returns the bytes each of its launches must
/// ask for: 0 for a kernel with static shared memory only.
unsigned int opt_in_shared_memory(CUfunction function, const codegen::CompiledKernel& compiled);

}  // namespace iron::runtime::cuda
