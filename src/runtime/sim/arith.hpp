/// Lane-wise typed arithmetic on slots: each function applies one op to the active threads.
#pragma once

#include <cstdint>
#include <span>

#include "iron/core/ir.hpp"
#include "value.hpp"

namespace iron::runtime::sim {

/// The threads an op runs for: linear thread ids within the group, increasing.
using Active = std::span<const std::uint32_t>;

/// Whether the unary, binary, compare (t = operand type) or fma op is defined on type t.
bool arith_defined(ir::OpKind k, DType t);

/// r[i] = k(a[i]) (and b[i], c[i]) for every active i, rounded or wrapped to t. Integer division
/// and remainder by zero give 0; callers report them first.
void run_unary(ir::OpKind k, DType t, Active active, Slot* r, const Slot* a);
void run_binary(ir::OpKind k, DType t, Active active, Slot* r, const Slot* a, const Slot* b);
void run_compare(ir::OpKind k, DType t, Active active, Slot* r, const Slot* a, const Slot* b);
void run_fma(DType t, Active active, Slot* r, const Slot* a, const Slot* b, const Slot* c);

/// The binary op that an atomic, simd or reduce op k combines values with (k itself otherwise).
ir::OpKind combiner_of(ir::OpKind k);

/// The binary op k on one pair of values.
Slot combine(ir::OpKind k, DType t, Slot a, Slot b);

}  // namespace iron::runtime::sim
