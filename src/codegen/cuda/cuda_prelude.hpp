/// The vector structs and helper functions between a CUDA file's includes and its kernel.
#pragma once

#include <string>

#include "cuda_dialect.hpp"

namespace iron::codegen::cuda {

/// The vector structs and helpers `needs` lists (with the helpers those call), each once, in a
/// fixed order; empty when the body needs none.
std::string cuda_prelude(const c_like::Needs& needs, const CudaDialect& dialect);

}  // namespace iron::codegen::cuda
