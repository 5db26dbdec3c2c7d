/// Where values are defined and used across a kernel, for passes that look past the op at hand.
#pragma once

#include <unordered_map>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::ir {

/// The op that defines each value. Pointers stay valid until the kernel's blocks change.
std::unordered_map<ValueId, const Op*> definitions(const Kernel& kernel);

/// The ops that read each value, in program order (an op reading a value twice is listed twice).
/// Pointers stay valid until the kernel's blocks change.
std::unordered_map<ValueId, std::vector<const Op*>> users(const Kernel& kernel);

}  // namespace iron::ir
