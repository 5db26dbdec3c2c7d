/// Target queries (docs/tensor-cores.md, "One source, each target's path"): a kernel branches on
/// what the target it is compiled for has, and each target compiles only its own branch.
///
///   IRON_IF(target_has(TargetFeature::WarpgroupProducts)) { … 128×256 tiles, wgmma … }
///   IRON_ELSE { … tiles that fit any target's shared memory … }
///
/// The compiler's first pass (select_target_paths) turns the query into a constant, keeps the
/// branch on it that the target takes and drops the other one with the shared memory only that
/// branch used. Both paths must compute the same results: the simulator runs a kernel with
/// queries once per answer and reports any output element that differs.
///
/// Specializations do the same for what a launch's constexpr arguments decide:
///
///   IRON_IF(specialized(k % 8u == 0u)) { … 16-byte copies … } IRON_ELSE { … any k … }
///
/// compiles, for CUDA, one module per value of the condition, each with its branch alone; the
/// launch loads the one its arguments select (iron/core/specialization.hpp).
#pragma once

#include "iron/core/ir.hpp"
#include "iron/dsl/expr.hpp"

namespace iron::dsl {

using ir::TargetFeature;

namespace detail {
ir::ValueId record_target_has(TargetFeature feature);
ir::ValueId record_specialize(ir::ValueId condition);
}  // namespace detail

/// Whether the target the kernel is compiled for has `feature`: a constant on each target.
inline Expr<bool> target_has(TargetFeature feature,
                             SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  return Expr<bool>::wrap(detail::record_target_has(feature));
}

/// `condition` itself. Where it is computed from constexpr parameters and constants alone (by
/// exact operations), a launch compiles, or loads from the cache, code with the condition's value
/// for its arguments in its place, so the branch it does not take is not compiled; otherwise it
/// stays a condition. A kernel states the condition so that `true` is the usual case: `iron
/// warmup` compiles that one.
inline Expr<bool> specialized(const Expr<bool>& condition,
                              SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  return Expr<bool>::wrap(detail::record_specialize(condition.id()));
}

}  // namespace iron::dsl
