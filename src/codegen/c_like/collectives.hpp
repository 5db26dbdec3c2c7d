/// Expressions of the simdgroup ops: reductions, prefix sums, shuffles and broadcasts.
#pragma once

#include <string>

#include "context.hpp"

namespace iron::codegen::c_like {

/// The expression for `op`, a simd.* op. Values narrower than 32 bits go through a 32-bit type
/// (f16/bf16 through f32, so sums accumulate in f32 and round once, as in the simulator).
std::string simd_expression(const ir::Op& op, const Context& cx);

}  // namespace iron::codegen::c_like
