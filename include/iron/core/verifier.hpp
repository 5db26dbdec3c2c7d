/// Checks that IR is well formed: types, scopes, structure and the dispatch contract.
#pragma once

#include <string>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::ir {

/// Every problem found, each as "kernel K: file:line: what"; empty when the kernel is valid.
std::vector<std::string> verify(const Kernel& kernel);

/// Throws IrError listing every problem when verify() finds any.
void verify_or_throw(const Kernel& kernel);

}  // namespace iron::ir
