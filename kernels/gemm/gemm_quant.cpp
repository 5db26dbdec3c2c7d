/// iron_gemm_affine_b{4,8}_g{32,64,128}, iron_gemm_mxfp4: out[i, j] = Σ_p x[i, p] · w[j, p] on
/// tensor-core fragments, with the weight `w` [n, k] quantized along k as iron_gemv's quantized
/// forms take it (the same parameters and layouts): the prefill shape of a quantized linear layer.
///
/// The formats are those of kernels/quant/: MLX's affine mode (w = scale · q + bias per group of
/// G columns, codes packed little-endian into u32 words) and OCP MXFP4 (E2M1 codes, one E8M0
/// power of two per 32 columns). Tensor cores multiply T operands, so each decoded weight is
/// rounded to T before the product (iron_gemv keeps it exact); products accumulate in f32 and
/// only the final value is rounded to T.
///
/// ## Error bound
/// Per element, with S = Σ_p |x[i, p]| · |w[j, p]| and X = Σ_p |x[i, p]|: a weight decoded in
/// f32 (the affine fma rounds once, u = 2^-24; an MXFP4 weight is exact) and rounded to T errs by
/// at most ε·|w| + η, ε = u_T + γ_2 (u_T = 2^-24 f32, 2^-11 f16, 2^-8 bf16) and η half T's
/// smallest subnormal; the f32 sum of the k exact products of x and the rounded weights adds
/// γ_k · Σ_p |x · w_T| ≤ γ_k · ((1 + ε)·S + η·X). In all (γ_k + ε + γ_k·ε)·S + (1 + γ_k)·η·X,
/// then the rounding to T.
///
/// ## How it runs
/// gemm::product (kernels/gemm/gemm.cpp describes it) with a quantized b source
/// (kernels/gemm/quant_b.hpp): each k step, the group copies its x tile with 16-byte asynchronous
/// copies while its threads decode the step's weight tile from the codes, 8 columns (one piece,
/// in one group or block: one scale) at a time, and store it rounded to T into the b stage.
///
/// ## Layout
/// - `x [m, k]` T
/// - `packed [n, k · BITS / 32]` u32, `scales [n, k / G]` T, `biases [n, k / G]` T (affine;
///   k a multiple of G)
/// - `packed [n, k / 8]` u32, `scales [n, k / 32]` u8 (MXFP4; k a multiple of 32)
/// - `out [m, n]` T
///
/// ## Dispatch
/// Tiled: a grid of ceil(n / kBN) × ceil(m / kBM) groups of exactly kThreads threads
/// (kernels/gemm/gemm_tiles.hpp).
#include <iron/iron.hpp>

#include "gemm_tiles.hpp"
#include "quant_b.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL_TEMPLATE(iron_gemm_affine, (u32 BITS, u32 GROUP),
                     (Tensor<T> x, Tensor<u32> packed, Tensor<T> scales, Tensor<T> biases,
                      Out<T> out, Constexpr<u32> m, Constexpr<u32> n, Constexpr<u32> k)) {
  gemm::declare();
  require_multiple_of(k, GROUP);
  const std::string groups = "[n, k / " + std::to_string(GROUP) + "]";
  layout(x, "[m, k]");
  layout(packed, "[n, k / " + std::to_string(codes_per_word<BITS>) + "]");
  layout(scales, groups);
  layout(biases, groups);
  layout(out, "[m, n]");
  using Codes = gemm::AffineCodes<T, BITS, GROUP>;
  gemm::product(x, gemm::QuantB<T, Codes>{Codes{packed, scales, biases}}, m, n, k, Expr<u32>(0u),
                [&](const auto& r, const auto& c, const Expr<f32>& sum) {
                  store(out[r * n + c], cast<T>(sum));
                });
}
IRON_KERNEL_VARIANT(iron_gemm_affine, b4_g32, 4, 32);
IRON_KERNEL_VARIANT(iron_gemm_affine, b4_g64, 4, 64);
IRON_KERNEL_VARIANT(iron_gemm_affine, b4_g128, 4, 128);
IRON_KERNEL_VARIANT(iron_gemm_affine, b8_g32, 8, 32);
IRON_KERNEL_VARIANT(iron_gemm_affine, b8_g64, 8, 64);
IRON_KERNEL_VARIANT(iron_gemm_affine, b8_g128, 8, 128);

