/// Lane-wise arithmetic on slots: ir::evaluate applied to the active threads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "program.hpp"

namespace iron::runtime::sim {

/// The threads an op runs for: linear thread ids within the group, increasing.
using Active = std::span<const std::uint32_t>;

/// r[t] = the pure op `in` on operands[0..in.operands)[t], through ir::evaluate, for every active
/// thread t in order. Returns the first thread whose integer division or remainder divides by
/// zero (its result and those of the threads after it are not written), nullopt when none does.
std::optional<std::uint32_t> evaluate_lanes(const Instr& in, Active active, Slot* r,
                                            const Slot* const* operands);

/// The binary op `combiner` on one pair of values of type t.
Slot combine(ir::OpKind combiner, DType t, Slot a, Slot b);

}  // namespace iron::runtime::sim
