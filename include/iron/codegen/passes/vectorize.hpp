/// Vectorization: contiguous loads and stores of consecutive elements (strided loops, and runs
/// of scalar accesses in straight-line code) become 8- or 16-byte vector accesses where alignment
/// and bounds are provable from literals, `require` rules and branch conditions (a loop is
/// versioned on a divisibility check when they are not).
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void vectorize(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
