/// Shared-memory layout: gives every threadgroup allocation an aligned byte offset (an overlay
/// its base's where it fits there), sets the kernel's total, and refuses kernels over the
/// target's limit.
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

void layout_shared_memory(ir::Kernel& kernel, const TargetProfile& target);

/// The bytes layout_shared_memory gives the kernel's allocations on CUDA (sizes as they stand:
/// a ring's one stage before expand_pipelines, so an overlay wider than that stage counts bytes
/// of its own, as in a launch whose ring keeps one stage), the sides of launch-constant branches
/// sharing bytes where the memory is dynamic: the dispatch guard's measure of what a launch
/// needs.
std::uint64_t cuda_shared_footprint(const ir::Kernel& kernel);

/// Whether two allocations of a laid-out kernel (overlays aside) share bytes: the sides of a
/// launch-constant branch placed together, which a target of one array an allocation must
/// declare as views of one block instead.
bool allocations_share_bytes(const ir::Kernel& kernel);

/// Whether allocation `a` of `kernel` is an overlay that lies in its base's bytes: no wider than
/// its base as the sizes stand (a ring as its pipelines were expanded). A wider one (its base a
/// ring that this launch or target keeps at fewer stages) takes bytes of its own, as any other
/// allocation; the two are never live at once, so either placement computes the same.
bool overlay_in_base(const ir::Kernel& kernel, const ir::SharedAlloc& a);

}  // namespace iron::codegen