IRON_KERNEL(iron_gemm_mxfp4, (Tensor<T> x, Tensor<u32> packed, Tensor<u8> scales, Out<T> out,
                              Constexpr<u32> m, Constexpr<u32> n, Constexpr<u32> k)) {
  gemm::declare();
  require_multiple_of(k, gemm::Mxfp4Codes::kBlock);
  layout(x, "[m, k]");
  layout(packed, "[n, k / 8]");
  layout(scales, "[n, k / 32]");
  layout(out, "[m, n]");
  gemm::product(x, gemm::QuantB<T, gemm::Mxfp4Codes>{gemm::Mxfp4Codes{packed, scales}}, m, n, k,
                Expr<u32>(0u), [&](const auto& r, const auto& c, const Expr<f32>& sum) {
                  store(out[r * n + c], cast<T>(sum));
                });
}

IRON_GEOMETRY(iron_gemm_affine_b4_g32) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_affine_b4_g64) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_affine_b4_g128) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_affine_b8_g32) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_affine_b8_g64) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_affine_b8_g128) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_mxfp4) { return gemm::geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <algorithm>
#include <cmath>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "quant_weights.hpp"

namespace iron::kernels {

namespace {

testing::TestSetup quant_setup(const std::string& kernel, const QuantWeights& q, std::size_t m,
                               std::size_t n, std::size_t k, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const auto x = testing::round_through(rng.uniform(m * k, -1.0f, 1.0f), dt);
  const ProductExpected want = quant_gemm_oracle(x, q, m, n, k);
  // The doc comment's bound: each weight rounded to T, then the f32 sum of k products.
  const double eps = tol::unit_roundoff(dt) + tol::gamma(2);
  const double sum = tol::gamma(k);
  const double bound = (sum + eps + sum * eps) * want.s + (1.0 + sum) * tol::underflow(dt) * want.x;
  testing::TestSetup setup(kernel, dt);
  setup.input("x", x);
  for (const auto& [name, words] : q.words) setup.input_u32(name, words);
  for (const auto& [name, values] : q.values) setup.input(name, values);
  setup.output("out", m * n)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .expect("out", want.out)
      .tolerance(tol::stored(dt, bound, 0.0));
  return setup.grid(testing::geometry_grid(setup));
}

testing::TestSetup affine_setup(std::size_t bits, std::size_t group, std::size_t m, std::size_t n,
                                std::size_t k, DType dt, testing::Rng& rng) {
  const std::string kernel =
      "iron_gemm_affine_b" + std::to_string(bits) + "_g" + std::to_string(group);
  return quant_setup(kernel, affine_weights(n, k, bits, group, 1e-3f, 0.1f, dt, rng), m, n, k, dt,
                     rng);
}

testing::TestSetup mxfp4_setup(std::size_t m, std::size_t n, std::size_t k, DType dt,
                               testing::Rng& rng) {
  // Exponents 2^-7 … 2^7: products and sums stay well inside every T's range.
  return quant_setup("iron_gemm_mxfp4", mxfp4_weights(n, k, 120, 135, rng), m, n, k, dt, rng);
}

/// The bench of one form at a linear layer's shape: its weight inputs, x random, and cuBLAS
/// multiplying x with the same weight stored densely in T (the decoded values, rounded to T, as
/// the kernel rounds them).
bench::BenchSetup quant_bench(const std::string& kernel, const QuantWeights& q, std::size_t m,
                              std::size_t n, std::size_t k, DType dt) {
  bench::BenchSetup setup(kernel, dt);
  std::size_t weight_bytes = 0;
  setup.random("x", m * k);
  for (const auto& [name, words] : q.words) {
    setup.input_u32(name, words);
    weight_bytes += words.size() * (name == "scales" ? 1 : 4);
  }
  for (const auto& [name, values] : q.values) {
    setup.input(name, values);
    weight_bytes += values.size() * dtype_size(dt);
  }
  setup.output("out", m * n)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k));
  bench::LibraryReference gemm;
  gemm.name = "x @ wT (cuBLAS, dense T)";
  gemm.m = static_cast<std::uint32_t>(m);
  gemm.n = static_cast<std::uint32_t>(n);
  gemm.k = static_cast<std::uint32_t>(k);
  gemm.a.input = "x";
  gemm.b.values.resize(n * k);
  for (std::size_t i = 0; i < n * k; ++i) gemm.b.values[i] = static_cast<float>(q.w(i));
  gemm.b_transposed = true;
  gemm.output = "out";
  // Both round the decoded weight to T and sum k products in f32, in different orders.
  gemm.tolerance = {0.05, 0.05};
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(weight_bytes + (m * k + m * n) * dtype_size(dt))
      .flops(2 * m * n * k);
}

/// Bench weights: fixed seeds, affine scales small enough (|w| <= 0.3) that sums of k products
/// stay near 1.
bench::BenchSetup affine_bench(std::size_t bits, std::size_t group, std::size_t m, std::size_t n,
                               std::size_t k, DType dt) {
  testing::Rng rng(7);
  const std::string kernel =
      "iron_gemm_affine_b" + std::to_string(bits) + "_g" + std::to_string(group);
  const auto levels = static_cast<float>((1u << bits) - 1);
  return quant_bench(kernel,
                     affine_weights(n, k, bits, group, 0.015f / levels, 0.15f / levels, dt, rng), m,
                     n, k, dt)
      .peer("gemm_affine", {{"m", static_cast<double>(m)},
                            {"n", static_cast<double>(n)},
                            {"k", static_cast<double>(k)},
                            {"bits", static_cast<double>(bits)},
                            {"group", static_cast<double>(group)}});
}
bench::BenchSetup mxfp4_bench(std::size_t m, std::size_t n, std::size_t k, DType dt) {
  testing::Rng rng(7);
  return quant_bench("iron_gemm_mxfp4", mxfp4_weights(n, k, 118, 122, rng), m, n, k, dt)
      .peer("gemm_mxfp4", {{"m", static_cast<double>(m)},
                           {"n", static_cast<double>(n)},
                           {"k", static_cast<double>(k)}});
}

// Shapes named by the tile: m just past kBM rows, n just past kBN columns.
constexpr std::size_t kPastM = gemm::kBM + 1;
constexpr std::size_t kPastN = gemm::kBN + 1;

}  // namespace

