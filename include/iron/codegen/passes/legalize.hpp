/// Target legalization: f16/bf16 arithmetic the target cannot do natively is widened to f32 and
/// rounded back; bf16 is refused on Metal versions that lack bfloat.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void legalize(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
