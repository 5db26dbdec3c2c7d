/// Target queries answered: every target.has becomes the constant the target gives, each branch
/// on one keeps only the path the target takes, and shared allocations that only the dropped
/// paths used go away (docs/compiler.md, "select_target_paths"). Specializations
/// (iron/core/specialization.hpp) the profile binds are answered alike; the others become their
/// conditions.
#pragma once

#include <functional>
#include <vector>

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

/// Whether `target` has `feature`: WarpgroupProducts on the sm_90a profile (MmaStrategy::Wgmma).
bool target_has(const TargetProfile& target, ir::TargetFeature feature);

/// Whether `kernel` asks about its target (has a target.has op).
bool has_target_queries(const ir::Kernel& kernel);

/// Whether `kernel` has specializations (specialize ops).
bool has_specializations(const ir::Kernel& kernel);

/// Answers every target.has of `kernel` with `answer(feature)` and bindable specialization i
/// (ir::bindable_specializations) with specialization[i] where there is one; an if on an
/// answered query is replaced by the block it takes; allocations that only the removed blocks
/// accessed are removed. Specializations left unbound become their conditions.
void select_target_paths(ir::Kernel& kernel, const std::function<bool(ir::TargetFeature)>& answer,
                         const std::vector<bool>& specialization = {});

/// The same with the answers and the specialization of `target`.
void select_target_paths(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