// Every form: a representative shape (two tiles of n, several steps of k), one row and one group
// of k with n prime, and primes (m, n and the number of groups). Sizes just past a tile (the same
// edges for every format) for one form of each width.
#define IRON_GEMM_AFFINE_TESTS(BITS, GROUP)                                                   \
  IRON_TEST(iron_gemm_affine_b##BITS##_g##GROUP, layer_64x128x256, F32, F16, BF16) {          \
    return affine_setup(BITS, GROUP, 64, 128, 256, dt, rng);                                  \
  }                                                                                           \
  IRON_TEST(iron_gemm_affine_b##BITS##_g##GROUP, one_row_one_group_1x37x1g, F32, F16, BF16) { \
    return affine_setup(BITS, GROUP, 1, 37, GROUP, dt, rng);                                  \
  }                                                                                           \
  IRON_TEST(iron_gemm_affine_b##BITS##_g##GROUP, primes_7x13x5g, F32, F16, BF16) {            \
    return affine_setup(BITS, GROUP, 7, 13, std::size_t{5} * (GROUP), dt, rng);               \
  }
IRON_GEMM_AFFINE_TESTS(4, 32)
IRON_TEST(iron_gemm_affine_b4_g32, past_a_tile_2g, F32, F16, BF16) {
  return affine_setup(4, 32, kPastM, kPastN, 64, dt, rng);
}
IRON_GEMM_AFFINE_TESTS(4, 64)
IRON_GEMM_AFFINE_TESTS(4, 128)
IRON_GEMM_AFFINE_TESTS(8, 32)
IRON_GEMM_AFFINE_TESTS(8, 64)
IRON_TEST(iron_gemm_affine_b8_g64, past_a_tile_1g, F32, F16, BF16) {
  return affine_setup(8, 64, kPastM, kPastN, 64, dt, rng);
}
IRON_GEMM_AFFINE_TESTS(8, 128)
#undef IRON_GEMM_AFFINE_TESTS

