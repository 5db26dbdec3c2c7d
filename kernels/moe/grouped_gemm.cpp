/// iron_moe_gemm, iron_moe_gemm_affine_b4_g{32,64,128}, iron_moe_gemm_mxfp4,
/// iron_moe_gemm_fp8_blockwise_e4m3: the experts' products of a mixture-of-experts layer in one
/// launch. Row r of x_sorted belongs to the expert
/// e with offsets[e] ≤ r < offsets[e + 1] (iron_moe_sort's offsets, iron_moe_permute's rows) and
/// out[r, j] = Σ_p x_sorted[r, p] · w[e, j, p]; the rows from offsets[experts] on, which no
/// assignment took, are zeros.
///
/// The weight is [experts, n, k], each expert's a linear layer's [n, k]: dense in T, or
/// quantized along k as iron_gemm's quantized forms take it (MLX affine 4-bit codes in groups of
/// G, OCP MXFP4), each expert's rows after the previous expert's.
///
/// The fp8 form is DeepSeek-V3's: x_sorted and the weights in e4m3 with block scales, x's per row
/// and 128 of k (iron_quantize_fp8_e4m3_g128 of the permuted activations), each expert's weight's
/// per 128×128 block: out[r, j] = Σ_kb scale_x[r, kb] · scale_w[e, j / 128, kb] · Σ_{p in kb}
/// x_sorted[r, p] · w[e, j, p].
///
/// ## Error bound
/// iron_gemm's (dense) and iron_gemm_affine's / iron_gemm_mxfp4's (quantized), per row with its
/// expert's weight; iron_gemm_fp8_blockwise's (fp8); the zero rows are exact.
///
/// ## How it runs
/// Each expert's rows are cut into tiles of kBM rows of their own, so every tile multiplies by
/// one expert's weight; a launch has ⌈rows / kBM⌉ + experts rows of tiles, enough for any counts
/// (kernels/moe/expert_tiles.hpp). A group finds its tile's expert by one pass over the offsets
/// (the tiles run in bands of 8 tile rows, as iron_gemm's), then computes the tile as iron_gemm
/// does, with the experts' weights seen as one matrix of experts · n rows from which the tile's
/// columns start at e · n: 16-bit dense weights on iron_gemm_warpgroup_nk's 128×256 warpgroup
/// tiles (wgmma and TMA copies on sm_90a), f32 and quantized weights on gemm::product's 128×128
/// fragment tiles, the quantized ones decoded into the b stage (kernels/gemm/quant_b.hpp); fp8
/// on 64×128 warpgroup tiles (one multiplying warpgroup; 128-deep wgmma steps on sm_90a, each
/// block's products folded in with its scales). A
/// tile's rows past its expert's multiply the next rows of x_sorted and are not written; its
/// columns past n read the next expert's weight rows and are not written either. A tile past
/// every expert writes zeros.
///
/// ## Layout
/// - `x_sorted [rows, k]` T (rows = tokens · top_k, grouped by expert)
/// - `w [experts, n, k]` T (iron_moe_gemm)
/// - `packed [experts, n, k / 8]` u32, `scales`, `biases [experts, n, k / G]` T (affine 4-bit;
///   k a multiple of G)
/// - `packed [experts, n, k / 8]` u32, `scales [experts, n, k / 32]` u8 (MXFP4; k a multiple of
///   32)
/// - fp8: `x_sorted [rows, k]`, `w [experts, n, k]` f8e4m3, `scale_x [rows, ceil(k / 128)]`,
///   `scale_w [experts, ceil(n / 128), ceil(k / 128)]` f32
/// - `offsets [experts + 1]` u32 (non-decreasing, offsets[experts] ≤ rows)
/// - `out [rows, n]` T
///
/// ## Dispatch
/// Tiled: a grid of ⌈n / 256⌉ × (⌈rows / 128⌉ + experts) groups of exactly 384 threads for
/// 16-bit iron_moe_gemm, ⌈n / 128⌉ × (⌈rows / 64⌉ + experts) groups of 256 for the fp8 form,
/// ⌈n / 128⌉ × (⌈rows / 128⌉ + experts) groups of 128 for the others.
#include <iron/iron.hpp>
#include <string>

#include "../gemm/gemm_tiles.hpp"
#include "../gemm/gemm_warpgroup.hpp"
#include "../gemm/quant_b.hpp"
#include "expert_tiles.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {

/// The dispatch and grid of tiles of tile_rows rows × tile_cols columns and `threads` threads.
void declare_grouped(std::uint32_t tile_cols, std::uint32_t threads,
                     std::uint32_t tile_rows = gemm::kBM) {
  dispatch(tiled, {exactly(threads)});
  grid("[ceil_div(n, " + std::to_string(tile_cols) + "), " + moe::tile_rows_of_grid(tile_rows) +
       ", 1]");
}

