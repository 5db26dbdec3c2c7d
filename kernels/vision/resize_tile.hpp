/// The two ways a group of iron_vision_resize_normalize sums its tile: kRows output rows by
/// one output column a thread, 3 channels, into 3 · kRows f32 accumulators a thread.
///
/// - `staged`: the fast path. Once per group, each thread tabulates its column's horizontal
///   weights and the group the kRows rows' vertical weights over the input rows they reach
///   (threadgroup memory), and simdgroup 0 lists the rows some output row weighs (so a plain
///   resize reads only the rows it uses). The listed rows then arrive kBatch at a time through
///   16-byte asynchronous copies of the byte segment the tile's columns cover, one batch in
///   flight while the previous one is summed: each thread runs its taps over the batch's rows
///   (one weight load, 3 · kBatch byte loads from threadgroup memory a tap) and folds each row
///   into the output rows' accumulators with the tabulated vertical weights.
/// - `direct`: any scale. Weights are evaluated per tap and bytes read from global memory; it
///   serves the tiles whose segment, taps or rows do not fit the staged path's tables.
#pragma once

#include <array>
#include <cstddef>
#include <iron/iron.hpp>
#include <vector>

#include "resize_filter.hpp"

namespace iron::kernels::vision {
using namespace iron::dsl;

constexpr u32 kRows = 8;       // output rows a group owns
constexpr u32 kMaxCols = 64;   // output columns a group owns at most (one a thread)
constexpr u32 kBatch = 4;      // input rows a stage holds
constexpr u32 kPitch = 1792;   // bytes of one staged row segment
constexpr u32 kMaxSpan = 96;   // input rows the tile's vertical taps may reach
constexpr u32 kPlainTaps = 4;  // horizontal taps of a column without antialias, at most
constexpr u32 kWideTaps = 40;  // with antialias: the table's capacity

/// A byte's value as f32 without a conversion instruction (a quarter-rate one on the GPU):
/// 2^23 + v has v in its low mantissa bits, and subtracting 2^23 is exact.
inline Expr<f32> byte_value(const Expr<u8>& v) {
  return bitcast<f32>(cast<u32>(v) | 0x4B000000u) - 8388608.0f;
}

/// The horizontal weight table's capacity in taps for a filter.
template <Antialias AA>
constexpr u32 kMaxTaps = AA == Antialias::On ? kWideTaps : kPlainTaps;

/// A group's tile: where it sits, its axes' taps and its sums.
template <ResizeFilter F, Antialias AA>
struct ResizeTile {
  using Taps = AxisTaps<F, AA>;
  Tensor<u8> image;
  Expr<u32> b, height, width, total;  ///< image index, input size, bytes of the whole batch
  Expr<u32> tid;                      ///< the thread: its column within the tile
  const Taps& col;                    ///< the thread's output column
  const std::vector<Taps>& rows;      ///< the kRows output rows
  Regs<f32, std::size_t{3} * kRows>& acc;
  Regs<f32, kRows>& row_sum;
  Var<f32>& col_sum;

  /// Byte offset of input pixel (r, j) of image b.
  Expr<u32> at(const Expr<u32>& r, const Expr<u32>& j) const {
    return ((b * height + r) * width + j) * 3u;
  }

