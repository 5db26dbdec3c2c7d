/// Checks on emitted kernel source: the MSL syntax and type check, and the empty-body scan.
#pragma once

#include <string>
#include <vector>

namespace iron::checks {

/// Type-checks MSL source with clang (`clang++` or `clang` on PATH; iron::Error if neither is
/// there) as C++17 against the shim header tools/msl_shim/metal_stdlib. THIS IS NOT APPLE'S
/// COMPILER: it checks syntax, and types only against the shim's own declarations of the Metal
/// types and functions, so code that passes may still be rejected by Metal. The shim folder is
/// $IRON_MSL_SHIM_DIR when set, else the one this build was configured with. Returns "" when
/// clang accepts the source, else clang's diagnostics.
std::string check_msl(const std::string& source);

/// Finds `{ }` blocks with nothing but whitespace and comments inside, right after `for (...)`,
/// `if (...)`, `else` or a kernel signature (CUDA `__global__` or MSL `kernel`), in CUDA or MSL
/// text. Each finding is "FILE:LINE: empty for-loop body" (or "empty if body", "empty else
/// body", "empty kernel body"), LINE being the line of the `{`.
std::vector<std::string> find_empty_bodies(const std::string& source, const std::string& file);

}  // namespace iron::checks
