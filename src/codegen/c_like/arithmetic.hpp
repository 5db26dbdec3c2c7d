/// Expressions of the lane-wise ops: unary, binary, compare, select, fma, cast and bitcast.
#pragma once

#include <string>

#include "context.hpp"

namespace iron::codegen::c_like {

/// The expression for `op`, an op of one of those kinds, with the simulator's semantics:
/// f16/bf16 math computed in f32 and rounded once, narrow integers wrapped, shifts modulo 32.
std::string arithmetic_expression(const ir::Op& op, const Context& cx);

}  // namespace iron::codegen::c_like
