/// Hopper's warpgroup products in CUDA (sm_90a): wg.mma as `wgmma.mma_async` on shared-memory
/// matrix descriptors, wg.commit and wg.wait as its commit and wait groups, fence.proxy.async.
#pragma once

#include <string>
#include <vector>

#include "../c_like/dialect.hpp"
#include "../c_like/prelude.hpp"

namespace iron::codegen::cuda {

/// The helpers the statements below call: the descriptor, the register fences, and one product
/// per width N (8 … 256) and element type.
const std::vector<c_like::Helper>& warpgroup_helpers();

std::string wgmma_product(const c_like::WarpgroupProduct& p, c_like::Needs& needs);
std::string wgmma_commit();
std::string wgmma_wait(const std::string& d, std::uint32_t n, int pending, c_like::Needs& needs);
std::string wgmma_proxy_fence();

}  // namespace iron::codegen::cuda
