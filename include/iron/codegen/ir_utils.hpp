/// Small tools every pass shares: op properties, use counts, value replacement, and builders
/// for fresh ops, so passes state only their own transformation.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::codegen {

/// Writes memory, synchronises or has another effect beyond its result: never removed or moved
/// by value-based passes (stores, atomics, barriers, var.store, for, if).
bool has_side_effects(const ir::Op& op);
/// Must be reached by every thread of a simdgroup or group together (simd.*, reduce.*,
/// barrier): never moved into or out of control flow, never duplicated into a branch.
bool is_convergent(const ir::Op& op);
/// Reads memory that may change (load, shared.load, var.load): not merged across stores.
bool reads_memory(const ir::Op& op);
/// A pure function of its operands and attributes (safe to fold, merge, hoist or delete).
bool is_pure(const ir::Op& op);

/// How many times each value id is used as an argument anywhere in the kernel.
std::vector<std::uint32_t> use_counts(const ir::Kernel& kernel);

/// Rewrites every argument that is a key of `map` to its value, in all blocks.
void replace_uses(ir::Block& block, const std::unordered_map<ir::ValueId, ir::ValueId>& map);

/// A fresh value id of `kernel`.
ir::ValueId new_value(ir::Kernel& kernel);

/// A new constant op of `type` with a fresh result; floats take `value`, integers its integer
/// part.
ir::Op make_const(ir::Kernel& kernel, DType type, double value);
/// A new op of `kind` with a fresh result.
ir::Op make_op(ir::Kernel& kernel, ir::OpKind kind, DType type, std::vector<ir::ValueId> args);

/// The defining op of every value (pointers stay valid until the kernel's blocks change).
std::unordered_map<ir::ValueId, const ir::Op*> definitions(const ir::Kernel& kernel);

/// The numeric value of a Const op as a double (floats) or an integer (everything else).
double const_as_double(const ir::Op& op);
std::int64_t const_as_int(const ir::Op& op);

/// Calls `fn(block)` on the kernel body and every nested block, innermost last.
void for_each_block(ir::Block& block, const std::function<void(ir::Block&)>& fn);

/// Removes loops whose body is empty and branches whose two blocks are empty, innermost first
/// (removing one can empty its parent), so a pass that deletes ops never leaves a block the
/// verifier rejects. Returns whether anything was removed.
bool remove_empty_control_flow(ir::Block& block);

}  // namespace iron::codegen
