/// NumPy .npy files (format 1.0 to 3.0, little-endian, C order): read into and write from
/// HostTensor, for `iron run` on the user's own data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iron/runtime/launch.hpp"

namespace iron::testing {

struct NpyArray {
  runtime::HostTensor tensor;
  std::vector<std::uint64_t> shape;
};

/// Reads `path`. Supported element types: <f4 <f2 <i4 <u4 <u2 |u1 |i1 |b1, and |V2 read as raw
/// bf16 bits. Throws iron::Error naming the file for anything else (Fortran order, big-endian,
/// a truncated file).
NpyArray read_npy(const std::string& path);

/// Writes `array` to `path`. bf16 has no NumPy type, so bf16 data is written as <f4 (exact).
void write_npy(const std::string& path, const NpyArray& array);

}  // namespace iron::testing
