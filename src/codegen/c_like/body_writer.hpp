/// Writes a lowered kernel's body as C-like statements, one per emitted op.
#pragma once

#include <string>

#include "dialect.hpp"

namespace iron::codegen::c_like {

/// The statements of the body, indented for a function body: shared declarations first, then one
/// `const T vN = …;` per value something reads, mutable locals for variables, `for` and `if`
/// blocks (a blank line before each loop) and a `// file:line` comment wherever the source
/// location changes. What they need from outside the function goes to `needs`.
std::string write_body(const ir::Kernel& kernel, const Dialect& dialect, Needs& needs);

}  // namespace iron::codegen::c_like
