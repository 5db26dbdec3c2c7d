/// Parses the text form written by print_kernel back into IR: print(parse(print(k))) == print(k).
#pragma once

#include <string_view>

#include "iron/core/ir.hpp"

namespace iron::ir {

/// The deepest nesting of blocks (loop and branch bodies) the parser accepts.
inline constexpr int kMaxBlockDepth = 256;

/// Throws IrError with "line N: …" for malformed input, including blocks nested deeper than
/// kMaxBlockDepth. Does not verify: call verify().
Kernel parse_kernel(std::string_view text);

}  // namespace iron::ir
