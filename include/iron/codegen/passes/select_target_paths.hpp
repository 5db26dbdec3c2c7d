/// Target queries answered: every target.has becomes the constant the target gives, each branch
/// on one keeps only the path the target takes, and shared allocations that only the dropped
/// paths used go away (docs/compiler.md, "select_target_paths").
#pragma once

#include <functional>

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

/// Whether `target` has `feature`: WarpgroupProducts on the sm_90a profile (MmaStrategy::Wgmma).
bool target_has(const TargetProfile& target, ir::TargetFeature feature);

/// Whether `kernel` asks about its target (has a target.has op).
bool has_target_queries(const ir::Kernel& kernel);

/// Answers every target.has of `kernel` with `answer(feature)`; an if on an answered query is
/// replaced by the block it takes; allocations that only the removed blocks accessed are removed.
void select_target_paths(ir::Kernel& kernel, const std::function<bool(ir::TargetFeature)>& answer);

/// The same with the answers of `target`.
void select_target_paths(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
