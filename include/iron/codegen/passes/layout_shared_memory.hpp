/// Shared-memory layout: gives every threadgroup allocation an aligned byte offset, sets the
/// kernel's total, and refuses kernels over the target's limit.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void layout_shared_memory(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
