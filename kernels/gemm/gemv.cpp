/// iron_gemv, iron_gemv_affine_b{4,8}_g{32,64,128}, iron_gemv_mxfp4: out[b, j] = Σ_p x[b, p] ·
/// w[j, p] for a few rows of x (the decode shape of a linear layer: m = 1 … 16 tokens), with the
/// weight `w` [n, k] stored densely in T or quantized along k.
///
/// The quantized formats are those of the dequantization kernels (kernels/quant/): MLX's affine
/// mode (w = scale · q + bias per group of G columns, codes packed little-endian into u32 words)
/// and OCP MXFP4 (E2M1 codes, one E8M0 power of two per 32 columns). Products accumulate in f32
/// and only the output is rounded to T. The f32 path multiplies x with the exact decoded values;
/// the tensor-core path (f16/bf16) rounds each decoded weight to T first, as iron_gemm's
/// quantized forms do.
///
/// ## Error bound
/// Per element, with S = Σ_p |x[b, p]| · (|scale · q| + |bias|) (|w[j, p]| for the dense and
/// MXFP4 forms) and X = Σ_p |x[b, p]|: γ_{k+2} · S for the f32 sums (u = 2^-24; an affine chunk
/// of the f32 path adds scale · Σ x·q and bias · Σ x), plus, where a decoded weight is rounded to
/// T, ε · S + η · X (ε = u_T + γ_2, η half T's smallest subnormal); then the rounding to T.
///
/// ## How it runs
/// A group of 128 threads owns 16 weight rows and 16 rows of x; groups sharing weight rows are
/// adjacent in the grid, so a weight row is read from memory once for any m.
/// - f16/bf16 with k a multiple of 8 (dense), or more than 4 rows of x and k a multiple of 256
///   (quantized): tensor cores
///   (kernels/gemm/gemv_skinny.hpp). 256 columns a step of the group's x rows and weight rows
///   (or codes, scales and biases) are copied into a 4-stage ring by asynchronous copies; a
///   quantized step is decoded into a tile of T by all threads; the four simdgroups split the step
///   along k in 16×16×16 fragment products and sum their tiles at the end.
/// - Otherwise (f32, quantized m ≤ 4, other k): sub-tiles one after another, for f16/bf16 one x row
///   against 8 weight rows, for f32 4 × 4; thread t reads chunks t, t + 128, … of each
///   weight row of the sub-tile with 16-byte loads (8 values of T, or 4 words of codes), decodes
///   them 8 at a time and multiplies them with the matching 8 columns of the x rows; the threads'
///   sums then meet through a simdgroup sum and shared memory. The dense form takes 16-byte chunks
///   when k is a multiple of 8 and single columns otherwise. An affine chunk lies in one group and
///   an MXFP4 chunk (32 codes) is one block, so each loads one scale (and bias).
///
/// ## Layout
/// - `x [m, k]` T
/// - `w [n, k]` T (iron_gemv)
/// - `packed [n, k · BITS / 32]` u32, `scales [n, k / G]` T, `biases [n, k / G]` T (affine;
///   k a multiple of G)
/// - `packed [n, k / 8]` u32, `scales [n, k / 32]` u8 (MXFP4; k a multiple of 32)
/// - `out [m, n]` T
///
/// ## Dispatch
/// Tiled: exactly ceil(n / 16) · ceil(m / 16) groups of exactly 128 threads.
#include <iron/iron.hpp>

#include "../primitives/affine_quant.hpp"
#include "../primitives/mxfp4.hpp"
#include "gemv_rows.hpp"
#include "gemv_skinny.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {

/// A weight of T: a chunk is CHUNK consecutive values of a row.
template <class T, u32 CHUNK>
struct DenseWeights {
  static constexpr u32 kChunk = CHUNK;
  static constexpr u32 kWidth = CHUNK < gemv::kSub ? CHUNK : gemv::kSub;
  static constexpr bool kNeedsXsum = false;
  static constexpr float x_scale(u32 /*e*/) { return 1.0f; }
  using Chunk = std::array<Expr<T>, CHUNK>;