/// This group's tile of rows (its expert's) and first column of out, in the banded order.
std::pair<moe::ExpertTile, Expr<u32>> grouped_tile(const Tensor<u32>& offsets,
                                                   const Expr<u32>& experts, const Expr<u32>& rows,
                                                   std::uint32_t tile_cols,
                                                   std::uint32_t tile_rows = gemm::kBM) {
  const auto [tile, col0] = gemm::banded_tile(1, tile_cols);
  return {moe::expert_tile(offsets, experts, rows, tile, tile_rows), col0};
}

/// The epilogue of a tile of one expert's rows: out[r, c − first] = sum for the rows before
/// row_end and the expert's n columns (first … first + n − 1 of the experts' weight rows).
template <class T>
auto store_expert_rows(const Out<T>& out, const Expr<u32>& row_end, const Expr<u32>& first,
                       const Expr<u32>& n) {
  return [&out, row_end, first, n](const auto& r, const auto& c, const Expr<f32>& sum) {
    IRON_IF(r < row_end && c - first < n) { store(out[r * n + c - first], cast<T>(sum)); }
  };
}

/// A tile's b source on gemm::product's fragment tiles (f32 and quantized weights): the source,
/// the column of it where the expert's n columns start, its columns in all, and the rows of
/// x_sorted the product reads (`rows`, or the expert's end to read zeros past it: whichever
/// leaves ptxas the registers).
template <class BSource>
struct ExpertB {
  BSource source;
  Expr<u32> first;
  Expr<u32> columns;
  Expr<u32> height;
};

/// The product of every expert's rows with its b source (make_b(tile) gives an ExpertB).
template <class T, class MakeB>
void fragment_tiles(const Tensor<T>& x_sorted, const Tensor<u32>& offsets, const Out<T>& out,
                    const Expr<u32>& rows, const Expr<u32>& experts, const Expr<u32>& n,
                    const Expr<u32>& k, MakeB&& make_b) {
  const auto [tile, col0] = grouped_tile(offsets, experts, rows, gemm::kBN);
  IRON_IF(tile.expert < experts) {
    const auto b = make_b(tile);
    gemm::product_at(x_sorted, b.source, b.height, b.columns, k, Expr<u32>(0u), tile.row0,
                     b.first + col0, store_expert_rows(out, tile.row_end, b.first, n));
  }
  IRON_ELSE { moe::zero_tile(out, tile.row0, rows, col0, n, gemm::kBM, gemm::kBN); }
}

}  // namespace

IRON_KERNEL(iron_moe_gemm,
            (Tensor<T> x_sorted, Tensor<T> w, Tensor<u32> offsets, Out<T> out, Constexpr<u32> rows,
             Constexpr<u32> experts, Constexpr<u32> n, Constexpr<u32> k)) {
  layout(x_sorted, "[rows, k]");
  layout(w, "[experts, n, k]");
  layout(offsets, "[experts + 1]");
  layout(out, "[rows, n]");
  if constexpr (lane_bytes<T>() == 2) {
    using gemm::warpgroup::kBN;
    declare_grouped(kBN, gemm::warpgroup::kThreads);
    const auto [tile, col0] = grouped_tile(offsets, experts, rows, kBN);
    IRON_IF(tile.expert < experts) {
      auto first = tile.expert * n;
      // Tiles end at the expert's rows, which store_expert_rows checks: one checked copy-out.
      gemm::warpgroup::tile_product_at<false>(x_sorted, w, rows, experts * n, k, tile.row0,
                                              first + col0,
                                              store_expert_rows(out, tile.row_end, first, n));
    }
    IRON_ELSE { moe::zero_tile(out, tile.row0, rows, col0, n, gemm::kBM, kBN); }
  } else {
    declare_grouped(gemm::kBN, gemm::kThreads);
    // The experts' weights as one matrix of experts · n rows: expert e's start at row e · n.
    fragment_tiles(x_sorted, offsets, out, rows, experts, n, k, [&](const moe::ExpertTile& t) {
      return ExpertB<gemm::DenseB<T, col_major>>{
          {w, Expr<u32>(0u)}, t.expert * n, experts * n, rows};
    });
  }
}

