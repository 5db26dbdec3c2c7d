/// Parses the text form written by print_kernel back into IR: print(parse(print(k))) == print(k).
#pragma once

#include <string_view>

#include "iron/core/ir.hpp"

namespace iron::ir {

/// Throws IrError with "line N: …" for malformed input. Does not verify: call verify().
Kernel parse_kernel(std::string_view text);

}  // namespace iron::ir
