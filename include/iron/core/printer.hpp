/// The readable text form of Iron IR (docs/compiler.md gives the grammar).
#pragma once

#include <string>

#include "iron/core/ir.hpp"

namespace iron::ir {

struct PrintOptions {
  bool locations = true;  ///< append `; file:line` to ops traced from source
};

std::string print_kernel(const Kernel& kernel, const PrintOptions& options = {});

}  // namespace iron::ir