IRON_KERNEL_TEMPLATE(iron_moe_gemm_affine, (u32 GROUP),
                     (Tensor<T> x_sorted, Tensor<u32> packed, Tensor<T> scales, Tensor<T> biases,
                      Tensor<u32> offsets, Out<T> out, Constexpr<u32> rows, Constexpr<u32> experts,
                      Constexpr<u32> n, Constexpr<u32> k)) {
  constexpr u32 kBits = 4;
  declare_grouped(gemm::kBN, gemm::kThreads);
  require_multiple_of(k, GROUP);
  const std::string groups = "[experts, n, k / " + std::to_string(GROUP) + "]";
  layout(x_sorted, "[rows, k]");
  layout(packed, "[experts, n, k / " + std::to_string(codes_per_word<kBits>) + "]");
  layout(scales, groups);
  layout(biases, groups);
  layout(offsets, "[experts + 1]");
  layout(out, "[rows, n]");
  using Codes = gemm::AffineCodes<T, kBits, GROUP>;
  // The codes index weight rows of all experts: expert e's start at row e · n.
  fragment_tiles(x_sorted, offsets, out, rows, experts, n, k, [&](const moe::ExpertTile& t) {
    return ExpertB<gemm::QuantB<T, Codes>>{
        {Codes{packed, scales, biases}}, t.expert * n, experts * n, t.row_end};
  });
}
IRON_KERNEL_VARIANT(iron_moe_gemm_affine, b4_g32, 32);
IRON_KERNEL_VARIANT(iron_moe_gemm_affine, b4_g64, 64);
IRON_KERNEL_VARIANT(iron_moe_gemm_affine, b4_g128, 128);

IRON_KERNEL(iron_moe_gemm_mxfp4, (Tensor<T> x_sorted, Tensor<u32> packed, Tensor<u8> scales,
                                  Tensor<u32> offsets, Out<T> out, Constexpr<u32> rows,
                                  Constexpr<u32> experts, Constexpr<u32> n, Constexpr<u32> k)) {
  declare_grouped(gemm::kBN, gemm::kThreads);
  require_multiple_of(k, gemm::Mxfp4Codes::kBlock);
  layout(x_sorted, "[rows, k]");
  layout(packed, "[experts, n, k / 8]");
  layout(scales, "[experts, n, k / 32]");
  layout(offsets, "[experts + 1]");
  layout(out, "[rows, n]");
  fragment_tiles(x_sorted, offsets, out, rows, experts, n, k, [&](const moe::ExpertTile& t) {
    return ExpertB<gemm::QuantB<T, gemm::Mxfp4Codes>>{
        {gemm::Mxfp4Codes{packed, scales}}, t.expert * n, experts * n, t.row_end};
  });
}

namespace {

/// Rows of the fp8 form's tiles by default (knob "bm": 64, one multiplying warpgroup, or 128, two).
constexpr std::uint32_t kFp8TileRows = 64;
constexpr std::uint32_t kFp8TileCols = 128;  ///< its columns: one block of the weight's rows
constexpr std::uint32_t kFp8Block = 128;     ///< k (and weight rows) per block scale

/// The fp8 form's block scales, as gemm::warpgroup::product folds them: x_sorted's per row and
/// block of k, the tile's expert's weight's per block of 128 rows and of k.
struct ExpertBlockScales {
  static constexpr std::uint32_t kBlock = kFp8Block;
  const Tensor<f32>& scale_x;
  const Tensor<f32>& scale_w;
  Expr<u32> expert;
  Expr<u32> first;  ///< the expert's first row of the experts' weight rows
  Expr<u32> blocks_n;
  Expr<u32> blocks_k;

  Expr<f32> row_scale(const Expr<u32>& r, const Expr<u32>& kb) const {
    return load(scale_x[r * blocks_k + kb]);
  }
  Expr<f32> column_scale(const Expr<u32>& col0, const Expr<u32>& kb) const {
    auto weight_block = expert * blocks_n + (col0 - first) / kBlock;
    return load(scale_w[weight_block * blocks_k + kb]);
  }
};

}  // namespace