  /// The fast path over input pixels [px0, px_end) of the tile's columns.
  void staged(const Expr<u32>& px0, const Expr<u32>& px_end) const {
    constexpr u32 kTaps = kMaxTaps<AA>;
    auto stage = shared<u8>(2 * kBatch * kPitch);
    auto wx = shared<f32>(kTaps * kMaxCols);
    auto wy = shared<f32>(kMaxSpan * kRows);
    auto list = shared<u32>(kMaxSpan);
    auto listed = shared<u32>(1);
    const auto r_lo = rows[0].first;
    const auto span = rows[kRows - 1].last + 1u - r_lo;

    // The tables: this column's weights, then each reached row's weight for the kRows rows.
    const auto taps = col.last + 1u - col.first;
    for (auto t : range(0u, taps, 1u)) {
      auto w = col.weight(col.first + t);
      store(wx[t * kMaxCols + tid], w);
      col_sum += w;
    }
    for (auto i : range(tid, span, group_size<0>())) {
      for (u32 k = 0; k < kRows; ++k) store(wy[i * kRows + k], rows[k].weight(r_lo + i));
    }
    barrier();
    // The rows some output row weighs, in order.
    IRON_IF(simdgroup_id() == 0u) {
      Var<u32> count = 0u;
      for (auto base : range(0u, span, 32u)) {
        auto i = base + lane_id();
        auto row = min(i, span - 1u) * kRows;
        Expr<f32> reach(0.0f);
        for (u32 k = 0; k < kRows; ++k) reach = reach + abs(load(wy[row + k]));
        auto used = select(i < span && reach > 0.0f, Expr<u32>(1u), Expr<u32>(0u));
        auto slot = count + simd_prefix_exclusive_sum(used);
        IRON_IF(used == 1u) { store(list[slot], i); }
        count += simd_sum(used);
      }
      IRON_IF(lane_id() == 0u) { store(listed[0u], count.get()); }
    }
    barrier();
    const auto n = load(listed[0u]);
    const auto bytes = (px_end - px0) * 3u;
    const auto col_at = (col.first - px0) * 3u;

    // Byte offset in the image of listed row j's segment.
    auto segment = [&](const Expr<u32>& j) { return at(r_lo + load(list[min(j, n - 1u)]), px0); };
    // Starts the copies of rows j0 .. j0 + kBatch (past the list: its last row again) to half h.
    auto start = [&](const Expr<u32>& h, const Expr<u32>& j0) {
      for (auto q : range(0u, kBatch, 1u)) {
        auto from = segment(j0 + q);
        auto aligned = from - from % 16u;
        auto vectors = (from % 16u + bytes + 15u) / 16u;
        auto to = (h * kBatch + q) * kPitch;
        for (auto v : range(tid, vectors, group_size<0>())) {
          auto src = aligned + v * 16u;
          IRON_IF(src + 16u <= total) { copy_async<16>(stage[to + v * 16u], image[src], true); }
          IRON_ELSE {
            // The batch's last bytes, short of a whole vector.
            for (auto e : range(0u, 16u, 1u)) {
              store(stage[to + v * 16u + e], load(image[min(src + e, total - 1u)]));
            }
          }
        }
      }
    };

    // Iteration i starts batch i and sums batch i − 1, whose copies have landed by then.
    const auto batches = (n + kBatch - 1u) / kBatch;
    for (auto i : range(0u, batches + 1u, 1u)) {
      IRON_IF(i < batches) { start(i % 2u, i * kBatch); }
      async_commit();
      IRON_IF(i > 0u) {
        async_wait(1);  // batch i − 1 landed; batch i stays in flight
        barrier();
        auto bi = i - 1u;
        auto h = bi % 2u;
        std::array<Expr<u32>, kBatch> base;
        for (u32 q = 0; q < kBatch; ++q) {
          base[q] = (h * kBatch + q) * kPitch + segment(bi * kBatch + q) % 16u + col_at;
        }
        Regs<f32, std::size_t{3} * kBatch> sums(0.0f);
        for (auto t : range(0u, taps, 1u)) {
          auto w = load(wx[t * kMaxCols + tid]);
          for (u32 q = 0; q < kBatch; ++q) {
            for (u32 c = 0; c < 3; ++c) {
              sums[3 * q + c] += w * byte_value(load(stage[base[q] + t * 3u + c]));
            }
          }
        }
        for (u32 q = 0; q < kBatch; ++q) {
          auto j = bi * kBatch + q;
          auto row = load(list[min(j, n - 1u)]) * kRows;
          for (u32 k = 0; k < kRows; ++k) {
            auto w = select(j < n, load(wy[row + k]), Expr<f32>(0.0f));
            row_sum[k] += w;
            for (u32 c = 0; c < 3; ++c) acc[3 * k + c] += w * sums[3 * q + c];
          }
        }
        barrier();
      }
    }
  }

  /// Any tile: the weights evaluated per tap, the bytes read from global memory.
  void direct() const {
    for (auto j : range(col.first, col.last + 1u, 1u)) col_sum += col.weight(j);
    for (auto r : range(rows[0].first, rows[kRows - 1].last + 1u, 1u)) {
      std::array<Expr<f32>, kRows> wr;
      Expr<f32> reach(0.0f);
      for (u32 k = 0; k < kRows; ++k) {
        wr[k] = rows[k].weight(r);
        row_sum[k] += wr[k];
        reach = reach + abs(wr[k]);
      }
      IRON_IF(reach > 0.0f) {
        Var<f32> red = 0.0f;
        Var<f32> green = 0.0f;
        Var<f32> blue = 0.0f;
        for (auto j : range(col.first, col.last + 1u, 1u)) {
          auto w = col.weight(j);
          auto p = at(r, j);
          red += w * cast<f32>(load(image[p]));
          green += w * cast<f32>(load(image[p + 1u]));
          blue += w * cast<f32>(load(image[p + 2u]));
        }
        const std::array<Expr<f32>, 3> sums = {red.get(), green.get(), blue.get()};
        for (u32 k = 0; k < kRows; ++k) {
          for (u32 c = 0; c < 3; ++c) acc[3 * k + c] += wr[k] * sums[c];
        }
      }
    }
  }
};

}  // namespace iron::kernels::vision
