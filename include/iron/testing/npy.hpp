/// NumPy .npy files (format 1.0 to 3.0, little-endian, C order): read into and write from
/// HostTensor, for `iron run` on the user's own data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iron/runtime/launch.hpp"

namespace iron::testing {

struct NpyArray {
  runtime::HostTensor tensor;
  std::vector<std::uint64_t> shape;
};

/// The longest header read_npy accepts (NumPy writes well under 1 KiB), and the most dimensions.
inline constexpr std::uint64_t kMaxNpyHeaderBytes = 65536;
inline constexpr std::size_t kMaxNpyDims = 64;

/// The product of `shape`'s dimensions (1 for a scalar), or nullopt when it overflows 64 bits.
std::optional<std::uint64_t> element_count(const std::vector<std::uint64_t>& shape);

/// Reads `path`. Supported element types: <f4 <f2 <i4 <u4 <u2 |u1 |i1 |b1, and |V2 read as raw
/// bf16 bits. Throws iron::Error naming the file for anything else: not a regular file, a bad
/// magic or version, a header longer than kMaxNpyHeaderBytes or not a {descr, fortran_order,
/// shape} dict, a negative or over-wide dimension, Fortran order, big-endian, a data size that
/// overflows or differs from the file's. Allocates no more than the file's own size.
NpyArray read_npy(const std::string& path);

/// Writes `array` to `path`. bf16 has no NumPy type, so bf16 data is written as <f4 (exact).
/// Throws iron::Error when the shape's element count is not the data's (or overflows).
void write_npy(const std::string& path, const NpyArray& array);

}  // namespace iron::testing
