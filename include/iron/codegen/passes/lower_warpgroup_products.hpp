/// Warpgroup products on targets without a warpgroup instruction: each wg.mma becomes its
/// simdgroup's own fragment loads and products, and, once no wg.mma is left, wg.commit, wg.wait
/// and fence.proxy.async go away (docs/compiler.md, "lower_warpgroup_products").
#pragma once

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

/// Whether `target` runs wg.mma `op` of `kernel` as one Hopper instruction: an sm_90a profile
/// (MmaStrategy::Wgmma), both operands in allocations of 128-byte swizzled rows with one row as
/// their constant stride, and B column-major ([n, k]).
bool runs_as_wgmma(const ir::Kernel& kernel, const ir::Op& op, const TargetProfile& target);

/// Whether `kernel` has warpgroup products (wg.mma): on a compute capability 9.0 device it is
/// compiled for sm_90a (TargetProfile::cuda_device).
bool has_warpgroup_products(const ir::Kernel& kernel);

void lower_warpgroup_products(ir::Kernel& kernel, const TargetProfile& target);

}  // namespace iron::codegen
