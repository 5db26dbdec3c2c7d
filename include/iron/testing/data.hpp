/// Test data: seeded random inputs, rounding through a dtype, and packing to and from bytes.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "iron/core/dtype.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::testing {

/// A seeded generator; the seed is printed by the runner so any run can be repeated.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  std::vector<float> uniform(std::size_t n, float lo, float hi);
  std::vector<float> normal(std::size_t n, float mean = 0.0f, float stddev = 1.0f);
  /// Integers in [lo, hi): hi is excluded, so integers(n, 0, rows) gives valid row indices.
  std::vector<std::uint32_t> integers(std::size_t n, std::uint32_t lo, std::uint32_t hi);

 private:
  std::mt19937_64 engine_;
};

/// The values `v` becomes once stored as `dt` (f16/bf16 rounding, integer truncation).
std::vector<float> round_through(const std::vector<float>& v, DType dt);
runtime::HostTensor pack(const std::vector<float>& v, DType dt);
runtime::HostTensor pack_u32(const std::vector<std::uint32_t>& v, DType dt);
std::vector<float> unpack(const runtime::HostTensor& t);
/// An output before a run: NaN for float dtypes, 0xFF bytes otherwise, so unwritten elements show.
runtime::HostTensor poisoned(DType dt, std::size_t count);
/// Whether `value` is a whole number that integer (or bool) dtype `dt` can hold exactly.
bool holds_integer(DType dt, double value);

}  // namespace iron::testing