  const Tensor<T>& w;
  Expr<u32> k;

  Chunk load(const Expr<u32>& row, const Expr<u32>& c) const {
    Chunk v;
    for (u32 e = 0; e < CHUNK; ++e) v[e] = dsl::load(w[row * k + c * CHUNK + e]);
    return v;
  }
  std::array<Expr<f32>, kWidth> values(const Chunk& v, u32 s) const {
    std::array<Expr<f32>, kWidth> out;
    for (u32 e = 0; e < kWidth; ++e) out[e] = cast<f32>(v[s * kWidth + e]);
    return out;
  }
  Expr<f32> combine(const Chunk& /*v*/, const Expr<f32>& dot, const Expr<f32>& /*xsum*/) const {
    return dot;
  }
};

/// MLX affine codes: a chunk is 4 words of one group; the chunk's term is
/// scale · Σ x·q + bias · Σ x.
///
/// A code is read in place, without shifting it down: its BITS-bit field at bit position
/// p < 16 of a half word, or'd into 2^23's bits, is the f32 2^23 + q·2^p exactly (q·2^p < 2^23),
/// so one mask-and-or and one subtraction give q·2^p, and x's element is scaled by 2^-p to
/// match (exact: a power of two). The word's upper half is shifted down once for its codes.
/// The 2^23 bits are a run-time value (code_magic), so the mask and the or are one logic op.
template <class T, u32 BITS, u32 GROUP>
struct AffineWeights {
  static constexpr u32 kCodes = codes_per_word<BITS>;
  static constexpr u32 kChunk = 4 * kCodes;
  static constexpr bool kNeedsXsum = true;
  static constexpr u32 kPerHalf = kCodes / 2;  // codes in 16 bits
  static_assert(GROUP % kChunk == 0, "a chunk lies in one group");
  static_assert(gemv::kSub % kCodes == 0 || kCodes % gemv::kSub == 0, "whole words a sub-chunk");
  struct Chunk {
    std::array<Expr<u32>, 4> words;
    Expr<f32> scale, bias;
  };
  /// 2^-p for element e of a sub-chunk (the code's bit position p within its half word).
  static constexpr float x_scale(u32 e) {
    return 1.0f / static_cast<float>(1u << (e % kPerHalf * BITS));
  }

  const Tensor<u32>& packed;
  const Tensor<T>& scales;
  const Tensor<T>& biases;
  Expr<u32> k;
  Expr<u32> magic = code_magic(k);  // k is 0 only when there is nothing to decode

  Chunk load(const Expr<u32>& row, const Expr<u32>& c) const {
    Chunk ch;
    for (u32 j = 0; j < 4; ++j) ch.words[j] = dsl::load(packed[row * (k / kCodes) + c * 4 + j]);
    auto group = row * (k / GROUP) + c * kChunk / GROUP;
    ch.scale = cast<f32>(dsl::load(scales[group]));
    ch.bias = cast<f32>(dsl::load(biases[group]));
    return ch;
  }
  /// q·2^p of the sub-chunk's codes (x_scale undoes the 2^p).
  std::array<Expr<f32>, gemv::kSub> values(const Chunk& ch, u32 s) const {
    std::array<Expr<f32>, gemv::kSub> out;
    for (u32 e = 0; e < gemv::kSub; ++e) {
      const u32 i = s * gemv::kSub + e;
      const Expr<u32>& word = ch.words[i / kCodes];
      const u32 code = i % kCodes;
      auto half = code < kPerHalf ? word : word >> 16u;
      auto field = half & (((1u << BITS) - 1u) << (code % kPerHalf * BITS));
      out[e] = code_value(field, magic);
    }
    return out;
  }
  Expr<f32> combine(const Chunk& ch, const Expr<f32>& dot, const Expr<f32>& xsum) const {
    return fma(ch.scale, dot, ch.bias * xsum);
  }
};

