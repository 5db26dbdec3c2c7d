/// Shared-memory layout: gives every threadgroup allocation an aligned byte offset, sets the
/// kernel's total, and refuses kernels over the target's limit.
#pragma once

#include <string_view>

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void layout_shared_memory(ir::Kernel& kernel, const TargetProfile& target);

/// The bytes layout_shared_memory gives the kernel's allocations on CUDA (sizes as they stand:
/// a ring's one stage before expand_pipelines), the sides of launch-constant branches sharing
/// bytes where the memory is dynamic: the dispatch guard's measure of what a launch needs.
std::uint64_t cuda_shared_footprint(const ir::Kernel& kernel);

/// Whether two allocations of a laid-out kernel (overlays aside) share bytes: the sides of a
/// launch-constant branch placed together, which a target of one array an allocation must
/// declare as views of one block instead.
bool allocations_share_bytes(const ir::Kernel& kernel);

/// Throws TargetLimitError when an overlay is wider than its base's bytes (sizes as they stand:
/// a ring as its pipelines were expanded), naming both and the bytes `where` (say "on target
/// sm_90"): no target can place it.
void check_overlays_fit(const ir::Kernel& kernel, std::string_view where);

}  // namespace iron::codegen
