/// The tensor-core path of iron_gemv's 16-bit forms: a group's kTileM × kTileN tile of x · wᵀ
/// (x [m, k] of T; w [n, k] dense, or quantized along k and decoded in shared memory) for the
/// decode shape, where m is a few rows and the product is bound by reading w once.
///
/// Each pipeline step copies kStepK columns of the group's x rows and weight rows (or of the
/// weight's codes, scales and biases) into a ring with asynchronous copies, so several steps of
/// w are in flight while one is multiplied; a quantized step is then decoded by all threads into
/// one shared tile of T (rounded: tensor cores multiply T). The four simdgroups split each step
/// along k, a 16×16×16 fragment product at a time, and their partial tiles meet through shared
/// memory at the end. Rows of x past m are zero-filled copies: a product row nobody stores.
#pragma once

#include <array>
#include <iron/iron.hpp>

#include "gemv_rows.hpp"
#include "quant_b.hpp"

namespace iron::kernels::gemv::skinny {

inline constexpr dsl::u32 kTileM = kGroupBatch;  ///< rows of x a group
inline constexpr dsl::u32 kTileN = kGroupRows;   ///< weight rows (columns of out) a group
inline constexpr dsl::u32 kStepK = 256;          ///< k columns a pipeline step
inline constexpr dsl::u32 kWarps = kThreads / 32;
inline constexpr dsl::u32 kStages = 4;
/// A shared row of T: the step's columns and 16 bytes of padding, so the 8 rows a fragment load
/// reads at once start in different banks.
inline constexpr dsl::u32 kPitch = kStepK + 8;
inline constexpr dsl::u32 kStageX = kTileM * kPitch;  ///< the x tile of a step
inline constexpr dsl::u32 kStageW = kTileN * kPitch;  ///< the weight tile of a step
static_assert(kTileM == 16 && kTileN % 8 == 0, "one fragment row of tiles, whole B tiles");
static_assert(kStepK % (16 * kWarps) == 0, "whole fragment steps for every simdgroup");

/// Starts copying rows [row0, row0 + ROWS) × columns [p0, p0 + kStepK) of `src` ([rows, k], k a
/// multiple of 8) into the tile at `at`, 16 bytes a copy, zeros outside the matrix.
template <dsl::u32 ROWS, class T>
void start_rows(const dsl::Tensor<T>& src, const dsl::Expr<dsl::u32>& rows,
                const dsl::Expr<dsl::u32>& k, const dsl::Shared<T>& tile,
                const dsl::Expr<dsl::u32>& at, const dsl::Expr<dsl::u32>& row0,
                const dsl::Expr<dsl::u32>& p0) {
  using namespace iron::dsl;
  constexpr u32 kW = 8;
  constexpr u32 kPerRow = kStepK / kW;
  static_assert(ROWS * kPerRow % kThreads == 0, "whole copies a thread");
  for (u32 j = 0; j < ROWS * kPerRow / kThreads; ++j) {
    auto v = thread_id<0>() + j * kThreads;
    auto r = v / kPerRow;
    auto c = v % kPerRow * kW;
    auto inside = row0 + r < rows && p0 + c < k;
    copy_async<kW>(tile[at + r * kPitch + c], src[select(inside, (row0 + r) * k + p0 + c, 0u)],
                   inside);
  }
}

/// Starts copying `per_row` elements (a multiple of W) of each of the kTileN rows from `col0` of a
/// side tensor `src` [n, row_length] at column `first` into the ring `ring` at `at` (rows packed),
/// W elements a copy; rows past n are zeros.
template <dsl::u32 W, class E>
void start_side(const dsl::Tensor<E>& src, const dsl::Expr<dsl::u32>& row_length,
                const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& first, dsl::u32 per_row,
                const dsl::Shared<E>& ring, const dsl::Expr<dsl::u32>& at,
                const dsl::Expr<dsl::u32>& col0) {
  using namespace iron::dsl;
  const u32 copies = kTileN * per_row / W;
  for (u32 j = 0; j * kThreads < copies; ++j) {
    auto v = thread_id<0>() + j * kThreads;
    auto r = v / (per_row / W);
    auto c = v % (per_row / W) * W;
    auto inside = col0 + r < n;
    const auto copy = [&] {
      copy_async<W>(ring[at + r * per_row + c],
                    src[select(inside, (col0 + r) * row_length + first + c, 0u)], inside);
    };
    if (copies % kThreads == 0) {
      copy();
    } else {
      IRON_IF(v < copies) { copy(); }
    }
  }
}

/// A dense weight [n, k] of T: its step is copied into a ring and multiplied from there.
template <class T>
struct DenseSource {
  static constexpr bool kDecodes = false;
  const dsl::Tensor<T>& w;
  dsl::Shared<T> ring = dsl::ring<T>(kStageW);

