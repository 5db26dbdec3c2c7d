/// Evaluation of ops on constant operands with the semantics every backend shares
/// (ir::evaluate), for the passes that fold constants, count loop trips and recognise special
/// constants: a thin layer that refuses what must stay for run time.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "iron/core/evaluate.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

/// A constant as the simulator holds it: f32 bits (f16 and bf16 values rounded to their type),
/// integer bits wrapped to the type's width (i8 sign-extended), or a bool as 0 or 1. A type of
/// its own, so that a call of evaluate() below never also matches ir::evaluate.
struct ConstValue : ir::ScalarValue {};

/// The value of a Const op.
ConstValue const_value(const ir::Op& constant);
/// The constant of `type` holding the integer `v` (wrapped) or, for a float type, its value.
ConstValue const_of(DType type, std::int64_t v);

/// Turns `op` into a Const op holding `v`; its result and location stay.
void set_constant(ir::Op& op, ConstValue v);

/// The result of an op of `kind` and result `type` on constant operands (unary, binary,
/// compare, select, fma, cast, bitcast), or nullopt when it must stay for run time: integer
/// division by zero, results the GPU languages leave undefined or implementation-defined
/// (INT_MIN / -1, shifts by the type's width or more, shifts of negative values), NaN results
/// (their bits are host-specific), and ops that are not defined on the operands' types.
std::optional<ConstValue> evaluate(ir::OpKind kind, DType type, std::span<const ConstValue> args);

/// `a < b` in their (common) type, as the simulator compares a loop counter with its end.
bool const_less(ConstValue a, ConstValue b);

}  // namespace iron::codegen
