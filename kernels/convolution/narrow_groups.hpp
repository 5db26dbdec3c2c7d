/// The product of a convolution whose groups are narrow (ResNeXt's 4–16 channels a group): a
/// group's whole im2col tile and weight staged once, then one short run of tensor-core products.
///
/// gemm's 128 × 128 tiles leave all but cout_g of their 128 columns idle here and pad k = kh · kw
/// · cin_g (72 for ResNeXt's 3×3 over 8 channels) to whole 64-column steps, so a tile does 16 to
/// 32 times the products it needs and pays a pipeline's fill for one or two steps. This body keeps
/// the same grid (a group per 128 pixels of one convolution group) and does only the products
/// of the group: its A (128 pixels × k, k rounded up to 16, zeros past k) and its weight (16
/// channels × k, zeros past cout_g) land in shared memory through 4-element asynchronous
/// copies, one gathering pass, then each simdgroup multiplies its 32 pixels by the 16 channels
/// along k.
#pragma once

#include <cstdint>
#include <iron/iron.hpp>

#include "../gemm/gemm_tiles.hpp"
#include "conv_shape.hpp"

namespace iron::kernels::convolution {

inline constexpr std::uint32_t kNarrowChannels = 16;  ///< most output channels a group
inline constexpr std::uint32_t kNarrowMaxK = 144;     ///< most kh · kw · cin_g (3×3 over 16)
inline constexpr std::uint32_t kNarrowCopy = 4;       ///< elements a copy (cin_g a multiple)
/// The staged rows' pitch: k's room and 16 bytes more, so a fragment load's eight rows fall
/// in different banks.
inline constexpr std::uint32_t kNarrowPitch = kNarrowMaxK + 8;
inline constexpr std::uint32_t kNarrowRowsASimdgroup = gemm::kBM / (gemm::kThreads / 32);

/// Whether the narrow body serves the shape: at most kNarrowChannels output channels a group,
/// cin_g a multiple of kNarrowCopy and k within the staged rows.
inline dsl::Expr<bool> narrow_groups(const Shape& s) {
  return s.cout_g() <= kNarrowChannels && s.cin_g() % kNarrowCopy == 0u &&
         s.kh * s.kw * s.cin_g() <= kNarrowMaxK;
}

/// This group's 128 pixels (program_id<1>) of convolution group g = program_id<2>() with the
/// plain weight [c_out, kh, kw, cin_g]: each output element inside out written as value(channel,
/// sum) rounded to T (channel counted across all groups). Only for shapes narrow_groups accepts.
template <class T, class Value>
void narrow_group_product(const dsl::Tensor<T>& x, const dsl::Tensor<T>& weight,
                          const dsl::Out<T>& out, const Shape& s, Value&& value) {
  using namespace iron::dsl;
  constexpr std::uint32_t kW = kNarrowCopy;
  auto g = program_id<2>();
  auto cin_g = s.cin_g();
  auto cout_g = s.cout_g();
  auto k = s.kh * s.kw * cin_g;
  auto k_rounded = (k + 15u) / 16u * 16u;
  auto ow = s.ow();
  auto pixels = s.oh() * ow;
  auto m = s.batch * pixels;
  auto row0 = program_id<1>() * gemm::kBM;

  auto tile_a = shared<T>(gemm::kBM * kNarrowPitch);
  auto tile_b = shared<T>(kNarrowChannels * kNarrowPitch);

  // The weight: row n of the group's [cout_g, k] rows at tile_b[n · pitch], zeros past both.
  auto pieces = k_rounded / kW;
  for (auto v : range(thread_id<0>(), kNarrowChannels * pieces, group_size<0>())) {
    auto n = v / pieces;
    auto p = v % pieces * kW;
    auto valid = n < cout_g && p < k;
    auto from = (g * cout_g + n) * k + p;
    copy_async<kW>(tile_b[n * kNarrowPitch + p], weight[select(valid, from, Expr<u32>(0u))], valid);
  }

  // A: thread t gathers pixel row0 + t, tap by tap, kW channels a copy; zeros in the padding,
  // past the last pixel and past k.
  auto r = row0 + thread_id<0>();
  auto b = r / pixels;
  auto pixel = r - b * pixels;
  auto oy = pixel / ow;
  auto y0 = oy * s.stride_h;
  auto x0 = (pixel - oy * ow) * s.stride_w;
  auto row_inside = r < m;
  auto first_channel = g * cin_g;
  auto row_at = thread_id<0>() * kNarrowPitch;
  for (auto ky : range(0u, s.kh)) {
    auto y = y0 + ky * s.dil_h;
    auto y_inside = row_inside && y >= s.pad_h && y < s.h + s.pad_h;
    auto image_row = b * s.h + max(y, s.pad_h) - s.pad_h;
    for (auto kx : range(0u, s.kw)) {
      auto xx = x0 + kx * s.dil_w;
      auto inside = y_inside && xx >= s.pad_w && xx < s.w + s.pad_w;
      auto from = (image_row * s.w + max(xx, s.pad_w) - s.pad_w) * s.c_in + first_channel;
      auto col = (ky * s.kw + kx) * cin_g;
      for (auto c : range(0u, cin_g, kW)) {
        copy_async<kW>(tile_a[row_at + col + c], x[select(inside, from + c, Expr<u32>(0u))],
                       inside);
      }
    }
  }
  for (auto p : range(k, k_rounded, kW)) {
    copy_async<kW>(tile_a[row_at + p], x[Expr<u32>(0u)], Expr<bool>(false));
  }
  async_commit();
  async_wait(0);
  barrier();

  // Simdgroup s: pixels row0 + 32·s … times the group's 16 channels.
  auto band = simdgroup_id() * kNarrowRowsASimdgroup;
  FragAcc<kNarrowRowsASimdgroup, kNarrowChannels> acc;
  FragA<T, kNarrowRowsASimdgroup, 16> fa;
  FragB<T, 16, kNarrowChannels> fb;
  for (auto kk : range(0u, k_rounded, 16u)) {
    fa.load(tile_a, band * kNarrowPitch + kk, kNarrowPitch);
    fb.load(tile_b, kk, kNarrowPitch, col_major);
    mma(acc, fa, fb);
  }
  auto first = g * cout_g;
  for (std::uint32_t slot = 0; slot < FragAcc<kNarrowRowsASimdgroup, kNarrowChannels>::elements;
       ++slot) {
    auto row = row0 + band + acc.row(slot);
    auto c = acc.col(slot);
    IRON_IF(row < m && c < cout_g) {
      store(out[row * s.c_out + first + c], cast<T>(value(first + c, acc.get(slot))));
    }
  }
}

}  // namespace iron::kernels::convolution
