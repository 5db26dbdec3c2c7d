/// Dead-code elimination: pure ops whose results are unused, vars never read, and loops or branches
/// left with empty bodies (header and all, never an empty body) are removed.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void eliminate_dead_code(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