/// MXFP4: a chunk is one block (4 words of 8 E2M1 codes); the values are the E2M1 numbers and
/// the chunk's term is Σ x·e2m1 times the block's power of two.
struct Mxfp4Weights {
  static constexpr u32 kChunk = 32;
  static constexpr bool kNeedsXsum = false;
  static constexpr float x_scale(u32 /*e*/) { return 1.0f; }
  struct Chunk {
    std::array<Expr<u32>, 4> words;
    Expr<f32> scale;
  };

  const Tensor<u32>& packed;
  const Tensor<u8>& scales;
  Expr<u32> k;

  Chunk load(const Expr<u32>& row, const Expr<u32>& c) const {
    Chunk ch;
    for (u32 j = 0; j < 4; ++j) ch.words[j] = dsl::load(packed[row * (k / 8u) + c * 4 + j]);
    ch.scale = decode_e8m0(cast<u32>(dsl::load(scales[row * (k / kChunk) + c])));
    return ch;
  }
  static std::array<Expr<f32>, gemv::kSub> values(const Chunk& ch, u32 s) {
    std::array<Expr<f32>, gemv::kSub> out;
    for (u32 e = 0; e < gemv::kSub; ++e) out[e] = decode_e2m1(ch.words[s] >> (4 * e));
    return out;
  }
  static Expr<f32> combine(const Chunk& ch, const Expr<f32>& dot, const Expr<f32>& /*xsum*/) {
    return dot * ch.scale;
  }
};

/// The contract every form shares.
void declare_gemv() {
  dispatch(tiled, {exactly(gemv::kThreads)});
  grid(gemv::grid_rule());
}

/// The weight tensors' copies need whole 16-byte pieces (and the scales whole 4-byte ones): k a
/// multiple of the tensor-core path's step.
constexpr u32 kQuantizedStep = gemv::skinny::kStepK;
/// Up to this many rows of x, the FFMA path is the faster one for quantized weights
/// (bench/NOTES.md §9): the decode has no product to hide behind. Dense weights take tensor cores
/// at any m.
constexpr u32 kFfmaRows = 4;

}  // namespace

IRON_KERNEL(iron_gemv, (Tensor<T> x, Tensor<T> w, Out<T> out, Constexpr<u32> m, Constexpr<u32> n,
                        Constexpr<u32> k)) {
  declare_gemv();
  layout(x, "[m, k]");
  layout(w, "[n, k]");
  layout(out, "[m, n]");
  IRON_IF(specialized(k % 8u == 0u)) {
    if constexpr (lane_bytes<T>() == 2) {
      gemv::skinny::product(x, gemv::skinny::DenseSource<T>{w}, out, m, n, k);
    } else {
      gemv::product<T>(DenseWeights<T, 8>{w, k}, x, out, m, n, k, k / 8u);
    }
  }
  IRON_ELSE { gemv::product<T>(DenseWeights<T, 1>{w, k}, x, out, m, n, k, k); }
}

IRON_KERNEL_TEMPLATE(iron_gemv_affine, (u32 BITS, u32 GROUP),
                     (Tensor<T> x, Tensor<u32> packed, Tensor<T> scales, Tensor<T> biases,
                      Out<T> out, Constexpr<u32> m, Constexpr<u32> n, Constexpr<u32> k)) {
  declare_gemv();
  require_multiple_of(k, GROUP);
  const std::string groups = "[n, k / " + std::to_string(GROUP) + "]";
  layout(x, "[m, k]");
  layout(packed, "[n, k / " + std::to_string(codes_per_word<BITS>) + "]");
  layout(scales, groups);
  layout(biases, groups);
  layout(out, "[m, n]");
  const AffineWeights<T, BITS, GROUP> format{packed, scales, biases, k};
  const auto exact = [&] { gemv::product<T>(format, x, out, m, n, k, k / format.kChunk); };
  if constexpr (lane_bytes<T>() == 2) {
    // A launch's module holds one of the two paths: the few-row one is the usual.
    IRON_IF(specialized(m <= kFfmaRows || k % kQuantizedStep != 0u)) { exact(); }
    IRON_ELSE {
      using Steps = gemv::skinny::AffineSteps<T, BITS, GROUP>;
      gemv::skinny::product(x, gemv::skinny::DecodedSource<T, Steps>{Steps{packed, scales, biases}},
                            out, m, n, k);
    }
  } else {
    exact();
  }
}
IRON_KERNEL_VARIANT(iron_gemv_affine, b4_g32, 4, 32);
IRON_KERNEL_VARIANT(iron_gemv_affine, b4_g64, 4, 64);
IRON_KERNEL_VARIANT(iron_gemv_affine, b4_g128, 4, 128);
IRON_KERNEL_VARIANT(iron_gemv_affine, b8_g32, 8, 32);
IRON_KERNEL_VARIANT(iron_gemv_affine, b8_g64, 8, 64);
IRON_KERNEL_VARIANT(iron_gemv_affine, b8_g128, 8, 128);