  void start(const dsl::Expr<dsl::u32>& slot, const dsl::Expr<dsl::u32>& p0,
             const dsl::Expr<dsl::u32>& col0, const dsl::Expr<dsl::u32>& n,
             const dsl::Expr<dsl::u32>& k) const {
    start_rows<kTileN>(w, n, k, ring, slot * kStageW, col0, p0);
  }
  /// Where step `slot`'s weight tile is ([kTileN rows][kPitch]).
  const dsl::Shared<T>& tile() const { return ring; }
  static dsl::Expr<dsl::u32> tile_at(const dsl::Expr<dsl::u32>& slot) { return slot * kStageW; }
};

/// A quantized weight: each step's codes and scales (and biases) are copied into rings, then
/// decoded by every thread into one tile of T, 8 columns (one piece) at a time. `Format`
/// (AffineSteps, Mxfp4Steps) gives `start` (the step's copies) and `piece` (the f32 weights of
/// piece c of row r, decoded as iron_gemm's b sources decode them).
template <class T, class Format>
struct DecodedSource {
  static constexpr bool kDecodes = true;
  Format format;
  dsl::Shared<T> decoded = dsl::shared<T>(kStageW);

  void start(const dsl::Expr<dsl::u32>& slot, const dsl::Expr<dsl::u32>& p0,
             const dsl::Expr<dsl::u32>& col0, const dsl::Expr<dsl::u32>& n,
             const dsl::Expr<dsl::u32>& k) const {
    format.start(slot, p0, col0, n, k);
  }
  /// Decodes step `slot` into the tile: kTileN rows of kStepK / 8 pieces.
  void decode(const dsl::Expr<dsl::u32>& slot) const {
    using namespace iron::dsl;
    constexpr u32 kPieces = kStepK / 8;
    static_assert(kTileN * kPieces % kThreads == 0, "whole pieces a thread");
    for (u32 j = 0; j < kTileN * kPieces / kThreads; ++j) {
      auto v = thread_id<0>() + j * kThreads;
      auto r = v / kPieces;
      auto c = v % kPieces;
      const std::array<Expr<f32>, 8> w = format.piece(slot, r, c);
      std::array<Expr<T>, 8> values;
      for (u32 e = 0; e < 8; ++e) values[e] = cast<T>(w[e]);
      // One 16-byte store a piece: consecutive threads fill consecutive pieces of a row.
      store_lanes(decoded[r * kPitch + c * 8u], values);
    }
  }
  const dsl::Shared<T>& tile() const { return decoded; }
  static dsl::Expr<dsl::u32> tile_at(const dsl::Expr<dsl::u32>& /*slot*/) { return {0u}; }
};

/// MLX affine codes of BITS bits in groups of GROUP (k a multiple of kStepK: every copy whole).
template <class T, dsl::u32 BITS, dsl::u32 GROUP>
struct AffineSteps {
  using Codes = gemm::AffineCodes<T, BITS, GROUP>;  ///< the decode of a piece
  static constexpr dsl::u32 kCodes = codes_per_word<BITS>;
  static constexpr dsl::u32 kWords = kStepK / kCodes;            // words of a row a step
  static constexpr dsl::u32 kGroups = kStepK / GROUP;            // scales of a row a step
  static constexpr dsl::u32 kSideW = kGroups < 8 ? kGroups : 8;  // scales a copy (≤ 16 bytes)
  static_assert(kStepK % GROUP == 0 && gemm::kPiece == 8, "whole groups a step, 8 codes a piece");

  const dsl::Tensor<dsl::u32>& packed;
  const dsl::Tensor<T>& scales;
  const dsl::Tensor<T>& biases;
  dsl::Shared<dsl::u32> codes = dsl::ring<dsl::u32>(kTileN * kWords);
  dsl::Shared<T> scale_ring = dsl::ring<T>(kTileN * kGroups);
  dsl::Shared<T> bias_ring = dsl::ring<T>(kTileN * kGroups);

  void start(const dsl::Expr<dsl::u32>& slot, const dsl::Expr<dsl::u32>& p0,
             const dsl::Expr<dsl::u32>& col0, const dsl::Expr<dsl::u32>& n,
             const dsl::Expr<dsl::u32>& k) const {
    start_side<4>(packed, k / kCodes, n, p0 / kCodes, kWords, codes, slot * (kTileN * kWords),
                  col0);
    start_side<kSideW>(scales, k / GROUP, n, p0 / GROUP, kGroups, scale_ring,
                       slot * (kTileN * kGroups), col0);
    start_side<kSideW>(biases, k / GROUP, n, p0 / GROUP, kGroups, bias_ring,
                       slot * (kTileN * kGroups), col0);
  }
  /// The f32 weights of piece c (columns 8c … 8c + 7 of the step) of row r: scale · q + bias.
  std::array<dsl::Expr<dsl::f32>, 8> piece(const dsl::Expr<dsl::u32>& slot,
                                           const dsl::Expr<dsl::u32>& r,
                                           const dsl::Expr<dsl::u32>& c) const {
    using namespace iron::dsl;
    auto first = slot * (kTileN * kWords) + r * kWords + c * (8 / kCodes);
    auto group = slot * (kTileN * kGroups) + r * kGroups + c * 8u / GROUP;
    std::array<Expr<u32>, Codes::kWords> words;
    for (u32 j = 0; j < Codes::kWords; ++j) words[j] = load(codes[first + j]);
    auto scale = cast<f32>(load(scale_ring[group]));  // traced in this order, on every compiler
    auto bias = cast<f32>(load(bias_ring[group]));
    return Codes::values(words, scale, bias);
  }
};

/// OCP MXFP4: a word of 8 E2M1 codes a piece, one E8M0 scale byte per 32 columns.
struct Mxfp4Steps {
  static constexpr dsl::u32 kWords = kStepK / 8;
  static constexpr dsl::u32 kBlocks = kStepK / 32;
  static_assert(kBlocks == 8, "one 8-byte copy of scales a row");

