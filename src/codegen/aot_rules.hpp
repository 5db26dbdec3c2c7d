/// The launch rules an AOT bundle checks on the host before each launch: everything of the
/// dispatch contract that the launch function's arguments carry (the grid, the threads per
/// group against a constexpr, constexpr multiples and ranges); only the buffers' sizes are left,
/// since a device pointer does not carry one.
#pragma once

#include <string>

#include "iron/core/ir.hpp"

namespace iron::codegen::aot {

/// The header's checked 64-bit arithmetic and comparisons (namespace detail of the bundle), as
/// Iron's dispatch guard evaluates contract expressions: an overflow or a division by zero
/// refuses the launch.
std::string rules_preamble();

/// `inline void check_SYMBOL(Dim3 groups, Dim3 threads, constexprs…)`, throwing iron_aot::Error
/// with the rule, the values and the bound when a launch breaks one.
std::string check_function(const ir::Kernel& kernel);

/// The call of check_function's function, with the launch function's own parameter names.
std::string check_call(const ir::Kernel& kernel);

}  // namespace iron::codegen::aot
