/// Register promotion: a register array (`regs`) whose every access has a constant index, once
/// loops are unrolled and constants folded, becomes one variable per element, so the emitters
/// write plain scalars that live in registers and never in local memory.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void promote_registers(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
