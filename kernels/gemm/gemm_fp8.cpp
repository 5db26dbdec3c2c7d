/// iron_gemm_fp8_e4m3_nk / iron_gemm_fp8_e5m2_nk: out[i, j] = scale_a · scale_b · Σ_p a[i, p] ·
/// b[j, p], a and b 8-bit floats (docs/dtypes.md, "8-bit floats"), out in T.
///
/// The form LLM serving uses for fp8 weights and activations: `a` [m, k] and the weight `b`
/// [n, k] quantized with one scale each (x ≈ scale · q), the product dequantized once in the
/// epilogue. Products accumulate in f32 and only the final value is rounded to T.
///
/// ## Error bound
/// Every product of two 8-bit floats is exact in f32. The simulator sums them in f32 in
/// increasing p (γ_k, u = 2^-24, relative to S = Σ_p |a[i, p] · b[j, p]|). Hopper's 8-bit wgmma
/// adds with fewer bits than f32 (DeepSeek-V3 report, §3.3.2, measures about 14 on H800): on the
/// GPU the bound is taken as γ_k with u = 2^-12; sums of small integers are exact on both. Then
/// the scales and the rounding to T.
///
/// ## How it runs
/// iron_gemm_warpgroup_nk's product (kernels/gemm/gemm_warpgroup.hpp) with its knobs (docs/
/// tuning.md): on sm_90a each step is one 128-byte row of k (128 elements) per row of a and b,
/// copied by TMA into 128-byte swizzled rings and multiplied by `wgmma … k32 .e4m3/.e5m2`, so a
/// step moves the same bytes as a 16-bit step but does twice the k. Every other target (no 8-bit
/// tensor-core product) converts each element to f16, which holds every e4m3 and e5m2 value
/// exactly, on its way to shared memory, and multiplies step by step as the 16-bit form does:
/// the same sums in the same order, so the simulator's two paths give the same bits.
///
/// ## Layout
/// - `a [m, k]`, `b [n, k]` f8e4m3 or f8e5m2
/// - `scale_a [1]`, `scale_b [1]` f32
/// - `out [m, n]` T
///
/// ## Dispatch
/// As iron_gemm_warpgroup_nk: a grid of ceil(n / bn) × ceil(m / bm) groups of exactly
/// 2 · bm + 128 threads.
///
/// ## iron_gemm_fp8_rowwise_e4m3_nk
/// out[i, j] = scale_a[i] · scale_b[j] · Σ_p a[i, p] · b[j, p]: a scale per token and per output
/// channel (`scale_a [m]`, `scale_b [n]` f32), applied in the epilogue; otherwise the per-tensor
/// form (the bound gains the two scales' roundings).
///
/// ## iron_gemm_fp8_blockwise_e4m3_nk
/// out[i, j] = Σ_kb scale_a[i, kb] · scale_b[j / 128, kb] · Σ_{p in block kb} a[i, p] · b[j, p]:
/// the block scaling of DeepSeek-V3 (§3.3.1): a's scales per row and 128 of k (what
/// iron_quantize_fp8_e4m3_g128 makes of an activation), b's per 128×128 block of the weight.
/// Layout: `scale_a [m, ceil(k / 128)]`, `scale_b [ceil(n / 128), ceil(k / 128)]` f32. The same
/// product, each block's products accumulated apart (on sm_90a one wgmma step is one block) and
/// folded into the f32 sum with their two scales once done, as DeepSeek-V3 promotes them out of
/// the tensor cores (so no product stays in flight past its step). The error bound: each block
/// as above with k = 128, then the f32 folds (γ over 2 · blocks + 2 roundings of S = Σ_kb
/// |scales| · Σ |a · b|). Its knobs (bm 64 or 128, bn 128 or 64: a tile in one block of b's
/// rows; stages, band) default to 64×128 tiles, whose two accumulators fit every target.
#include <iron/iron.hpp>
#include <optional>

