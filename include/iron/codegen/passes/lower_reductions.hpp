/// Threadgroup-reduction lowering: reduce.sum/max/min become a simdgroup reduction, one partial per simdgroup in shared memory, and a final simdgroup reduction that every simdgroup performs into a register, so the partials can be reused by the next reduction without a race.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void lower_reductions(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
