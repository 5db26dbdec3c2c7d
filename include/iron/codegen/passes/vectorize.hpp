/// Vectorization: contiguous loads and stores of consecutive elements become 8- or 16-byte vector
/// accesses where alignment and bounds are provable (loop versioning on a constexpr divisibility
/// check when needed).
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void vectorize(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
