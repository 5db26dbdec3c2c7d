/// What the passes ask of an op before they move, merge or delete it, read from the op table's
/// traits so that a new op answers correctly by its table row alone.
#pragma once

#include "iron/core/ir.hpp"

namespace iron::codegen {

/// Must be reached by every thread of a simdgroup or group together (simd.*, reduce.*,
/// barrier): never moved into or out of control flow, never duplicated into a branch.
inline bool is_convergent(const ir::Op& op) { return ir::op_info(op.kind).has(ir::kConvergent); }

/// Reads memory or a variable that may change, and writes nothing (load, shared.load,
/// var.load): merged only while no store intervenes. Atomics, which also write, are not.
inline bool reads_memory(const ir::Op& op) {
  const ir::OpInfo& info = ir::op_info(op.kind);
  return info.has(ir::kReadsMemory) && !info.has(ir::kWritesMemory);
}

/// A pure function of its operands and attributes (safe to fold, merge, hoist or delete).
inline bool is_pure(const ir::Op& op) { return ir::op_info(op.kind).has(ir::kPure); }

}  // namespace iron::codegen
