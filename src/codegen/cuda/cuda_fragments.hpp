/// The CUDA prelude helpers that lower tensor-core fragments: the fragment type with its lane
/// map, element-wise and ldmatrix loads, stores, and the two multiply strategies.
#pragma once

#include <vector>

#include "../c_like/prelude.hpp"

namespace iron::codegen::cuda {

/// The fragment helpers, callees first: iron_frag, iron_frag_fill, iron_frag_load,
/// iron_frag_store, iron_frag_load_shared, iron_frag_mma_sync, iron_frag_mma_software,
/// iron_frag_row_reduce, iron_frag_convert.
const std::vector<c_like::Helper>& fragment_helpers();

}  // namespace iron::codegen::cuda
