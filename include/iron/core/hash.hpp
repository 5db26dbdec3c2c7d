/// A structural hash of a kernel: equal for kernels that differ only in value numbering and
/// source locations, different for any change of ops, types, attributes, params or contract.
#pragma once

#include <cstdint>

#include "iron/core/ir.hpp"

namespace iron::ir {

std::uint64_t structural_hash(const Kernel& kernel);

}  // namespace iron::ir
