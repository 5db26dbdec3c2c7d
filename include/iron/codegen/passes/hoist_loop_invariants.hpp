/// Loop-invariant code motion: pure ops inside a loop whose operands are all defined outside it
/// move in front of the loop.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void hoist_loop_invariants(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
