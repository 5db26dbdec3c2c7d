/// Test data and bounds of the fp8 products (iron_gemm_fp8_*, iron_moe_gemm_fp8_*): operands
/// exact on any accumulator or spread over the format, block scales, and the GPU accumulator's
/// assumed precision. Test code only.
#pragma once

#include <cmath>
#include <cstddef>
#include <iron/testing/data.hpp>
#include <vector>

namespace iron::kernels {

/// The accumulator precision the GPU bound assumes for 8-bit products: Hopper's 8-bit wgmma adds
/// with fewer bits than f32 (DeepSeek-V3 report, §3.3.2, measures about 14 on H800).
inline constexpr double kFp8SumRoundoff = 0x1p-12;

/// γ_k for a unit roundoff u: k·u / (1 − k·u).
inline double gamma_of(std::size_t k, double u) {
  const double ku = static_cast<double>(k) * u;
  return ku / (1.0 - ku);
}

/// 8-bit operands: EXACT, integers in [-3, 3] (every partial sum of up to 455 products an integer
/// below 2^12, so any accumulator of 12 or more bits sums them exactly); else uniform in [-8, 8]
/// rounded to the format, every exponent from its subnormals up.
inline std::vector<float> fp8_operand(std::size_t count, DType format, bool exact,
                                      testing::Rng& rng) {
  if (!exact) return testing::round_through(rng.uniform(count, -8.0f, 8.0f), format);
  std::vector<float> v = rng.uniform(count, -3.49f, 3.49f);
  for (float& x : v) x = std::round(x);
  return v;
}

/// Block scales: EXACT, powers of two from 1/4 to 2 (the scaled sums stay exact); else uniform
/// in [0.01, 1].
inline std::vector<float> fp8_block_scales(std::size_t count, bool exact, testing::Rng& rng) {
  std::vector<float> s = rng.uniform(count, exact ? -2.0f : 0.01f, exact ? 1.99f : 1.0f);
  if (exact) {
    for (float& x : s) x = std::ldexp(1.0f, static_cast<int>(std::floor(x)));
  }
  return s;
}

}  // namespace iron::kernels
