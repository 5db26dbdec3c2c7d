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
#pragma once

#include "iron/core/ir.hpp"
#include "iron/dsl/expr.hpp"

namespace iron::dsl {

using ir::TargetFeature;

namespace detail {
ir::ValueId record_target_has(TargetFeature feature);
}  // namespace detail

/// Whether the target the kernel is compiled for has `feature`: a constant on each target.
inline Expr<bool> target_has(TargetFeature feature,
                             SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  return Expr<bool>::wrap(detail::record_target_has(feature));
}

}  // namespace iron::dsl
