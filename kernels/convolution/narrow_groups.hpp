/// The product of a convolution whose groups are narrow (ResNeXt's 4–16 channels a group): a
/// few groups' im2col rows and weights staged together, then only the groups' own products.
///
/// gemm's 128 × 128 tiles leave all but cout_g of their 128 columns idle here and pad k = kh · kw
/// · cin_g (72 for ResNeXt's 3×3 over 8 channels) to whole 64-column steps, so a tile does 16 to
/// 32 times the products it needs. And one group's channels are only cin_g · size bytes of each
/// pixel (16 of a 128-byte line for 8 bf16 channels), so a group that gathers alone asks the
/// cache for a line per copy. This body keeps the grid (⌈m / 128⌉ × groups groups of 128
/// threads) but gives each group a *set* of G' ∈ {8, 4, 2, 1} convolution groups (the largest
/// that divides `groups` with G' · cin_g ≤ 64 channels) and 128 / G' pixels: a pixel's channels
/// of the whole set are consecutive, so the copies of one tap read whole lines. The 128 rows
/// (pixels of each group of the set) and the set's weights (16 rows a group, zeros past cout_g)
/// are staged a few kernel rows at a time (at most 48 columns; 16 of f32) by 4-element
/// asynchronous copies; each simdgroup multiplies its two 16-row units by their group's weight.
/// A member group's rows start cin_g elements (rounded up to 16 bytes) further along the banks
/// than the one before: a pixel's lanes write one 16-byte piece for each member, whose rows are
/// P · pitch apart, a multiple of 128 bytes, so without the skew every member's piece fell on
/// the same four banks (8-way conflicted copies; ~60% of ResNeXt's shared-memory wavefronts were
/// excess, bench/NOTES.md §68).
#pragma once

#include <bit>
#include <cstdint>
#include <iron/iron.hpp>

#include "../gemm/gemm_tiles.hpp"
#include "conv_shape.hpp"

