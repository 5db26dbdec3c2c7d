/// Constant folding: ops whose operands are all constants (variant parameters included, since they
/// trace as literals) become constants; branches on a constant condition keep only the taken side;
/// loops with a constant empty range disappear.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void fold_constants(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
