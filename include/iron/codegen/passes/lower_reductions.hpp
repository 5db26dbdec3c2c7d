/// Threadgroup-reduction lowering: reduce.sum/max/min become a simdgroup reduction, one partial per
/// simdgroup in shared memory, a final simdgroup reduction in every simdgroup, then a barrier, so
/// the next reduction or loop iteration can reuse the partials without a race.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void lower_reductions(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