IRON_KERNEL(iron_gemv_mxfp4, (Tensor<T> x, Tensor<u32> packed, Tensor<u8> scales, Out<T> out,
                              Constexpr<u32> m, Constexpr<u32> n, Constexpr<u32> k)) {
  declare_gemv();
  require_multiple_of(k, Mxfp4Weights::kChunk);
  layout(x, "[m, k]");
  layout(packed, "[n, k / 8]");
  layout(scales, "[n, k / 32]");
  layout(out, "[m, n]");
  const auto exact = [&] {
    gemv::product<T>(Mxfp4Weights{packed, scales, k}, x, out, m, n, k, k / Mxfp4Weights::kChunk);
  };
  if constexpr (lane_bytes<T>() == 2) {
    // A launch's module holds one of the two paths: the few-row one is the usual.
    IRON_IF(specialized(m <= kFfmaRows || k % kQuantizedStep != 0u)) { exact(); }
    IRON_ELSE {
      using Steps = gemv::skinny::Mxfp4Steps;
      gemv::skinny::product(x, gemv::skinny::DecodedSource<T, Steps>{Steps{packed, scales}}, out, m,
                            n, k);
    }
  } else {
    exact();
  }
}

IRON_GEOMETRY(iron_gemv) { return gemv::geometry(q); }
IRON_GEOMETRY(iron_gemv_affine_b4_g32) { return gemv::geometry(q); }
IRON_GEOMETRY(iron_gemv_affine_b4_g64) { return gemv::geometry(q); }
IRON_GEOMETRY(iron_gemv_affine_b4_g128) { return gemv::geometry(q); }
IRON_GEOMETRY(iron_gemv_affine_b8_g32) { return gemv::geometry(q); }
IRON_GEOMETRY(iron_gemv_affine_b8_g64) { return gemv::geometry(q); }
IRON_GEOMETRY(iron_gemv_affine_b8_g128) { return gemv::geometry(q); }
IRON_GEOMETRY(iron_gemv_mxfp4) { return gemv::geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <algorithm>
#include <cmath>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <random>

namespace iron::kernels {

namespace {

/// A weight [n, k] in some format: its inputs, its exact values (w), and the magnitude of the
/// term the kernel sums for each element (|w|, or |scale · q| + |bias| for affine codes).
struct GemvWeights {
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> words;
  std::vector<std::pair<std::string, std::vector<float>>> values;
  std::vector<double> w;
  std::vector<double> term;
};

GemvWeights dense_weights(std::size_t n, std::size_t k, DType dt, testing::Rng& rng) {
  GemvWeights g;
  const auto w = testing::round_through(rng.uniform(n * k, -1.0f, 1.0f), dt);
  g.values.emplace_back("w", w);
  for (const float v : w) {
    g.w.push_back(v);
    g.term.push_back(std::fabs(v));
  }
  return g;
}

/// MLX affine codes of `bits` bits in groups of `group` along each row: random codes, scales in
/// [lo, hi), biases of either sign up to the scale times the largest code.
GemvWeights affine_weights(std::size_t n, std::size_t k, std::size_t bits, std::size_t group,
                           float lo, float hi, DType dt, testing::Rng& rng) {
  const std::size_t count = n * k;
  const std::uint32_t levels = 1u << bits;
  const auto codes = rng.integers(count, 0, levels);
  std::vector<std::uint32_t> words(count * bits / 32, 0);
  for (std::size_t i = 0; i < count; ++i) words[i * bits / 32] |= codes[i] << (i * bits % 32);
  const auto scales = testing::round_through(rng.uniform(count / group, lo, hi), dt);
  auto biases = rng.uniform(count / group, -1.0f, 1.0f);
  for (std::size_t g = 0; g < biases.size(); ++g) {
    biases[g] *= scales[g] * static_cast<float>(levels - 1);
  }
  biases = testing::round_through(biases, dt);
  GemvWeights g;
  for (std::size_t i = 0; i < count; ++i) {
    const double s = scales[i / group];
    const double b = biases[i / group];
    g.w.push_back(s * codes[i] + b);
    g.term.push_back(std::fabs(s * codes[i]) + std::fabs(b));
  }
  g.words.emplace_back("packed", std::move(words));
  g.values.emplace_back("scales", scales);
  g.values.emplace_back("biases", biases);
  return g;
}

/// MXFP4: random E2M1 codes and block exponents in [lo, hi).
GemvWeights mxfp4_weights(std::size_t n, std::size_t k, std::uint32_t lo, std::uint32_t hi,
                          testing::Rng& rng) {
  constexpr double kMagnitude[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
  const std::size_t count = n * k;
  const auto codes = rng.integers(count, 0, 16);
  const auto exponents = rng.integers(count / 32, lo, hi);
  std::vector<std::uint32_t> words(count / 8, 0);
  GemvWeights g;
  for (std::size_t i = 0; i < count; ++i) {
    words[i / 8] |= codes[i] << (4 * (i % 8));
    const double value = (codes[i] & 8u ? -1.0 : 1.0) * kMagnitude[codes[i] & 7u];
    g.w.push_back(std::ldexp(value, static_cast<int>(exponents[i / 32]) - 127));
    g.term.push_back(std::fabs(g.w.back()));
  }
  g.words.emplace_back("packed", std::move(words));
  g.words.emplace_back("scales", exponents);
  return g;
}

/// The definition, in double: out[b, j] = Σ_p x[b, p] · w[j, p]; and the scales of the error
/// bound, the largest Σ_p |x[b, p]| · term[j, p] (s) and Σ_p |x[b, p]| (x).
struct GemvExpected {
  std::vector<float> out;
  double s = 0.0;
  double x = 0.0;
};
GemvExpected gemv_oracle(const std::vector<float>& x, const GemvWeights& g, std::size_t m,
                         std::size_t n, std::size_t k) {
  GemvExpected e;
  e.out.resize(m * n);
  for (std::size_t b = 0; b < m; ++b) {
    double xsum = 0.0;
    for (std::size_t p = 0; p < k; ++p) xsum += std::fabs(double{x[b * k + p]});
    e.x = std::max(e.x, xsum);
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      double magnitude = 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        sum += double{x[b * k + p]} * g.w[j * k + p];
        magnitude += std::fabs(double{x[b * k + p]}) * g.term[j * k + p];
      }
      e.out[b * n + j] = static_cast<float>(sum);
      e.s = std::max(e.s, magnitude);
    }
  }
  return e;
}

/// The doc comment's bound. A quantized weight decoded on the tensor-core path (f16/bf16) is
/// rounded to T; the f32 path and dense weights keep it exact.
testing::TestSetup gemv_setup(const std::string& kernel, const GemvWeights& g, std::size_t m,
                              std::size_t n, std::size_t k, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const auto x = testing::round_through(rng.uniform(m * k, -1.0f, 1.0f), dt);
  const GemvExpected want = gemv_oracle(x, g, m, n, k);
  const bool rounds_weights = !g.words.empty() && dt != DType::F32;
  const double eps = rounds_weights ? tol::unit_roundoff(dt) + tol::gamma(2) : 0.0;
  const double eta = rounds_weights ? tol::underflow(dt) : 0.0;
  const double sum = tol::gamma(k + 2);
  const double bound = (sum + eps + sum * eps) * want.s + (1.0 + sum) * eta * want.x;
  testing::TestSetup setup(kernel, dt);
  setup.input("x", x);
  for (const auto& [name, words] : g.words) setup.input_u32(name, words);
  for (const auto& [name, values] : g.values) setup.input(name, values);
  setup.output("out", m * n)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .expect("out", want.out)
      .tolerance(tol::stored(dt, bound, tol::gamma(1)));
  return setup.grid(testing::geometry_grid(setup));
}

testing::TestSetup dense_setup(std::size_t m, std::size_t n, std::size_t k, DType dt,
                               testing::Rng& rng) {
  return gemv_setup("iron_gemv", dense_weights(n, k, dt, rng), m, n, k, dt, rng);
}

testing::TestSetup affine_setup(std::size_t bits, std::size_t group, std::size_t m, std::size_t n,
                                std::size_t k, DType dt, testing::Rng& rng) {
  const std::string kernel =
      "iron_gemv_affine_b" + std::to_string(bits) + "_g" + std::to_string(group);
  return gemv_setup(kernel, affine_weights(n, k, bits, group, 1e-3f, 0.1f, dt, rng), m, n, k, dt,
                    rng);
}

testing::TestSetup mxfp4_setup(std::size_t m, std::size_t n, std::size_t k, DType dt,
                               testing::Rng& rng) {
  // Exponents 2^-7 … 2^7: products and sums stay well inside every T's range.
  return gemv_setup("iron_gemv_mxfp4", mxfp4_weights(n, k, 120, 135, rng), m, n, k, dt, rng);
}

/// The bench of one form at a linear layer's shape: its weight inputs, x random, and cuBLAS
/// multiplying x with the same weight stored densely in T (the decoded values, rounded to T).
bench::BenchSetup gemv_bench(const std::string& kernel, const GemvWeights& g, std::size_t m,
                             std::size_t n, std::size_t k, DType dt) {
  bench::BenchSetup setup(kernel, dt);
  std::size_t weight_bytes = 0;
  setup.random("x", m * k);
  const bool dense = g.words.empty();
  if (dense) {
    setup.random("w", n * k);
    weight_bytes = n * k * dtype_size(dt);
  }
  for (const auto& [name, words] : g.words) {
    setup.input_u32(name, words);
    weight_bytes += words.size() * (name == "scales" ? 1 : 4);
  }
  for (const auto& [name, values] : g.values) {
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
  if (dense) {
    gemm.b.input = "w";
  } else {
    gemm.b.values.assign(g.w.begin(), g.w.end());
  }
  gemm.b_transposed = true;
  gemm.output = "out";
  // Both sum k products in f32; cuBLAS's quantized weights are rounded to T first.
  gemm.tolerance = {0.05, 0.05};
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(weight_bytes + (m * k + m * n) * dtype_size(dt))
      .flops(2 * m * n * k)
      .library_reference(std::move(gemm));
}

/// Bench weights: fixed seeds, affine scales small enough (|w| <= 0.3) that T's rounding of the
/// decoded weight (cuBLAS's copy) stays inside the reference's tolerance.
bench::BenchSetup affine_bench(std::size_t bits, std::size_t group, std::size_t m, std::size_t n,
                               std::size_t k, DType dt) {
  testing::Rng rng(7);
  const std::string kernel =
      "iron_gemv_affine_b" + std::to_string(bits) + "_g" + std::to_string(group);
  const auto levels = static_cast<float>((1u << bits) - 1);
  return gemv_bench(kernel,
                    affine_weights(n, k, bits, group, 0.015f / levels, 0.15f / levels, dt, rng), m,
                    n, k, dt)
      .peer("gemv_affine", {{"m", static_cast<double>(m)},
                            {"n", static_cast<double>(n)},
                            {"k", static_cast<double>(k)},
                            {"bits", static_cast<double>(bits)},
                            {"group", static_cast<double>(group)}});
}
bench::BenchSetup mxfp4_bench(std::size_t m, std::size_t n, std::size_t k, DType dt) {
  testing::Rng rng(7);
  return gemv_bench("iron_gemv_mxfp4", mxfp4_weights(n, k, 118, 122, rng), m, n, k, dt)
      .peer("gemv_mxfp4", {{"m", static_cast<double>(m)},
                           {"n", static_cast<double>(n)},
                           {"k", static_cast<double>(k)}});
}
bench::BenchSetup dense_bench(std::size_t m, std::size_t n, std::size_t k, DType dt) {
  return gemv_bench("iron_gemv", GemvWeights{}, m, n, k, dt)
      .peer("gemm_nk", {{"m", static_cast<double>(m)},
                        {"n", static_cast<double>(n)},
                        {"k", static_cast<double>(k)}});
}

}  // namespace

// One token, n not a multiple of the 4 rows of a group.
IRON_TEST(iron_gemv, decode_1x301x256, F32, F16, BF16) { return dense_setup(1, 301, 256, dt, rng); }
// 16 tokens (four groups of x rows) and chunks that wrap the 128 threads.
IRON_TEST(iron_gemv, batch_16x65x1048, F32, F16, BF16) {
  return dense_setup(16, 65, 1048, dt, rng);
}
// k not a multiple of 8: the column-by-column path; m and n past a group's 4.
IRON_TEST(iron_gemv, odd_k_5x7x37, F32, F16, BF16) { return dense_setup(5, 7, 37, dt, rng); }
IRON_TEST(iron_gemv, ones_1x1x1, F32, F16, BF16) { return dense_setup(1, 1, 1, dt, rng); }
// Rows of 513 chunks: groups of 128 threads (four simdgroups' sums meet in shared memory).
IRON_TEST(iron_gemv, long_rows_2x9x4104, F32, F16, BF16) {
  return dense_setup(2, 9, 4104, dt, rng);
}
// One step of k on the tensor-core path.
IRON_TEST(iron_gemv, one_step_5x40x256, F32, F16, BF16) { return dense_setup(5, 40, 256, dt, rng); }
// Two row tiles of x (m past 16) and a last step of k that is partly outside.
IRON_TEST(iron_gemv, two_row_tiles_18x33x520, F32, F16, BF16) {
  return dense_setup(18, 33, 520, dt, rng);
}

#define IRON_GEMV_AFFINE_TESTS(BITS, GROUP)                                          \
  IRON_TEST(iron_gemv_affine_b##BITS##_g##GROUP, decode_1x37x3g, F32, F16, BF16) {   \
    return affine_setup(BITS, GROUP, 1, 37, std::size_t{3} * (GROUP), dt, rng);      \
  }                                                                                  \
  IRON_TEST(iron_gemv_affine_b##BITS##_g##GROUP, batch_7x20x40g, F32, F16, BF16) {   \
    return affine_setup(BITS, GROUP, 7, 20, std::size_t{40} * (GROUP), dt, rng);     \
  }                                                                                  \
  IRON_TEST(iron_gemv_affine_b##BITS##_g##GROUP, one_group_2x1x1g, F32, F16, BF16) { \
    return affine_setup(BITS, GROUP, 2, 1, GROUP, dt, rng);                          \
  }
IRON_GEMV_AFFINE_TESTS(4, 32)
// 300 chunks a row: groups of two simdgroups.
IRON_TEST(iron_gemv_affine_b4_g32, long_rows_3x5x9600, F32, F16, BF16) {
  return affine_setup(4, 32, 3, 5, 9600, dt, rng);
}
IRON_GEMV_AFFINE_TESTS(4, 64)
IRON_GEMV_AFFINE_TESTS(4, 128)
// Past 4 rows of x with k not a multiple of 256: the FFMA path, a pass per row of x.
IRON_TEST(iron_gemv_affine_b4_g64, ffma_rows_6x9x192, F32, F16, BF16) {
  return affine_setup(4, 64, 6, 9, 192, dt, rng);
}
// Two row tiles of x and two steps of k on the tensor-core path (k a multiple of 256).
IRON_TEST(iron_gemv_affine_b4_g128, two_row_tiles_17x18x512, F32, F16, BF16) {
  return affine_setup(4, 128, 17, 18, 512, dt, rng);
}
IRON_TEST(iron_gemv_affine_b8_g32, two_row_tiles_20x5x768, F32, F16, BF16) {
  return affine_setup(8, 32, 20, 5, 768, dt, rng);
}
IRON_GEMV_AFFINE_TESTS(8, 32)
IRON_GEMV_AFFINE_TESTS(8, 64)
IRON_GEMV_AFFINE_TESTS(8, 128)
#undef IRON_GEMV_AFFINE_TESTS

IRON_TEST(iron_gemv_mxfp4, decode_1x37x96, F32, F16, BF16) {
  return mxfp4_setup(1, 37, 96, dt, rng);
}
IRON_TEST(iron_gemv_mxfp4, batch_9x16x4352, F32, F16, BF16) {
  return mxfp4_setup(9, 16, 4352, dt, rng);
}
IRON_TEST(iron_gemv_mxfp4, one_block_1x1x32, F32, F16, BF16) {
  return mxfp4_setup(1, 1, 32, dt, rng);
}
IRON_TEST(iron_gemv_mxfp4, ffma_rows_5x11x96, F32, F16, BF16) {
  return mxfp4_setup(5, 11, 96, dt, rng);
}
IRON_TEST(iron_gemv_mxfp4, two_row_tiles_17x3x768, F32, F16, BF16) {
  return mxfp4_setup(17, 3, 768, dt, rng);
}

// A linear layer's decode: 4096 → 14336 (up) and 14336 → 4096 (down), one token and 16.
IRON_BENCH(iron_gemv, m1_n14336_k4096, F16, BF16) { return dense_bench(1, 14336, 4096, dt); }
IRON_BENCH(iron_gemv, m1_n4096_k14336, BF16) { return dense_bench(1, 4096, 14336, dt); }
IRON_BENCH(iron_gemv, m16_n14336_k4096, BF16) { return dense_bench(16, 14336, 4096, dt); }
IRON_BENCH(iron_gemv_affine_b4_g64, m1_n14336_k4096, BF16) {
  return affine_bench(4, 64, 1, 14336, 4096, dt);
}
IRON_BENCH(iron_gemv_affine_b4_g64, m1_n4096_k14336, BF16) {
  return affine_bench(4, 64, 1, 4096, 14336, dt);
}
IRON_BENCH(iron_gemv_affine_b4_g64, m16_n14336_k4096, BF16) {
  return affine_bench(4, 64, 16, 14336, 4096, dt);
}
IRON_BENCH(iron_gemv_affine_b4_g128, m1_n14336_k4096, BF16) {
  return affine_bench(4, 128, 1, 14336, 4096, dt);
}
IRON_BENCH(iron_gemv_affine_b4_g32, m1_n14336_k4096, BF16) {
  return affine_bench(4, 32, 1, 14336, 4096, dt);
}
IRON_BENCH(iron_gemv_affine_b8_g32, m1_n14336_k4096, BF16) {
  return affine_bench(8, 32, 1, 14336, 4096, dt);
}
IRON_BENCH(iron_gemv_affine_b8_g128, m1_n14336_k4096, BF16) {
  return affine_bench(8, 128, 1, 14336, 4096, dt);
}
IRON_BENCH(iron_gemv_affine_b8_g64, m1_n14336_k4096, BF16) {
  return affine_bench(8, 64, 1, 14336, 4096, dt);
}
IRON_BENCH(iron_gemv_mxfp4, m1_n14336_k4096, BF16) { return mxfp4_bench(1, 14336, 4096, dt); }
IRON_BENCH(iron_gemv_mxfp4, m1_n4096_k14336, BF16) { return mxfp4_bench(1, 4096, 14336, dt); }
IRON_BENCH(iron_gemv_mxfp4, m16_n14336_k4096, BF16) { return mxfp4_bench(16, 14336, 4096, dt); }

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