IRON_KERNEL(iron_moe_gemm_fp8_blockwise_e4m3,
            (Tensor<f8e4m3> x_sorted, Tensor<f32> scale_x, Tensor<f8e4m3> w, Tensor<f32> scale_w,
             Tensor<u32> offsets, Out<T> out, Constexpr<u32> rows, Constexpr<u32> experts,
             Constexpr<u32> n, Constexpr<u32> k)) {
  const std::uint32_t tile_rows = tuned("bm");
  const gemm::warpgroup::Shape shape{tile_rows, kFp8TileCols, gemm::warpgroup::kWideStages, 0,
                                     gemm::kBandRows};
  declare_grouped(kFp8TileCols, gemm::warpgroup::threads_of(tile_rows), tile_rows);
  layout(x_sorted, "[rows, k]");
  layout(scale_x, "[rows, ceil_div(k, 128)]");
  layout(w, "[experts, n, k]");
  layout(scale_w, "[experts, ceil_div(n, 128), ceil_div(k, 128)]");
  layout(offsets, "[experts + 1]");
  layout(out, "[rows, n]");
  const auto [tile, col0] = grouped_tile(offsets, experts, rows, kFp8TileCols, tile_rows);
  IRON_IF(tile.expert < experts) {
    auto first = tile.expert * n;
    const ExpertBlockScales blocks{scale_x,
                                   scale_w,
                                   tile.expert,
                                   first,
                                   (n + (kFp8Block - 1)) / kFp8Block,
                                   (k + (kFp8Block - 1)) / kFp8Block};
    gemm::warpgroup::tile_product_at<false>(
        x_sorted, w, rows, experts * n, k, tile.row0, first + col0,
        store_expert_rows(out, tile.row_end, first, n), shape, blocks);
  }
  IRON_ELSE { moe::zero_tile(out, tile.row0, rows, col0, n, tile_rows, kFp8TileCols); }
}

namespace {
/// A group per tile: tile_cols columns of out and tile_rows rows of an expert's (or of the zero
/// rows).
Geometry grouped_geometry(const GeometryQuery& q, std::uint32_t tile_cols, std::uint32_t threads,
                          std::uint32_t tile_rows = gemm::kBM) {
  const auto experts = static_cast<std::uint32_t>(q.constant("experts"));
  return {{tile_count(q.constant("n"), tile_cols),
           tile_count(q.constant("rows"), tile_rows) + experts, 1},
          {threads, 1, 1}};
}
}  // namespace