#include "gemm_warpgroup.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL_TEMPLATE(iron_gemm_fp8, (class F8, bool ROWWISE),
                     (Tensor<F8> a, Tensor<F8> b, Tensor<f32> scale_a, Tensor<f32> scale_b,
                      Out<T> out, Constexpr<u32> m, Constexpr<u32> n, Constexpr<u32> k)) {
  layout(a, "[m, k]");
  layout(b, "[n, k]");
  layout(scale_a, ROWWISE ? "[m]" : "[1]");
  layout(scale_b, ROWWISE ? "[n]" : "[1]");
  layout(out, "[m, n]");
  const gemm::warpgroup::Shape shape = gemm::warpgroup::tuned_shape();
  gemm::warpgroup::declare<F8>(shape, k);
  // The per-tensor product's one scale, loaded once a thread.
  std::optional<Expr<f32>> tensor_scale;
  if constexpr (!ROWWISE) tensor_scale = load(scale_a[0u]) * load(scale_b[0u]);
  gemm::warpgroup::tile_product(
      a, b, m, n, k,
      [&](const auto& r, const auto& c, const Expr<f32>& sum) {
        if constexpr (ROWWISE) {
          store(out[r * n + c], cast<T>(sum * load(scale_a[r]) * load(scale_b[c])));
        } else {
          store(out[r * n + c], cast<T>(sum * *tensor_scale));
        }
      },
      shape);
}
IRON_KERNEL_VARIANT(iron_gemm_fp8, e4m3_nk, f8e4m3, false);
IRON_KERNEL_VARIANT(iron_gemm_fp8, e5m2_nk, f8e5m2, false);
IRON_KERNEL_VARIANT(iron_gemm_fp8, rowwise_e4m3_nk, f8e4m3, true);

namespace {

constexpr std::uint32_t kScaleBlock = 128;  ///< k (and n) per block scale

/// The block scales of the blockwise form, as gemm::warpgroup::product folds them: a's per row
/// and block of k (scale_a [m, blocks_k]), b's per block of 128 rows and of k (scale_b
/// [ceil(n / 128), blocks_k]); a tile's columns lie in one block of b's rows (bn divides 128).
struct Fp8BlockScales {
  static constexpr std::uint32_t kBlock = kScaleBlock;
  const Tensor<f32>& scale_a;
  const Tensor<f32>& scale_b;
  Expr<u32> blocks_k;

  Expr<f32> row_scale(const Expr<u32>& r, const Expr<u32>& kb) const {
    return load(scale_a[r * blocks_k + kb]);
  }
  Expr<f32> column_scale(const Expr<u32>& col0, const Expr<u32>& kb) const {
    return load(scale_b[col0 / kBlock * blocks_k + kb]);
  }
};

/// The blockwise form's knobs: no lag (each block is folded once its products are done) and
/// tiles at most 128 columns wide (one block of b's rows); by default 64×128, one multiplying
/// warpgroup, whose two accumulators (the sum and the block in hand) fit every target's
/// registers (two warpgroups' spill on sm_80 and under wmma).
dsl::TuningSpace blockwise_tuning_space() {
  return dsl::TuningSpace{}
      .knob("bm", {gemm::warpgroup::kBM / 2, gemm::warpgroup::kBM})
      .knob("bn", {gemm::warpgroup::kBN / 2, gemm::warpgroup::kBN / 4})
      .knob("stages", {gemm::warpgroup::kWideStages, 6, 3})
      .knob("band", {gemm::kBandRows, 4, 16})
      .knob("persistent", {0, 1})
      .knob("resident", {1, 2});
}

}  // namespace

IRON_KERNEL_TEMPLATE(iron_gemm_fp8_blockwise, (class F8),
                     (Tensor<F8> a, Tensor<F8> b, Tensor<f32> scale_a, Tensor<f32> scale_b,
                      Out<T> out, Constexpr<u32> m, Constexpr<u32> n, Constexpr<u32> k)) {
  layout(a, "[m, k]");
  layout(b, "[n, k]");
  layout(scale_a, "[m, ceil_div(k, 128)]");
  layout(scale_b, "[ceil_div(n, 128), ceil_div(k, 128)]");
  layout(out, "[m, n]");
  const gemm::warpgroup::Shape shape{
      tuned("bm"),      tuned("bn"), tuned("stages"), 0, tuned("band"), tuned("persistent") == 1,
      tuned("resident")};
  gemm::warpgroup::declare<F8>(shape, k);
  const Fp8BlockScales blocks{scale_a, scale_b, (k + (kScaleBlock - 1)) / kScaleBlock};
  gemm::warpgroup::tile_product(
      a, b, m, n, k,
      [&](const auto& r, const auto& c, const Expr<f32>& sum) {
        store(out[r * n + c], cast<T>(sum));
      },
      shape, blocks);
}
IRON_KERNEL_VARIANT(iron_gemm_fp8_blockwise, e4m3_nk, f8e4m3);

