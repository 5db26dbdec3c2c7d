/// Algebraic simplification and strength reduction: x+0, x*1, x*0 (integers), x-x, double negation,
/// casts to the same type, select on equal arms; multiplication, division and remainder of unsigned
/// integers by powers of two become shifts and masks.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void simplify(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
