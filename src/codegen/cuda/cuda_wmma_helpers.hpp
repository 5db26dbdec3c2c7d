/// The CUDA prelude helpers of the wmma strategy: fragments held as nvcuda::wmma 16×16×16 tiles,
/// their loads, stores and product, and the per-warp shared scratch that makes every op right
/// whatever layout wmma gives its fragments.
#pragma once

#include <vector>

#include "../c_like/prelude.hpp"

namespace iron::codegen::cuda {

/// The wmma helpers, callees first: iron_wmma, iron_wmma_fill, iron_wmma_load, iron_wmma_store,
/// iron_wmma_mma, iron_wmma_acc_slots, iron_wmma_row_reduce, iron_wmma_row_value,
/// iron_wmma_convert.
const std::vector<c_like::Helper>& wmma_helpers();

}  // namespace iron::codegen::cuda
