/// The loop every iron_gemv form shares: a group reads a few rows of the weight once, in chunks
/// along k, and multiplies each chunk with a few rows of x, whatever the weight's format.
///
/// A format is a struct with
/// - `kChunk`: the k columns of one chunk (a multiple of kSub, or 1 for the element path);
/// - `Chunk load(row, c)`: the loads of chunk c of weight row `row`;
/// - `std::array<Expr<f32>, kSub> values(chunk, s)`: the numbers that multiply x's columns
///   c·kChunk + s·kSub …: the weights, or the codes of an affine format, each times 1 / x_scale(e);
/// - `float x_scale(e)`: the power of two x's element e of a sub-chunk is scaled by first;
/// - `Expr<f32> combine(chunk, dot, xsum)`: the chunk's term from dot = Σ x·values and
///   xsum = Σ x over the chunk (an affine group's bias multiplies xsum).
#pragma once

#include <algorithm>
#include <array>
#include <iron/iron.hpp>
#include <string>

namespace iron::kernels::gemv {

inline constexpr dsl::u32 kThreads = 128;  ///< threads a group
inline constexpr dsl::u32 kSimdgroups = kThreads / 32;
inline constexpr dsl::u32 kSub = 8;  ///< columns of k decoded and multiplied at a time

/// A group's part of out: kGroupRows weight rows × kGroupBatch x rows (the tensor-core path's
/// tile, kernels/gemm/gemv_skinny.hpp), which this path covers in sub-tiles of ROWS × BATCH.
inline constexpr dsl::u32 kGroupRows = 16;
inline constexpr dsl::u32 kGroupBatch = 16;

/// A thread's sums: element r · BATCH + b for weight row r and x row b.
template <dsl::u32 ROWS, dsl::u32 BATCH>
using Accumulators = dsl::Regs<dsl::f32, std::size_t{ROWS} * BATCH>;

/// Where a group works: ROWS weight rows and BATCH x rows, each clamped into the matrix for
/// reading (the copies past an edge compute values nobody stores), and the first of each.
template <dsl::u32 ROWS, dsl::u32 BATCH>
struct Tile {
  static constexpr dsl::u32 kRows = ROWS;
  static constexpr dsl::u32 kBatch = BATCH;
  static_assert(kGroupRows % ROWS == 0 && kGroupBatch % BATCH == 0, "sub-tiles tile the part");
  static constexpr dsl::u32 kSubTiles = (kGroupRows / ROWS) * (kGroupBatch / BATCH);
  dsl::Expr<dsl::u32> row0, batch0;
  std::array<dsl::Expr<dsl::u32>, ROWS> rows;
  std::array<dsl::Expr<dsl::u32>, BATCH> batch;
};

/// Sub-tile `sub` of group g's part: groups walk the x rows of one block of weight rows before
/// the next, so the groups sharing weight rows run side by side and read them from memory once.
template <dsl::u32 ROWS, dsl::u32 BATCH>
Tile<ROWS, BATCH> tile_of(const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& n,
                          const dsl::Expr<dsl::u32>& sub) {
  using namespace iron::dsl;
  auto parts_m = (m + (kGroupBatch - 1)) / kGroupBatch;
  auto g = group_id<0>();
  constexpr u32 kPerColumn = kGroupBatch / BATCH;  // sub-tiles along x's rows
  Tile<ROWS, BATCH> t{g / parts_m * kGroupRows + sub / kPerColumn * ROWS,
                      g % parts_m * kGroupBatch + sub % kPerColumn * BATCH,
                      {},
                      {}};
  for (u32 r = 0; r < ROWS; ++r) t.rows[r] = min(t.row0 + r, n - 1u);
  for (u32 b = 0; b < BATCH; ++b) t.batch[b] = min(t.batch0 + b, m - 1u);
  return t;
}

/// Whether x row b of the tile is inside x: rows past m (b >= 1 only) skip their work, so at
/// m = 1 a group multiplies one row.
template <class Tile>
dsl::Expr<dsl::boolean> batch_in(const Tile& tile, const dsl::Expr<dsl::u32>& m, dsl::u32 b) {
  return b == 0 ? dsl::Expr<dsl::boolean>(true) : tile.batch0 + b < m;
}

/// Adds one chunk `c` of the tile's rows (loaded as `w`) to `acc` (acc[r · kBatch + b] for
/// weight row r and x row b). x is [m, k] of T.
template <class T, class Format, class Tile, class Sums>
void multiply_chunk(const Format& format, const std::array<typename Format::Chunk, Tile::kRows>& w,
                    const dsl::Expr<dsl::u32>& c, const dsl::Tensor<T>& x,
                    const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& k, const Tile& tile,
                    const Sums& acc) {
  using namespace iron::dsl;
  constexpr u32 kRows = Tile::kRows;
  constexpr u32 kBatch = Tile::kBatch;
  constexpr u32 kSubs = Format::kChunk >= kSub ? Format::kChunk / kSub : 1;
  constexpr u32 kWidth = Format::kChunk >= kSub ? kSub : Format::kChunk;
  Sums dot(0.0f);
  Regs<f32, kBatch> xsum(0.0f);
  for (u32 s = 0; s < kSubs; ++s) {
    std::array<std::array<Expr<f32>, kWidth>, kRows> values;
    for (u32 r = 0; r < kRows; ++r) values[r] = format.values(w[r], s);
    for (u32 b = 0; b < kBatch; ++b) {
      IRON_IF(batch_in(tile, m, b)) {
        // Every load at chunk + a literal: vectorize merges runs of them into 16-byte loads.
        auto chunk = tile.batch[b] * k + c * Format::kChunk;
        std::array<Expr<f32>, kWidth> xs;
        for (u32 e = 0; e < kWidth; ++e) xs[e] = cast<f32>(load(x[chunk + (s * kWidth + e)]));
        if constexpr (Format::kNeedsXsum) {
          for (u32 e = 0; e < kWidth; ++e) xsum[b] += xs[e];
        }
        for (u32 e = 0; e < kWidth; ++e) {
          if (Format::x_scale(e) != 1.0f) xs[e] = xs[e] * Format::x_scale(e);
        }
        for (u32 r = 0; r < kRows; ++r) {
          const auto d = dot[r * kBatch + b];
          for (u32 e = 0; e < kWidth; ++e) d = fma(xs[e], values[r][e], d.get());
        }
      }
    }
  }
  for (u32 b = 0; b < kBatch; ++b) {
    IRON_IF(batch_in(tile, m, b)) {
      for (u32 r = 0; r < kRows; ++r) {
        acc[r * kBatch + b] += format.combine(w[r], dot[r * kBatch + b].get(), xsum[b].get());
      }
    }
  }
}

/// Adds chunks thread_id, thread_id + group size, … (of `chunks`) of the tile's rows to `acc`.
template <class T, class Format, class Tile, class Sums>
void accumulate(const Format& format, const dsl::Tensor<T>& x, const dsl::Expr<dsl::u32>& m,
                const dsl::Expr<dsl::u32>& k, const Tile& tile, const dsl::Expr<dsl::u32>& chunks,
                const Sums& acc) {
  using namespace iron::dsl;
  for (auto c : range(thread_id<0>(), chunks, group_size<0>())) {
    std::array<typename Format::Chunk, Tile::kRows> w;
    for (u32 r = 0; r < Tile::kRows; ++r) w[r] = format.load(tile.rows[r], c);
    multiply_chunk<T>(format, w, c, x, m, k, tile, acc);
  }
}

/// Sums each accumulator of a live x row over the group's threads (a simdgroup sum, then the
/// simdgroups' sums through shared memory) and writes out[b, row] (out is [m, n]) for the rows
/// inside the matrix.
template <class T, class Tile, class Sums>
void store_sums(const Sums& acc, const dsl::Out<T>& out, const dsl::Expr<dsl::u32>& m,
                const dsl::Expr<dsl::u32>& n, const Tile& tile) {
  using namespace iron::dsl;
  constexpr u32 kRows = Tile::kRows;
  constexpr u32 kBatch = Tile::kBatch;
  constexpr u32 kSums = kRows * kBatch;
  static_assert(kSums <= kThreads, "a thread a sum");
  auto partial = shared<f32>(kSums * kSimdgroups);
  for (u32 b = 0; b < kBatch; ++b) {
    IRON_IF(batch_in(tile, m, b)) {
      for (u32 r = 0; r < kRows; ++r) {
        auto sum = simd_sum(acc[r * kBatch + b].get());
        IRON_IF(lane_id() == 0u) { store(partial[simdgroup_id() * kSums + r * kBatch + b], sum); }
      }
    }
  }
  barrier();
  auto t = thread_id<0>();
  auto row = tile.row0 + t / kBatch;
  auto batch = tile.batch0 + t % kBatch;
  IRON_IF(t < kSums && row < n && batch < m) {
    Var<f32> total(load(partial[t]));
    for (auto g : range(1u, simdgroup_count())) total += load(partial[g * kSums + t]);
    store(out[batch * n + row], cast<T>(total));
  }
}

/// Adds the group's part of x · wᵀ in `format` to out, in sub-tiles of ROWS weight rows × BATCH
/// x rows one after another (each splitting k over the group's threads): the path for f32, few
/// rows of x, and shapes the tensor-core path does not take. `chunks` is the chunks of a row.
template <class T, dsl::u32 ROWS, dsl::u32 BATCH, class Format>
void product(const Format& format, const dsl::Tensor<T>& x, const dsl::Out<T>& out,
             const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& n,
             const dsl::Expr<dsl::u32>& k, const dsl::Expr<dsl::u32>& chunks) {
  using namespace iron::dsl;
  for (auto sub : range(0u, Tile<ROWS, BATCH>::kSubTiles)) {
    const auto tile = tile_of<ROWS, BATCH>(m, n, sub);
    IRON_IF(tile.row0 < n && tile.batch0 < m) {
      Accumulators<ROWS, BATCH> acc(0.0f);
      accumulate<T>(format, x, m, k, tile, chunks, acc);
      store_sums<T>(acc, out, m, n, tile);
      barrier();  // the next sub-tile reuses store_sums's shared sums
    }
  }
}

/// The FFMA path for any m. 16-bit T (the decode shape's types, which take tensor cores past 4
/// rows of x): a pass per row of x and 8 weight rows (8 chunks in flight a thread). f32: 4 × 4
/// sub-tiles. One shape each keeps the kernels small (they compile at run time).
template <class T, class Format>
void product(const Format& format, const dsl::Tensor<T>& x, const dsl::Out<T>& out,
             const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& n,
             const dsl::Expr<dsl::u32>& k, const dsl::Expr<dsl::u32>& chunks) {
  if constexpr (dsl::lane_bytes<T>() == 2) {
    product<T, 8, 1>(format, x, out, m, n, k, chunks);
  } else {
    product<T, 4, 4>(format, x, out, m, n, k, chunks);
  }
}

/// The grid rule: one group per kGroupRows weight rows and kGroupBatch x rows.
inline std::string grid_rule() {
  return "[ceil_div(n, " + std::to_string(kGroupRows) + ") * ceil_div(m, " +
         std::to_string(kGroupBatch) + "), 1, 1]";
}

/// The launch of every form: a group of kThreads threads per part of out.
inline dsl::Geometry geometry(const dsl::GeometryQuery& q) {
  return {
      {dsl::tile_count(q.constant("n"), kGroupRows) * dsl::tile_count(q.constant("m"), kGroupBatch),
       1, 1},
      {kThreads, 1, 1}};
}

}  // namespace iron::kernels::gemv