IRON_GEOMETRY(iron_gemm_fp8_e4m3_nk) { return gemm::warpgroup::tuned_geometry(q); }
IRON_GEOMETRY(iron_gemm_fp8_e5m2_nk) { return gemm::warpgroup::tuned_geometry(q); }
IRON_GEOMETRY(iron_gemm_fp8_rowwise_e4m3_nk) { return gemm::warpgroup::tuned_geometry(q); }
IRON_GEOMETRY(iron_gemm_fp8_blockwise_e4m3_nk) { return gemm::warpgroup::tuned_geometry(q); }
IRON_TUNING(iron_gemm_fp8_e4m3_nk) { return gemm::warpgroup::tuning_space<1>(); }
IRON_TUNING(iron_gemm_fp8_e5m2_nk) { return gemm::warpgroup::tuning_space<1>(); }
IRON_TUNING(iron_gemm_fp8_rowwise_e4m3_nk) { return gemm::warpgroup::tuning_space<1>(); }
IRON_TUNING(iron_gemm_fp8_blockwise_e4m3_nk) { return blockwise_tuning_space(); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "fp8_test_data.hpp"
#include "gemm_oracle.hpp"

namespace iron::kernels {

namespace {

testing::TestSetup fp8_setup(DType format, std::size_t m, std::size_t n, std::size_t k, bool exact,
                             DType dt, testing::Rng& rng, const dsl::TuningConfig& config = {}) {
  const auto a = fp8_operand(m * k, format, exact, rng);
  const auto b = fp8_operand(n * k, format, exact, rng);
  const double scale_a = 0.5;
  const double scale_b = exact ? 0.375 : 0.0625;
  const double scale = scale_a * scale_b;
  const double sums = max_abs_dot(a, b, m, n, k, false);
  const double sum_error = exact ? 0.0 : gamma_of(k, kFp8SumRoundoff) * sums;
  testing::TestSetup setup(
      format == DType::F8E4M3 ? "iron_gemm_fp8_e4m3_nk" : "iron_gemm_fp8_e5m2_nk", dt, config);
  setup.input("a", a)
      .input("b", b)
      .input("scale_a", {static_cast<float>(scale_a)})
      .input("scale_b", {static_cast<float>(scale_b)})
      .output("out", m * n)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .expect("out", gemm_oracle(a, b, m, n, k, false, scale))
      .tolerance(testing::tolerance::stored(dt, scale * sum_error, testing::tolerance::gamma(2)));
  return setup.grid(testing::geometry_grid(setup));
}

/// The rowwise form: a scale per row of a (a token's) and per row of b (an output channel's),
/// random in [0.01, 1]; the oracle in double, the bound scaled by the largest pair.
testing::TestSetup rowwise_setup(std::size_t m, std::size_t n, std::size_t k, bool exact, DType dt,
                                 testing::Rng& rng) {
  const auto a = fp8_operand(m * k, DType::F8E4M3, exact, rng);
  const auto b = fp8_operand(n * k, DType::F8E4M3, exact, rng);
  const std::vector<float> scale_a = rng.uniform(m, 0.01f, 1.0f);
  const std::vector<float> scale_b = rng.uniform(n, 0.01f, 1.0f);
  std::vector<float> want = gemm_oracle(a, b, m, n, k, false, 1.0);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      want[i * n + j] = static_cast<float>(double{want[i * n + j]} * scale_a[i] * scale_b[j]);
    }
  }
  const double sums = max_abs_dot(a, b, m, n, k, false);
  const double sum_error = exact ? 0.0 : gamma_of(k, kFp8SumRoundoff);
  testing::TestSetup setup("iron_gemm_fp8_rowwise_e4m3_nk", dt);
  setup.input("a", a)
      .input("b", b)
      .input("scale_a", scale_a)
      .input("scale_b", scale_b)
      .output("out", m * n)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .expect("out", want)
      .tolerance(testing::tolerance::stored(dt, (sum_error + testing::tolerance::gamma(3)) * sums,
                                            testing::tolerance::gamma(3)));
  return setup.grid(testing::geometry_grid(setup));
}

/// The blockwise form: scales per row of a and 128 of k, per 128×128 block of b; EXACT as
/// fp8_setup's with scales that are powers of two, else random in [0.01, 1].
testing::TestSetup blockwise_setup(std::size_t m, std::size_t n, std::size_t k, bool exact,
                                   DType dt, testing::Rng& rng,
                                   const dsl::TuningConfig& config = {}) {
  const auto a = fp8_operand(m * k, DType::F8E4M3, exact, rng);
  const auto b = fp8_operand(n * k, DType::F8E4M3, exact, rng);
  const std::size_t blocks_k = (k + kScaleBlock - 1) / kScaleBlock;
  const std::size_t blocks_n = (n + kScaleBlock - 1) / kScaleBlock;
  const std::vector<float> scale_a = fp8_block_scales(m * blocks_k, exact, rng);
  const std::vector<float> scale_b = fp8_block_scales(blocks_n * blocks_k, exact, rng);
  // The definition in double, and S = Σ_kb |scale| · Σ_{p in kb} |a · b|, the bound's scale.
  std::vector<float> want(m * n);
  double magnitude = 0.0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      double size = 0.0;
      for (std::size_t kb = 0; kb < blocks_k; ++kb) {
        double block = 0.0;
        double block_size = 0.0;
        for (std::size_t p = kb * kScaleBlock; p < std::min(k, (kb + 1) * kScaleBlock); ++p) {
          block += double{a[i * k + p]} * double{b[j * k + p]};
          block_size += std::fabs(double{a[i * k + p]} * double{b[j * k + p]});
        }
        const double s =
            double{scale_a[i * blocks_k + kb]} * double{scale_b[j / kScaleBlock * blocks_k + kb]};
        sum += s * block;
        size += s * block_size;
      }
      want[i * n + j] = static_cast<float>(sum);
      magnitude = std::max(magnitude, size);
    }
  }
  const double block_error =
      exact ? 0.0 : gamma_of(std::min<std::size_t>(k, kScaleBlock), kFp8SumRoundoff);
  const double fold_error = testing::tolerance::gamma(2 * blocks_k + 2);
  testing::TestSetup setup("iron_gemm_fp8_blockwise_e4m3_nk", dt, config);
  setup.input("a", a)
      .input("b", b)
      .input("scale_a", scale_a)
      .input("scale_b", scale_b)
      .output("out", m * n)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .expect("out", want)
      .tolerance(testing::tolerance::stored(dt, (block_error + fold_error) * magnitude,
                                            testing::tolerance::gamma(1)));
  return setup.grid(testing::geometry_grid(setup));
}