IRON_TEST(iron_gemm_mxfp4, layer_64x128x256, F32, F16, BF16) {
  return mxfp4_setup(64, 128, 256, dt, rng);
}
IRON_TEST(iron_gemm_mxfp4, one_row_one_block_1x37x32, F32, F16, BF16) {
  return mxfp4_setup(1, 37, 32, dt, rng);
}
IRON_TEST(iron_gemm_mxfp4, past_a_tile_2b, F32, F16, BF16) {
  return mxfp4_setup(kPastM, kPastN, 64, dt, rng);
}
IRON_TEST(iron_gemm_mxfp4, primes_7x13x160, F32, F16, BF16) {
  return mxfp4_setup(7, 13, 160, dt, rng);
}

// A linear layer's shapes: 4096 → 14336 (up) and 14336 → 4096 (down), 16 tokens and 4096.
IRON_BENCH(iron_gemm_affine_b4_g64, m16_n14336_k4096, BF16) {
  return affine_bench(4, 64, 16, 14336, 4096, dt);
}
IRON_BENCH(iron_gemm_affine_b4_g64, m16_n4096_k14336, BF16) {
  return affine_bench(4, 64, 16, 4096, 14336, dt);
}
IRON_BENCH(iron_gemm_affine_b4_g64, m4096_n14336_k4096, BF16) {
  return affine_bench(4, 64, 4096, 14336, 4096, dt);
}
IRON_BENCH(iron_gemm_affine_b4_g64, m4096_n4096_k14336, BF16) {
  return affine_bench(4, 64, 4096, 4096, 14336, dt);
}
// The other widths and groups at a square prefill.
IRON_BENCH(iron_gemm_affine_b4_g32, m4096_n4096_k4096, BF16) {
  return affine_bench(4, 32, 4096, 4096, 4096, dt);
}
IRON_BENCH(iron_gemm_affine_b4_g128, m4096_n4096_k4096, BF16) {
  return affine_bench(4, 128, 4096, 4096, 4096, dt);
}
IRON_BENCH(iron_gemm_affine_b8_g32, m4096_n4096_k4096, BF16) {
  return affine_bench(8, 32, 4096, 4096, 4096, dt);
}
IRON_BENCH(iron_gemm_affine_b8_g64, m4096_n4096_k4096, BF16) {
  return affine_bench(8, 64, 4096, 4096, 4096, dt);
}
IRON_BENCH(iron_gemm_affine_b8_g128, m4096_n4096_k4096, BF16) {
  return affine_bench(8, 128, 4096, 4096, 4096, dt);
}
IRON_BENCH(iron_gemm_mxfp4, m16_n14336_k4096, BF16) { return mxfp4_bench(16, 14336, 4096, dt); }
IRON_BENCH(iron_gemm_mxfp4, m16_n4096_k14336, BF16) { return mxfp4_bench(16, 4096, 14336, dt); }
IRON_BENCH(iron_gemm_mxfp4, m4096_n14336_k4096, BF16) { return mxfp4_bench(4096, 14336, 4096, dt); }
IRON_BENCH(iron_gemm_mxfp4, m4096_n4096_k14336, BF16) { return mxfp4_bench(4096, 4096, 14336, dt); }

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
