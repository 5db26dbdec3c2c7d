/// Bounded unrolling: loops with constant bounds and at most a small number of iterations (and a
/// small body) are replaced by copies of their body with the induction value as a constant.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void unroll_loops(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