  const dsl::Tensor<dsl::u32>& packed;
  const dsl::Tensor<dsl::u8>& scales;
  dsl::Shared<dsl::u32> codes = dsl::ring<dsl::u32>(kTileN * kWords);
  dsl::Shared<dsl::u8> scale_ring = dsl::ring<dsl::u8>(kTileN * kBlocks);

  void start(const dsl::Expr<dsl::u32>& slot, const dsl::Expr<dsl::u32>& p0,
             const dsl::Expr<dsl::u32>& col0, const dsl::Expr<dsl::u32>& n,
             const dsl::Expr<dsl::u32>& k) const {
    start_side<4>(packed, k / 8u, n, p0 / 8u, kWords, codes, slot * (kTileN * kWords), col0);
    start_side<kBlocks>(scales, k / 32u, n, p0 / 32u, kBlocks, scale_ring,
                        slot * (kTileN * kBlocks), col0);
  }
  std::array<dsl::Expr<dsl::f32>, 8> piece(const dsl::Expr<dsl::u32>& slot,
                                           const dsl::Expr<dsl::u32>& r,
                                           const dsl::Expr<dsl::u32>& c) const {
    using namespace iron::dsl;
    auto word = load(codes[slot * (kTileN * kWords) + r * kWords + c]);
    return gemm::Mxfp4Codes::values(
        word, cast<u32>(load(scale_ring[slot * (kTileN * kBlocks) + r * kBlocks + c / 4u])));
  }
};

/// The group's tile: x rows [row0, row0 + 16) and weight rows [col0, col0 + 16), with the groups
/// that share weight rows adjacent in the grid.
struct Tile {
  dsl::Expr<dsl::u32> row0, col0;
};
inline Tile tile_of(const dsl::Expr<dsl::u32>& m) {
  using namespace iron::dsl;
  auto tiles_m = (m + (kTileM - 1)) / kTileM;
  auto g = group_id<0>();
  return {g % tiles_m * kTileM, g / tiles_m * kTileN};
}

/// out[r, c] = Σ_p x[r, p] · w[c, p] for the group's tile (out [m, n] of T), w from `source`
/// (DenseSource, DecodedSource). k must be a multiple of 8 (of kStepK for a decoded source).
template <class T, class Source>
void product(const dsl::Tensor<T>& x, const Source& source, const dsl::Out<T>& out,
             const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& n,
             const dsl::Expr<dsl::u32>& k) {
  using namespace iron::dsl;
  const Tile tile = tile_of(m);
  auto x_ring = ring<T>(kStageX);
  auto warp = simdgroup_id();
  FragAcc<kTileM, kTileN> acc;
  FragA<T, kTileM, 16> fa;
  FragB<T, 16, kTileN> fb;
  pipelined(
      0u, k, kStepK, kStages,
      [&](const Expr<u32>& p0, const Expr<u32>& slot) {
        start_rows<kTileM>(x, m, k, x_ring, slot * kStageX, tile.row0, p0);
        source.start(slot, p0, tile.col0, n, k);
      },
      [&](const Expr<u32>&, const Expr<u32>& slot) {
        if constexpr (Source::kDecodes) {
          source.decode(slot);
          barrier();
        }
        auto a0 = slot * kStageX;
        auto b0 = source.tile_at(slot);
        for (u32 s = 0; s < kStepK / (16 * kWarps); ++s) {
          auto kk = (warp + s * kWarps) * 16u;
          fa.load(x_ring, a0 + kk, kPitch);
          fb.load(source.tile(), b0 + kk, kPitch, col_major);
          mma(acc, fa, fb);
        }
      });
  // The simdgroups' partial tiles meet in shared memory; each thread sums two elements.
  constexpr u32 kTile = kTileM * kTileN;
  auto partial = shared<f32>(kTile * kWarps);
  acc.store(partial, warp * kTile, kTileN);
  barrier();
  for (u32 j = 0; j < kTile / kThreads; ++j) {
    auto i = thread_id<0>() + j * kThreads;
    auto r = tile.row0 + i / kTileN;
    auto c = tile.col0 + i % kTileN;
    IRON_IF(r < m && c < n) {
      Var<f32> sum(load(partial[i]));
      for (u32 w = 1; w < kWarps; ++w) sum += load(partial[w * kTile + i]);
      store(out[r * n + c], cast<T>(sum));
    }
  }
}

}  // namespace iron::kernels::gemv::skinny