IRON_GEOMETRY(iron_moe_gemm) {
  return q.dtype == DType::F32
             ? grouped_geometry(q, gemm::kBN, gemm::kThreads)
             : grouped_geometry(q, gemm::warpgroup::kBN, gemm::warpgroup::kThreads);
}
IRON_GEOMETRY(iron_moe_gemm_fp8_blockwise_e4m3) {
  const std::uint32_t tile_rows = tuned("bm");
  return grouped_geometry(q, kFp8TileCols, gemm::warpgroup::threads_of(tile_rows), tile_rows);
}
IRON_TUNING(iron_moe_gemm_fp8_blockwise_e4m3) {
  return TuningSpace{}.knob("bm", {kFp8TileRows, 2 * kFp8TileRows});
}
IRON_GEOMETRY(iron_moe_gemm_affine_b4_g32) {
  return grouped_geometry(q, gemm::kBN, gemm::kThreads);
}
IRON_GEOMETRY(iron_moe_gemm_affine_b4_g64) {
  return grouped_geometry(q, gemm::kBN, gemm::kThreads);
}
IRON_GEOMETRY(iron_moe_gemm_affine_b4_g128) {
  return grouped_geometry(q, gemm::kBN, gemm::kThreads);
}
IRON_GEOMETRY(iron_moe_gemm_mxfp4) { return grouped_geometry(q, gemm::kBN, gemm::kThreads); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <algorithm>
#include <cmath>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "../gemm/fp8_test_data.hpp"
#include "../gemm/gemm_oracle.hpp"
#include "../gemm/quant_weights.hpp"
#include "assignments.hpp"

namespace iron::kernels {

namespace {

/// The definition in double: out[r, j] = Σ_p x[r, p] · weight(e, j, p) for the expert e whose
/// rows hold r, zeros from offsets[experts] on; with the error bound's scales.
template <class Weight>
ProductExpected grouped_oracle(const std::vector<float>& x,
                               const std::vector<std::uint32_t>& offsets, std::size_t rows,
                               std::size_t n, std::size_t k, Weight&& weight) {
  const std::size_t experts = offsets.size() - 1;
  std::vector<std::size_t> expert_of(rows, experts);
  for (std::size_t e = 0; e < experts; ++e) {
    std::fill(expert_of.begin() + offsets[e], expert_of.begin() + offsets[e + 1], e);
  }
  return product_oracle(x, rows, n, k, [&](std::size_t r, std::size_t j, std::size_t p) {
    return expert_of[r] < experts ? weight(expert_of[r], j, p) : 0.0;
  });
}

/// A routing's rows: each expert's count from the ids, as iron_moe_sort gives them. `read`, when
/// given, is the offsets buffer the kernel reads instead, one that means `offsets`.
struct Routing {
  std::vector<std::uint32_t> offsets;
  std::size_t rows = 0;
  std::size_t experts = 0;
  std::vector<std::uint32_t> read;
};
Routing routing_of(const std::vector<std::uint32_t>& ids, std::size_t experts) {
  return {sort_oracle(ids, experts).offsets, ids.size(), experts, {}};
}

/// The setup's common part: x_sorted, the offsets, out, the constants and the grid.
testing::TestSetup grouped_setup(const std::string& kernel, const Routing& g,
                                 const std::vector<float>& x, std::size_t n, std::size_t k,
                                 const ProductExpected& want, const testing::Tolerance& tolerance,
                                 DType dt, const dsl::TuningConfig& config = {}) {
  testing::TestSetup setup(kernel, dt, config);
  setup.input("x_sorted", x)
      .input_u32("offsets", g.read.empty() ? g.offsets : g.read)
      .output("out", g.rows * n)
      .constant("rows", static_cast<double>(g.rows))
      .constant("experts", static_cast<double>(g.experts))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .expect("out", want.out)
      .tolerance(tolerance);
  return setup;
}

/// Dense weights [experts, n, k]: iron_gemm's bound, γ_k · S, then the rounding to T.
testing::TestSetup dense_setup(const Routing& g, std::size_t n, std::size_t k, DType dt,
                               testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(g.rows * k, -1.0f, 1.0f), dt);
  const auto w = testing::round_through(rng.uniform(g.experts * n * k, -1.0f, 1.0f), dt);
  const auto want = grouped_oracle(x, g.offsets, g.rows, n, k, [&](auto e, auto j, auto p) {
    return double{w[(e * n + j) * k + p]};
  });
  namespace tol = testing::tolerance;
  auto setup = grouped_setup("iron_moe_gemm", g, x, n, k, want,
                             tol::stored(dt, tol::gamma(k) * want.s, tol::gamma(1)), dt);
  setup.input("w", w);
  return setup.grid(testing::geometry_grid(setup));
}

/// Quantized weights (experts · n rows of the format): iron_gemm_affine's bound.
testing::TestSetup quant_setup(const std::string& kernel, const Routing& g, const QuantWeights& q,
                               std::size_t n, std::size_t k, DType dt, testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(g.rows * k, -1.0f, 1.0f), dt);
  const auto want = grouped_oracle(
      x, g.offsets, g.rows, n, k, [&](auto e, auto j, auto p) { return q.w((e * n + j) * k + p); });
  namespace tol = testing::tolerance;
  const double eps = tol::unit_roundoff(dt) + tol::gamma(2);
  const double sum = tol::gamma(k);
  const double bound = (sum + eps + sum * eps) * want.s + (1.0 + sum) * tol::underflow(dt) * want.x;
  auto setup = grouped_setup(kernel, g, x, n, k, want, tol::stored(dt, bound, 0.0), dt);
  for (const auto& [name, words] : q.words) setup.input_u32(name, words);
  for (const auto& [name, values] : q.values) setup.input(name, values);
  return setup.grid(testing::geometry_grid(setup));
}

testing::TestSetup affine_setup(std::size_t group, const Routing& g, std::size_t n, std::size_t k,
                                DType dt, testing::Rng& rng) {
  return quant_setup("iron_moe_gemm_affine_b4_g" + std::to_string(group), g,
                     affine_weights(g.experts * n, k, 4, group, 1e-3f, 0.1f, dt, rng), n, k, dt,
                     rng);
}

testing::TestSetup mxfp4_setup(const Routing& g, std::size_t n, std::size_t k, DType dt,
                               testing::Rng& rng) {
  // Exponents 2^-7 … 2^7: products and sums stay well inside every T's range.
  return quant_setup("iron_moe_gemm_mxfp4", g, mxfp4_weights(g.experts * n, k, 120, 135, rng), n, k,
                     dt, rng);
}

/// e4m3 x_sorted and weights with block scales (x's per row and 128 of k, each expert's
/// weight's per 128×128 block): EXACT as fp8_operand's with power-of-two scales. The oracle
/// scales each product by its two blocks' scales; the bound is iron_gemm_fp8_blockwise's.
testing::TestSetup fp8_blockwise_setup(const Routing& g, std::size_t n, std::size_t k, bool exact,
                                       DType dt, testing::Rng& rng,
                                       const dsl::TuningConfig& config = {}) {
  constexpr std::size_t kBlock = 128;
  const std::size_t blocks_k = (k + kBlock - 1) / kBlock;
  const std::size_t blocks_n = (n + kBlock - 1) / kBlock;
  const auto x = fp8_operand(g.rows * k, DType::F8E4M3, exact, rng);
  const auto w = fp8_operand(g.experts * n * k, DType::F8E4M3, exact, rng);
  const auto scale_x = fp8_block_scales(g.rows * blocks_k, exact, rng);
  const auto scale_w = fp8_block_scales(g.experts * blocks_n * blocks_k, exact, rng);
  std::vector<float> unscaled_x = x;  // x with its scales, for the oracle's products
  for (std::size_t r = 0; r < g.rows; ++r) {
    for (std::size_t p = 0; p < k; ++p) unscaled_x[r * k + p] *= scale_x[r * blocks_k + p / kBlock];
  }
  const auto want =
      grouped_oracle(unscaled_x, g.offsets, g.rows, n, k, [&](auto e, auto j, auto p) {
        return double{w[(e * n + j) * k + p]} *
               double{scale_w[(e * blocks_n + j / kBlock) * blocks_k + p / kBlock]};
      });
  namespace tol = testing::tolerance;
  const double block_error =
      exact ? 0.0 : gamma_of(std::min<std::size_t>(k, kBlock), kFp8SumRoundoff);
  const double bound = (block_error + tol::gamma(2 * blocks_k + 2)) * want.s;
  auto setup = grouped_setup("iron_moe_gemm_fp8_blockwise_e4m3", g, x, n, k, want,
                             tol::stored(dt, bound, tol::gamma(1)), dt, config);
  setup.input("scale_x", scale_x).input("w", w).input("scale_w", scale_w);
  return setup.grid(testing::geometry_grid(setup));
}

/// Some assignments dropped (ids past the experts): their rows, at the end, are zeros.
Routing dropping_routing(std::size_t tokens, std::size_t experts, std::size_t top_k,
                         testing::Rng& rng) {
  auto ids = random_routing(tokens, experts, top_k, rng);
  ids[1] = static_cast<std::uint32_t>(experts);
  ids[ids.size() / 2] = 0xFFFFFFFFu;
  ids[ids.size() - 1] = static_cast<std::uint32_t>(experts);
  return routing_of(ids, experts);
}

/// The bench of a layer's routing (iron_moe_sort's offsets of a fixed uniform routing) for a
/// weight whose inputs `weights` adds: x_sorted random (x_element_bytes an element, 0 for T's); the
/// FLOPs of the kept rows.
template <class Weights>
bench::BenchSetup grouped_bench(const std::string& kernel, std::size_t tokens, std::size_t experts,
                                std::size_t top_k, std::size_t n, std::size_t k,
                                std::size_t weight_bytes, DType dt, Weights&& weights,
                                std::size_t x_element_bytes = 0) {
  const auto offsets = sort_oracle(bench_routing(tokens, experts, top_k), experts).offsets;
  const std::size_t rows = tokens * top_k;
  bench::BenchSetup setup(kernel, dt);
  setup.random("x_sorted", rows * k)
      .input_u32("offsets", offsets)
      .output("out", rows * n)
      .constant("rows", static_cast<double>(rows))
      .constant("experts", static_cast<double>(experts))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k));
  weights(setup);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(rows * (k * (x_element_bytes != 0 ? x_element_bytes : dtype_size(dt)) +
                           n * dtype_size(dt)) +
                   weight_bytes)
      .flops(2 * rows * n * k)
      .peer("moe_gemm", {{"tokens", static_cast<double>(tokens)},
                         {"experts", static_cast<double>(experts)},
                         {"top_k", static_cast<double>(top_k)},
                         {"n", static_cast<double>(n)},
                         {"k", static_cast<double>(k)}});
}

