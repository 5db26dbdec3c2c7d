/// Common-subexpression elimination: a pure op equal to one already computed in the same or an
/// enclosing block reuses that value; loads are merged only when no store, atomic or barrier can
/// intervene.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void eliminate_common_subexpressions(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
