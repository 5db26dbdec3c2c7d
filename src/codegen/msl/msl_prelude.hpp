/// The vector structs and helper functions between an MSL file's `using namespace` and kernel.
#pragma once

#include <string>

#include "msl_dialect.hpp"

namespace iron::codegen::msl {

/// The vector structs and helpers `needs` lists (with the helpers those call), each once, in a
/// fixed order; empty when the body needs none.
std::string msl_prelude(const c_like::Needs& needs, const MslDialect& dialect);

}  // namespace iron::codegen::msl