namespace iron::kernels::convolution {

inline constexpr std::uint32_t kNarrowChannels = 16;     ///< most output channels a group
inline constexpr std::uint32_t kNarrowSetChannels = 64;  ///< most input channels of a set
inline constexpr std::uint32_t kNarrowCopy = 4;          ///< elements a copy (cin_g a multiple)
inline constexpr std::uint32_t kNarrowRows = gemm::kBM;  ///< staged rows: (group, pixel) pairs
inline constexpr std::uint32_t kNarrowUnit = 16;         ///< rows a fragment product takes
/// Most columns (taps · cin_g) a chunk stages, whole 16-column steps: 48 of 16-bit T (96 bytes),
/// 16 of f32, so that the rows and the weights (two 128-row tiles) fit Metal's 32 KB of
/// threadgroup memory.
template <class T>
constexpr std::uint32_t narrow_cols() {
  return dsl::lane_bytes<T>() == 2 ? 48 : 16;
}
/// The staged rows' pitch: a chunk's room and 16 bytes more (an odd number of 16-byte pieces),
/// so a fragment load's eight rows fall in different banks.
template <class T>
constexpr std::uint32_t narrow_pitch() {
  return narrow_cols<T>() + 16 / dsl::lane_bytes<T>();
}
/// Room past the staged rows for the members' skews (below): at most 7 skews of cin_g rounded up
/// to 16 bytes, with cin_g · G' ≤ 64.
inline constexpr std::uint32_t kNarrowSkewRoom = 128;

/// Whether the narrow body serves the shape: at most kNarrowChannels output channels a group,
/// cin_g a multiple of kNarrowCopy and one kernel row of taps within a chunk.
template <class T>
dsl::Expr<bool> narrow_groups(const Shape& s) {
  return s.cout_g() <= kNarrowChannels && s.cin_g() % kNarrowCopy == 0u &&
         s.kw * s.cin_g() <= narrow_cols<T>();
}

/// This group's set of convolution groups and pixels (see above) with the plain weight [c_out,
/// kh, kw, cin_g]: each output element inside out written as value(channel, sum) rounded to T
/// (channel counted across all groups). Only for shapes narrow_groups accepts.
template <class T, class Value>
void narrow_group_product(const dsl::Tensor<T>& x, const dsl::Tensor<T>& weight,
                          const dsl::Out<T>& out, const Shape& s, Value&& value) {
  using namespace iron::dsl;
  constexpr std::uint32_t kW = kNarrowCopy;
  constexpr std::uint32_t kPitch = narrow_pitch<T>();
  // Lanes a weight row's pieces take: a power of two at least the kW-element pieces of a chunk.
  constexpr std::uint32_t kPieceLanes = std::bit_ceil(narrow_cols<T>() / kW);
  auto piece = thread_id<0>() % kPieceLanes * kW;  // this lane's first column of a weight row
  auto cin_g = s.cin_g();
  auto cout_g = s.cout_g();
  auto k = s.kh * s.kw * cin_g;
  auto ow = s.ow();
  auto pixels = s.oh() * ow;
  auto m = s.batch * pixels;

  // The set: G' groups, P = 128 / G' pixels; sets fastest along the launch order.
  const auto fits = [&](std::uint32_t g) {
    return s.groups % g == 0u && cin_g * g <= kNarrowSetChannels;
  };
  Expr<u32> set_groups =
      select(fits(8), Expr<u32>(8u),
             select(fits(4), Expr<u32>(4u), select(fits(2), Expr<u32>(2u), Expr<u32>(1u))));
  auto set_pixels = kNarrowRows / set_groups;
  auto sets = s.groups / set_groups;
  auto launched = program_id<2>() * ((m + (kNarrowRows - 1u)) / kNarrowRows) + program_id<1>();
  auto set = launched % sets;
  auto block = launched / sets;
  auto first_group = set * set_groups;

  IRON_IF(block < (m + set_pixels - 1u) / set_pixels) {
    auto tile_a = shared<T>(kNarrowRows * kPitch + kNarrowSkewRoom);
    auto tile_b = shared<T>(kNarrowRows * kPitch);
    // Where staged row `row` (member row / P) starts: its member's skew past row · pitch.
    constexpr std::uint32_t kSkewUnit = 16 / lane_bytes<T>();
    auto skew = (cin_g + (kSkewUnit - 1u)) / kSkewUnit * kSkewUnit;
    const auto row_at = [&](const Expr<u32>& row) {
      return row * kPitch + row / set_pixels * skew;
    };

    // The copies: lanes of a pixel's row take its set's channels kW at a time (chunk j of J ≤
    // 16: a set holds at most 64 channels, or one group of at most 48), rows of lanes take its
    // pixels.
    auto chunks = set_groups * cin_g / kW;
    Expr<u32> lanes = select(chunks <= 1u, Expr<u32>(1u),
                             select(chunks <= 2u, Expr<u32>(2u),
                                    select(chunks <= 4u, Expr<u32>(4u),
                                           select(chunks <= 8u, Expr<u32>(8u), Expr<u32>(16u)))));
    auto j = thread_id<0>() % lanes;
    auto copies = j < chunks;
    auto member = j * kW / cin_g;               // the group of the set this lane copies for
    auto member_col = j * kW - member * cin_g;  // its first channel in the group
    auto channel = first_group * cin_g + j * kW;

    auto band = simdgroup_id() * (2u * kNarrowUnit);
    auto unit_group0 = band / set_pixels;
    auto unit_group1 = (band + kNarrowUnit) / set_pixels;
    FragAcc<kNarrowUnit, kNarrowChannels> acc0;
    FragAcc<kNarrowUnit, kNarrowChannels> acc1;
    FragA<T, kNarrowUnit, 16> fa;
    FragB<T, 16, kNarrowChannels> fb;

    // A chunk: kernel rows ky0 … ky0 + rows_a_chunk (cols columns, rounded up to 16).
    auto rows_a_chunk = narrow_cols<T>() / (s.kw * cin_g);
    for (auto ky0 : range(0u, s.kh, rows_a_chunk)) {
      auto ky_end = min(ky0 + rows_a_chunk, s.kh);
      auto cols = (ky_end - ky0) * s.kw * cin_g;
      auto cols_rounded = (cols + 15u) / 16u * 16u;

      // The set's weights: row u · 16 + n is channel n of group u, zeros past cout_g and cols.
      // kPieceLanes lanes a row, one piece each, so that no copy divides.
      IRON_IF(piece < cols_rounded) {
        for (auto row : range(thread_id<0>() / kPieceLanes, set_groups * kNarrowChannels,
                              gemm::kThreads / kPieceLanes)) {
          auto n = row % kNarrowChannels;
          auto valid = n < cout_g && piece < cols;
          auto from =
              ((first_group + row / kNarrowChannels) * cout_g + n) * k + ky0 * s.kw * cin_g + piece;
          copy_async<kW>(tile_b[row * kPitch + piece], weight[select(valid, from, Expr<u32>(0u))],
                         valid);
        }
      }
      // The rows: (member, pixel p) at row member · P + p; zeros in the padding and past m.
      IRON_IF(copies) {
        for (auto p : range(thread_id<0>() / lanes, set_pixels, kNarrowRows / lanes)) {
          auto r = block * set_pixels + p;
          auto b = r / pixels;
          auto pixel = r - b * pixels;
          auto oy = pixel / ow;
          auto y0 = oy * s.stride_h;
          auto x0 = (pixel - oy * ow) * s.stride_w;
          auto row_inside = r < m;
          auto to = row_at(member * set_pixels + p) + member_col;
          for (auto ky : range(ky0, ky_end)) {
            auto y = y0 + ky * s.dil_h;
            auto y_inside = row_inside && y >= s.pad_h && y < s.h + s.pad_h;
            auto image_row = b * s.h + max(y, s.pad_h) - s.pad_h;
            auto col = (ky - ky0) * s.kw * cin_g;
            for (auto kx : range(0u, s.kw)) {
              auto xx = x0 + kx * s.dil_w;
              auto inside = y_inside && xx >= s.pad_w && xx < s.w + s.pad_w;
              auto from = (image_row * s.w + max(xx, s.pad_w) - s.pad_w) * s.c_in + channel;
              copy_async<kW>(tile_a[to + col + kx * cin_g], x[select(inside, from, Expr<u32>(0u))],
                             inside);
            }
          }
        }
      }
      auto pad = (cols_rounded - cols) / kW;
      for (auto v : range(thread_id<0>(), kNarrowRows * pad, group_size<0>())) {
        auto row = v / pad;
        copy_async<kW>(tile_a[row_at(row) + cols + (v - row * pad) * kW], x[Expr<u32>(0u)],
                       Expr<bool>(false));
      }
      async_commit();
      async_wait(0);
      barrier();

      // Simdgroup s: rows 32·s … 32·s + 15 and the next 16, each by its group's weight.
      for (auto kk : range(0u, cols_rounded, 16u)) {
        fa.load(tile_a, row_at(band) + kk, kPitch);
        fb.load(tile_b, unit_group0 * (kNarrowChannels * kPitch) + kk, kPitch, col_major);
        mma(acc0, fa, fb);
        fa.load(tile_a, row_at(band + kNarrowUnit) + kk, kPitch);
        fb.load(tile_b, unit_group1 * (kNarrowChannels * kPitch) + kk, kPitch, col_major);
        mma(acc1, fa, fb);
      }
      barrier();
    }

    const auto finish = [&](const FragAcc<kNarrowUnit, kNarrowChannels>& acc,
                            const Expr<u32>& first_row, const Expr<u32>& member_of) {
      auto first_pixel = block * set_pixels + first_row - member_of * set_pixels;
      auto first_channel = (first_group + member_of) * cout_g;
      for (std::uint32_t slot = 0; slot < FragAcc<kNarrowUnit, kNarrowChannels>::elements; ++slot) {
        auto r = first_pixel + acc.row(slot);
        auto c = acc.col(slot);
        IRON_IF(r < m && c < cout_g) {
          store(out[r * s.c_out + first_channel + c],
                cast<T>(value(first_channel + c, acc.get(slot))));
        }
      }
    };
    finish(acc0, band, unit_group0);
    finish(acc1, band + kNarrowUnit, unit_group1);
  }
}

}  // namespace iron::kernels::convolution