/// The bench: random a and b in the format, per-tensor scales; peers: torch._scaled_mm
/// (cuBLASLt's fp8 product, e4m3 only) and dequantize-then-matmul.
bench::BenchSetup fp8_bench(DType format, std::size_t m, std::size_t n, std::size_t k, DType dt) {
  const bool e5m2 = format == DType::F8E5M2;
  bench::BenchSetup setup(e5m2 ? "iron_gemm_fp8_e5m2_nk" : "iron_gemm_fp8_e4m3_nk", dt);
  setup.random("a", m * k)
      .random("b", n * k)
      .random("scale_a", 1, 0.5f, 1.0f)
      .random("scale_b", 1, 0.5f, 1.0f)
      .output("out", m * n)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(m * k + n * k + m * n * dtype_size(dt))
      .flops(2 * m * n * k)
      .peer("gemm_fp8_nk", {{"m", static_cast<double>(m)},
                            {"n", static_cast<double>(n)},
                            {"k", static_cast<double>(k)},
                            {"e5m2", e5m2 ? 1.0 : 0.0}});
}

constexpr std::size_t kSquare = 8192;  ///< the square bench's m = n = k

/// The kSquare³ bench of a form with scale tensors of `scales_a` and `scales_b` elements
/// (random in [0.01, 1]) and the peer case `peer`.
bench::BenchSetup scaled_square_bench(const char* kernel, const char* peer, std::size_t scales_a,
                                      std::size_t scales_b, DType dt) {
  bench::BenchSetup setup(kernel, dt);
  setup.random("a", kSquare * kSquare)
      .random("b", kSquare * kSquare)
      .random("scale_a", scales_a, 0.01f, 1.0f)
      .random("scale_b", scales_b, 0.01f, 1.0f)
      .output("out", kSquare * kSquare)
      .constant("m", kSquare)
      .constant("n", kSquare)
      .constant("k", kSquare);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * kSquare * kSquare + kSquare * kSquare * dtype_size(dt))
      .flops(2 * kSquare * kSquare * kSquare)
      .peer(peer, {{"m", kSquare}, {"n", kSquare}, {"k", kSquare}});
}

}  // namespace

