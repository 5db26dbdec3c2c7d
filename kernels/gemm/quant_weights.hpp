/// The quantized gemm forms' test weights and oracle (test-only): weights [n, k] in MLX's affine
/// codes or OCP MXFP4 drawn at random, each weight's value from the format's definition in
/// double, and the product with the scales of its error bound. Shared by iron_gemm's quantized
/// forms and the grouped products of the moe family.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iron/testing/data.hpp>
#include <iron/testing/tolerance.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gemm_oracle.hpp"

namespace iron::kernels {

/// A quantized weight [n, k]: its inputs (u32 words, values of T), and its codes and the
/// per-group numbers that give each weight from the format's definition, in double.
struct QuantWeights {
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> words;
  std::vector<std::pair<std::string, std::vector<float>>> values;
  std::vector<std::uint32_t> codes;  ///< one a weight
  std::vector<double> scale, bias;   ///< one a group (MXFP4: 2^(e - 127) and 0)
  std::size_t group = 1;
  bool e2m1 = false;  ///< codes are E2M1 (sign, then 0, 0.5, 1, 1.5, 2, 3, 4, 6), else integers

  /// Weight i (row-major): scale · q + bias, or scale · e2m1(q).
  double w(std::size_t i) const {
    constexpr double kMagnitude[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
    const std::uint32_t q = codes[i];
    const std::size_t g = i / group;
    if (e2m1) return (q & 8u ? -1.0 : 1.0) * kMagnitude[q & 7u] * scale[g];
    return scale[g] * q + bias[g];
  }
};

/// MLX affine codes of `bits` bits in groups of `group` along each row: random codes, scales in
/// [lo, hi), biases of either sign up to the scale times the largest code.
inline QuantWeights affine_weights(std::size_t n, std::size_t k, std::size_t bits,
                                   std::size_t group, float lo, float hi, DType dt,
                                   testing::Rng& rng) {
  const std::size_t count = n * k;
  const std::uint32_t levels = 1u << bits;
  QuantWeights q;
  q.group = group;
  q.codes = rng.integers(count, 0, levels);
  std::vector<std::uint32_t> words(count * bits / 32, 0);
  for (std::size_t i = 0; i < count; ++i) words[i * bits / 32] |= q.codes[i] << (i * bits % 32);
  const auto scales = testing::round_through(rng.uniform(count / group, lo, hi), dt);
  auto biases = rng.uniform(count / group, -1.0f, 1.0f);
  for (std::size_t g = 0; g < biases.size(); ++g) {
    biases[g] *= scales[g] * static_cast<float>(levels - 1);
  }
  biases = testing::round_through(biases, dt);
  q.scale.assign(scales.begin(), scales.end());
  q.bias.assign(biases.begin(), biases.end());
  q.words.emplace_back("packed", std::move(words));
  q.values.emplace_back("scales", scales);
  q.values.emplace_back("biases", biases);
  return q;
}

/// MXFP4: random E2M1 codes and block exponents e in [lo, hi), the block's scale 2^(e - 127).
inline QuantWeights mxfp4_weights(std::size_t n, std::size_t k, std::uint32_t lo, std::uint32_t hi,
                                  testing::Rng& rng) {
  const std::size_t count = n * k;
  QuantWeights q;
  q.group = 32;
  q.e2m1 = true;
  q.codes = rng.integers(count, 0, 16);
  auto exponents = rng.integers(count / 32, lo, hi);
  std::vector<std::uint32_t> words(count / 8, 0);
  for (std::size_t i = 0; i < count; ++i) words[i / 8] |= q.codes[i] << (4 * (i % 8));
  for (const std::uint32_t e : exponents)
    q.scale.push_back(std::ldexp(1.0, static_cast<int>(e) - 127));
  q.words.emplace_back("packed", std::move(words));
  q.words.emplace_back("scales", std::move(exponents));
  return q;
}

/// The definition in double, out[i, j] = Σ_p x[i, p] · w[j, p], with the error bound's scales.
inline ProductExpected quant_gemm_oracle(const std::vector<float>& x, const QuantWeights& q,
                                         std::size_t m, std::size_t n, std::size_t k) {
  return product_oracle(x, m, n, k,
                        [&](std::size_t, std::size_t j, std::size_t p) { return q.w(j * k + p); });
}

}  // namespace iron::kernels
