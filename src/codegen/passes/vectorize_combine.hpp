/// vectorize's second half: scalar loads and stores of one tensor at consecutive indices in
/// straight-line code (what unrolled per-thread chunks trace to) become vector accesses.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

/// Merges the scalar accesses of one tensor at `b + c, b + c + 1, …, b + c + L - 1` (c and the
/// steps literals) in one block into one access of L lanes, where b + c is provably a multiple of
/// L and nothing between the first and the last of them could observe the move.
void combine_accesses(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