// Small integers (exact on every accumulator): whole tiles, three 128-deep steps; random values
// over the format's range: tiles past the edges with a partial last step (k a multiple of 16: the
// TMA ring), k not a multiple of 16 (the step-by-step path), odd sizes, one row; the knobs away
// from their defaults.
IRON_TEST(iron_gemm_fp8_e4m3_nk, exact_256x512x384, F32, F16, BF16) {
  return fp8_setup(DType::F8E4M3, 256, 512, 384, true, dt, rng);
}
IRON_TEST(iron_gemm_fp8_e5m2_nk, exact_256x512x384, BF16) {
  return fp8_setup(DType::F8E5M2, 256, 512, 384, true, dt, rng);
}
IRON_TEST(iron_gemm_fp8_e4m3_nk, past_a_tile_129x300x208, F32, F16, BF16) {
  return fp8_setup(DType::F8E4M3, 129, 300, 208, false, dt, rng);
}
IRON_TEST(iron_gemm_fp8_e5m2_nk, past_a_tile_129x300x208, BF16) {
  return fp8_setup(DType::F8E5M2, 129, 300, 208, false, dt, rng);
}
IRON_TEST(iron_gemm_fp8_e4m3_nk, unaligned_k_70x130x200, BF16) {
  return fp8_setup(DType::F8E4M3, 70, 130, 200, false, dt, rng);
}
IRON_TEST(iron_gemm_fp8_e4m3_nk, primes_37x23x19, F16, BF16) {
  return fp8_setup(DType::F8E4M3, 37, 23, 19, false, dt, rng);
}
IRON_TEST(iron_gemm_fp8_e4m3_nk, vector_1x130x32, BF16) {
  return fp8_setup(DType::F8E4M3, 1, 130, 32, true, dt, rng);
}
IRON_TEST(iron_gemm_fp8_e4m3_nk, tuned_one_warpgroup_129x200x400, BF16) {
  return fp8_setup(DType::F8E4M3, 129, 200, 400, true, dt, rng,
                   {{"bm", 64}, {"bn", 128}, {"stages", 3}, {"lag", 0}});
}
// The small-m rule's choice: 64×64 tiles on a ring as deep as fits, wrapping, k a partial step.
IRON_TEST(iron_gemm_fp8_e4m3_nk, tuned_fill_stages_70x130x2000, BF16) {
  return fp8_setup(DType::F8E4M3, 70, 130, 2000, true, dt, rng,
                   {{"bm", 64}, {"bn", 64}, {"stages", 16}});
}

// A scale per token and per output channel: whole tiles (exact), tiles past the edges.
IRON_TEST(iron_gemm_fp8_rowwise_e4m3_nk, exact_256x512x256, F32, BF16) {
  return rowwise_setup(256, 512, 256, true, dt, rng);
}
IRON_TEST(iron_gemm_fp8_rowwise_e4m3_nk, past_a_tile_129x300x208, F16, BF16) {
  return rowwise_setup(129, 300, 208, false, dt, rng);
}