bench::BenchSetup dense_bench(std::size_t tokens, std::size_t experts, std::size_t top_k,
                              std::size_t n, std::size_t k, DType dt) {
  return grouped_bench("iron_moe_gemm", tokens, experts, top_k, n, k,
                       experts * n * k * dtype_size(dt), dt,
                       [&](bench::BenchSetup& s) { s.random("w", experts * n * k); });
}

bench::BenchSetup affine_bench(std::size_t group, std::size_t tokens, std::size_t experts,
                               std::size_t top_k, std::size_t n, std::size_t k, DType dt) {
  const std::size_t weights = experts * n * k;
  return grouped_bench("iron_moe_gemm_affine_b4_g" + std::to_string(group), tokens, experts, top_k,
                       n, k, weights / 2 + 2 * weights / group * dtype_size(dt), dt,
                       [&](bench::BenchSetup& s) {
                         s.random_u32("packed", weights / 8, 0, 0xFFFFFFFFu)
                             .random("scales", weights / group, 1e-3f, 1e-2f)
                             .random("biases", weights / group, -0.05f, 0.05f);
                       });
}

bench::BenchSetup mxfp4_bench(std::size_t tokens, std::size_t experts, std::size_t top_k,
                              std::size_t n, std::size_t k, DType dt) {
  const std::size_t weights = experts * n * k;
  return grouped_bench("iron_moe_gemm_mxfp4", tokens, experts, top_k, n, k,
                       weights / 2 + weights / 32, dt, [&](bench::BenchSetup& s) {
                         s.random_u32("packed", weights / 8, 0, 0xFFFFFFFFu)
                             .random_u32("scales", weights / 32, 118, 122);
                       });
}

}  // namespace

