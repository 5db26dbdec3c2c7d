/// If-conversion: a branch whose arms only compute pure values and assign vars becomes selects; a
/// branch that loads, stores, synchronises or calls a collective is never predicated.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void convert_ifs(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