// Block scales: powers of two on small integers (exact), three blocks of k; random scales with
// a partial last block of k and of b's rows, two multiplying warpgroups; k not a multiple of 16;
// 64×64 tiles.
IRON_TEST(iron_gemm_fp8_blockwise_e4m3_nk, exact_200x256x384, F32, BF16) {
  return blockwise_setup(200, 256, 384, true, dt, rng);
}
IRON_TEST(iron_gemm_fp8_blockwise_e4m3_nk, partial_blocks_129x300x328, F16, BF16) {
  return blockwise_setup(129, 300, 328, false, dt, rng, {{"bm", 128}});
}
IRON_TEST(iron_gemm_fp8_blockwise_e4m3_nk, unaligned_k_70x130x200, BF16) {
  return blockwise_setup(70, 130, 200, false, dt, rng);
}
IRON_TEST(iron_gemm_fp8_blockwise_e4m3_nk, tuned_quarter_129x200x400, BF16) {
  return blockwise_setup(129, 200, 400, true, dt, rng, {{"bm", 64}, {"bn", 64}, {"stages", 6}});
}
IRON_TEST(iron_gemm_fp8_blockwise_e4m3_nk, two_warpgroups_200x136x392, BF16) {
  return blockwise_setup(200, 136, 392, false, dt, rng, {{"bm", 128}, {"stages", 3}});
}
// Persistent groups fewer than the tiles, each running on from tile to tile: per-tensor scales
// (9 tiles of 64×128 over 4 groups, k a partial last step) and block scales (the blocks folded
// within each tile, 9 tiles over 3 groups, a partial last block of k).
IRON_TEST(iron_gemm_fp8_e4m3_nk, tuned_persistent_129x300x208, BF16) {
  return fp8_setup(DType::F8E4M3, 129, 300, 208, false, dt, rng,
                   {{"persistent", 1}, {"bm", 64}, {"bn", 128}})
      .groups(4);
}
IRON_TEST(iron_gemm_fp8_blockwise_e4m3_nk, tuned_persistent_129x300x336, BF16) {
  return blockwise_setup(129, 300, 336, false, dt, rng, {{"persistent", 1}}).groups(3);
}

// The square product of the fp8 target (against Iron's own bf16 iron_gemm_warpgroup_nk at the
// same shape), a smaller one, and an 8B model's FFN up projection at 4096 tokens.
IRON_BENCH(iron_gemm_fp8_e4m3_nk, m8192_n8192_k8192, BF16) {
  return fp8_bench(DType::F8E4M3, 8192, 8192, 8192, dt);
}
IRON_BENCH(iron_gemm_fp8_e4m3_nk, m4096_n4096_k4096, BF16) {
  return fp8_bench(DType::F8E4M3, 4096, 4096, 4096, dt);
}
IRON_BENCH(iron_gemm_fp8_e4m3_nk, m4096_n14336_k4096, BF16) {
  return fp8_bench(DType::F8E4M3, 4096, 14336, 4096, dt);
}
IRON_BENCH(iron_gemm_fp8_blockwise_e4m3_nk, m8192_n8192_k8192, BF16) {
  constexpr std::size_t kBlocks = kSquare / kScaleBlock;
  return scaled_square_bench("iron_gemm_fp8_blockwise_e4m3_nk", "gemm_fp8_blockwise_nk",
                             kSquare * kBlocks, kBlocks * kBlocks, dt);
}
IRON_BENCH(iron_gemm_fp8_rowwise_e4m3_nk, m8192_n8192_k8192, BF16) {
  return scaled_square_bench("iron_gemm_fp8_rowwise_e4m3_nk", "gemm_fp8_rowwise_nk", kSquare,
                             kSquare, dt);
}
IRON_BENCH(iron_gemm_fp8_e5m2_nk, m8192_n8192_k8192, BF16) {
  return fp8_bench(DType::F8E5M2, 8192, 8192, 8192, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