// Mixtral's routing (8 experts, top-2) on a small layer: two column tiles of 256 (three of 128),
// the last partial, and k over three 64-column steps, the last partial.
IRON_TEST(iron_moe_gemm, top2_of_8, F32, F16, BF16) {
  return dense_setup(routing_of(random_routing(48, 8, 2, rng), 8), 272, 136, dt, rng);
}
// An expert every token chooses (150 rows: a whole tile and a partial one), one that one token
// chooses, one that none does.
IRON_TEST(iron_moe_gemm, all_one_and_no_tokens, F32, F16, BF16) {
  return dense_setup(routing_of(edge_routing(150, 8, 3, rng), 8), 64, 64, dt, rng);
}
// 64 experts, top-8: most experts get a few rows, many tiles past every expert.
IRON_TEST(iron_moe_gemm, top8_of_64, F32, F16, BF16) {
  return dense_setup(routing_of(random_routing(24, 64, 8, rng), 64), 48, 24, dt, rng);
}
// Dropped assignments: the rows past the kept ones are zeros.
IRON_TEST(iron_moe_gemm, dropped_rows_are_zeros, F32, F16, BF16) {
  return dense_setup(dropping_routing(40, 6, 2, rng), 40, 32, dt, rng);
}
// Offsets that break the contract (decreasing, past the rows) are read clamped: expert 1 gets
// rows 20 … 20 (none), expert 2 rows 20 … 40, and nothing is written past the rows.
IRON_TEST(iron_moe_gemm, offsets_past_the_rows_are_clamped, F32, BF16) {
  return dense_setup(Routing{{0, 20, 20, 40}, 40, 3, {0, 20, 10, 60}}, 24, 16, dt, rng);
}
// k not a multiple of 8: every copy takes the element-by-element path; one expert.
IRON_TEST(iron_moe_gemm, one_expert_k20, F32, F16, BF16) {
  return dense_setup(routing_of(random_routing(33, 1, 1, rng), 1), 33, 20, dt, rng);
}

// fp8 with block scales: Mixtral's routing over two blocks of k and of the weight's rows, the
// last of each partial (exact sums); an expert every token chooses and experts none does; 64
// experts, top-8, and dropped rows; k not a multiple of 16 (the step-by-step path).
IRON_TEST(iron_moe_gemm_fp8_blockwise_e4m3, top2_of_8, F32, BF16) {
  return fp8_blockwise_setup(routing_of(random_routing(48, 8, 2, rng), 8), 200, 136, true, dt, rng);
}
IRON_TEST(iron_moe_gemm_fp8_blockwise_e4m3, all_one_and_no_tokens, F16, BF16) {
  return fp8_blockwise_setup(routing_of(edge_routing(150, 8, 3, rng), 8), 64, 256, false, dt, rng);
}
IRON_TEST(iron_moe_gemm_fp8_blockwise_e4m3, top8_of_64, BF16) {
  return fp8_blockwise_setup(routing_of(random_routing(24, 64, 8, rng), 64), 48, 32, false, dt,
                             rng);
}
IRON_TEST(iron_moe_gemm_fp8_blockwise_e4m3, dropped_rows_are_zeros, BF16) {
  return fp8_blockwise_setup(dropping_routing(40, 6, 2, rng), 40, 160, false, dt, rng);
}
IRON_TEST(iron_moe_gemm_fp8_blockwise_e4m3, one_expert_k20, BF16) {
  return fp8_blockwise_setup(routing_of(random_routing(33, 1, 1, rng), 1), 33, 20, false, dt, rng);
}
// 128-row tiles (two multiplying warpgroups): experts of more and fewer rows than a tile.
IRON_TEST(iron_moe_gemm_fp8_blockwise_e4m3, tiles_of_128_rows, BF16) {
  return fp8_blockwise_setup(routing_of(random_routing(150, 4, 2, rng), 4), 136, 264, false, dt,
                             rng, {{"bm", 128}});
}

