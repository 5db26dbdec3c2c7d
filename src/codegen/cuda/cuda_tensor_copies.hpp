/// Hopper's tensor-memory-accelerator copies and mbarriers in CUDA (sm_90a): copy.tensor as
/// `cp.async.bulk.tensor.2d` from a `__grid_constant__` tensor map, mbar.* as `mbarrier.*`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../c_like/dialect.hpp"
#include "../c_like/prelude.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen::cuda {

/// The helpers the statements below call: the tensor map type, the copy and the mbarrier ops.
const std::vector<c_like::Helper>& tensor_copy_helpers();

std::string tensor_map_name(std::size_t k);
std::string tensor_map_param(std::size_t k);
std::string tensor_copy(const std::string& dst, std::size_t map,
                        const std::vector<std::string>& coordinates, const std::string& bar,
                        c_like::Needs& needs);
std::string mbarrier(ir::OpKind kind, const std::string& bar, std::int64_t count,
                     const std::string& parity, c_like::Needs& needs);

}  // namespace iron::codegen::cuda
