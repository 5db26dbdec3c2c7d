/// The MSL prelude helpers that lower tensor-core fragments to simdgroup 8×8 matrices.
#pragma once

#include <vector>

#include "../c_like/prelude.hpp"

namespace iron::codegen::msl {

/// The fragment helpers, callees first: iron_frag, iron_frag_fill, iron_frag_load,
/// iron_frag_store, iron_frag_mma, iron_frag_row_reduce, iron_frag_convert.
const std::vector<c_like::Helper>& fragment_helpers();

}  // namespace iron::codegen::msl