IRON_TEST(iron_moe_gemm_affine_b4_g32, top2_of_8, F32, F16, BF16) {
  return affine_setup(32, routing_of(random_routing(40, 8, 2, rng), 8), 72, 128, dt, rng);
}
IRON_TEST(iron_moe_gemm_affine_b4_g32, dropped_rows_are_zeros, F32, F16, BF16) {
  return affine_setup(32, dropping_routing(20, 4, 2, rng), 40, 64, dt, rng);
}
IRON_TEST(iron_moe_gemm_affine_b4_g64, all_one_and_no_tokens, F32, F16, BF16) {
  return affine_setup(64, routing_of(edge_routing(140, 8, 3, rng), 8), 40, 128, dt, rng);
}
IRON_TEST(iron_moe_gemm_affine_b4_g64, top8_of_64, F32, F16, BF16) {
  return affine_setup(64, routing_of(random_routing(16, 64, 8, rng), 64), 24, 64, dt, rng);
}
IRON_TEST(iron_moe_gemm_affine_b4_g128, top2_of_8, F32, F16, BF16) {
  return affine_setup(128, routing_of(random_routing(30, 8, 2, rng), 8), 136, 256, dt, rng);
}
IRON_TEST(iron_moe_gemm_affine_b4_g128, one_expert, F32, F16, BF16) {
  return affine_setup(128, routing_of(random_routing(9, 1, 1, rng), 1), 16, 128, dt, rng);
}
IRON_TEST(iron_moe_gemm_mxfp4, top2_of_8, F32, F16, BF16) {
  return mxfp4_setup(routing_of(random_routing(40, 8, 2, rng), 8), 136, 96, dt, rng);
}
IRON_TEST(iron_moe_gemm_mxfp4, all_one_and_no_tokens, F32, F16, BF16) {
  return mxfp4_setup(routing_of(edge_routing(140, 8, 3, rng), 8), 24, 64, dt, rng);
}
IRON_TEST(iron_moe_gemm_mxfp4, dropped_rows_are_zeros, F32, F16, BF16) {
  return mxfp4_setup(dropping_routing(24, 6, 2, rng), 40, 32, dt, rng);
}

// Mixtral's layer (8 experts, top-2, hidden 4096, FFN 14336, 4096 tokens): the first projection
// and the second; a many-expert layer (128 experts, top-8, hidden 2048, FFN 768, gate and up
// together 1536).
IRON_BENCH(iron_moe_gemm, tokens4096_experts8_top2_n14336_k4096, BF16) {
  return dense_bench(4096, 8, 2, 14336, 4096, dt);
}
IRON_BENCH(iron_moe_gemm, tokens4096_experts8_top2_n4096_k14336, BF16) {
  return dense_bench(4096, 8, 2, 4096, 14336, dt);
}
IRON_BENCH(iron_moe_gemm, tokens4096_experts128_top8_n1536_k2048, BF16) {
  return dense_bench(4096, 128, 8, 1536, 2048, dt);
}
IRON_BENCH(iron_moe_gemm, tokens4096_experts128_top8_n2048_k768, BF16) {
  return dense_bench(4096, 128, 8, 2048, 768, dt);
}
// DeepSeek-V3's routed experts (256, top-8, FFN 2048 over hidden 7168) at 4096 tokens, e4m3 with
// its block scales.
IRON_BENCH(iron_moe_gemm_fp8_blockwise_e4m3, tokens4096_experts256_top8_n2048_k7168, BF16) {
  constexpr std::size_t kTokens = 4096;
  constexpr std::size_t kExperts = 256;
  constexpr std::size_t kTopK = 8;
  constexpr std::size_t kN = 2048;
  constexpr std::size_t kK = 7168;
  constexpr std::size_t kRows = kTokens * kTopK;
  constexpr std::size_t kBlocksK = kK / 128;
  return grouped_bench(
      "iron_moe_gemm_fp8_blockwise_e4m3", kTokens, kExperts, kTopK, kN, kK, kExperts * kN * kK, dt,
      [&](bench::BenchSetup& s) {
        s.random("scale_x", kRows * kBlocksK, 0.01f, 1.0f)
            .random("w", kExperts * kN * kK)
            .random("scale_w", kExperts * (kN / 128) * kBlocksK, 0.01f, 1.0f);
      },
      1);
}
IRON_BENCH(iron_moe_gemm_affine_b4_g64, tokens4096_experts8_top2_n14336_k4096, BF16) {
  return affine_bench(64, 4096, 8, 2, 14336, 4096, dt);
}
IRON_BENCH(iron_moe_gemm_affine_b4_g32, tokens512_experts8_top2_n14336_k4096, BF16) {
  return affine_bench(32, 512, 8, 2, 14336, 4096, dt);
}
IRON_BENCH(iron_moe_gemm_affine_b4_g128, tokens512_experts8_top2_n14336_k4096, BF16) {
  return affine_bench(128, 512, 8, 2, 14336, 4096, dt);
}
IRON_BENCH(iron_moe_gemm_mxfp4, tokens4096_experts128_top8_n1536_k2048, BF16) {
  return mxfp4_bench(4096, 128, 8, 1536, 2048, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
