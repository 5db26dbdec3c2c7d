/// The a source of a convolution as implicit GEMM: the tiles of the im2col matrix
/// A[r, p] = x[b, oy·sh + ky·dh − ph, ox·sw + kx·dw − pw, g·cin_g + ci] (r = (b·oh + oy)·ow + ox
/// an output pixel, p = (ky·kw + kx)·cin_g + ci a tap of group g; zero where the tap falls in the
/// padding) gathered straight from the NHWC input into gemm::product_from's a stages, so the
/// matrix of kh·kw copies of the input is never stored.
#pragma once

#include <iron/iron.hpp>
#include <utility>

#include "../gemm/gemm_tiles.hpp"
#include "conv_shape.hpp"

namespace iron::kernels::convolution {

/// Group `first_channel / cin_g`'s im2col matrix of the NHWC input `x` (m = batch · oh · ow rows,
/// k = kh · kw · cin_g columns). When c_in and cin_g are multiples of 8, a 16-byte piece of a row
/// (8 columns from a multiple of 8) is 8 consecutive channels of one tap: one asynchronous copy,
/// or zeros when the tap is in the padding. Otherwise each element is gathered alone.
template <class T>
struct Im2colA {
  using type = T;
  const dsl::Tensor<T>& x;
  Shape shape;
  dsl::Expr<dsl::u32> first_channel;  ///< g · cin_g

  dsl::Expr<bool> async_ok(const dsl::Expr<dsl::u32>& /*m*/,
                           const dsl::Expr<dsl::u32>& /*k*/) const {
    return shape.c_in % gemm::kChunk == 0u && shape.cin_g() % gemm::kChunk == 0u;
  }

  /// Whether A[r, p] lies in the matrix and in the image, and where it is in x when it does.
  std::pair<dsl::Expr<bool>, dsl::Expr<dsl::u32>> at(const dsl::Expr<dsl::u32>& r,
                                                     const dsl::Expr<dsl::u32>& p,
                                                     const dsl::Expr<dsl::u32>& m,
                                                     const dsl::Expr<dsl::u32>& k) const {
    using namespace iron::dsl;
    const Shape& s = shape;
    auto ow = s.ow();
    auto pixels = s.oh() * ow;
    auto b = r / pixels;
    auto pixel = r % pixels;
    auto cin_g = s.cin_g();
    auto tap = p / cin_g;
    // The tap's row and column in the padded image (never negative).
    auto y = pixel / ow * s.stride_h + tap / s.kw * s.dil_h;
    auto xx = pixel % ow * s.stride_w + tap % s.kw * s.dil_w;
    auto inside =
        r < m && p < k && y >= s.pad_h && y < s.h + s.pad_h && xx >= s.pad_w && xx < s.w + s.pad_w;
    auto iy = max(y, s.pad_h) - s.pad_h;
    auto ix = max(xx, s.pad_w) - s.pad_w;
    return {inside, ((b * s.h + iy) * s.w + ix) * s.c_in + first_channel + p % cin_g};
  }

  /// 16-byte copies of the Rows × Cols stage (rows row0…, columns p0…), as gemm's
  /// start_tile_copy lays them out.
  template <std::uint32_t Rows, std::uint32_t Cols>
  void start(const dsl::Shared<T>& tile, std::uint32_t pitch, const dsl::Expr<dsl::u32>& at_,
             const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& p0,
             const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& k) const {
    using namespace iron::dsl;
    constexpr std::uint32_t kW = 16 / lane_bytes<T>();  // elements per copy
    constexpr std::uint32_t kCopies = Rows * Cols / kW / gemm::kThreads;
    static_assert(Rows * Cols % (kW * gemm::kThreads) == 0, "whole copies per thread");
    for (std::uint32_t j = 0; j < kCopies; ++j) {
      auto v = thread_id<0>() + j * gemm::kThreads;
      auto r = v / (Cols / kW);
      auto c = v % (Cols / kW) * kW;
      const auto [inside, from] = at(row0 + r, p0 + c, m, k);
      copy_async<kW>(tile[at_ + r * pitch + c], x[select(inside, from, Expr<u32>(0u))], inside);
    }
  }

  /// The element-by-element stage (rows row0…, columns p0…): any channel count.
  void copy(const dsl::Shared<T>& tile, std::uint32_t pitch, const dsl::Expr<dsl::u32>& row0,
            const dsl::Expr<dsl::u32>& p0, std::uint32_t rows, std::uint32_t cols,
            const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& k) const {
    using namespace iron::dsl;
    for (auto v : range(thread_id<0>(), rows * cols, group_size<0>())) {
      auto r = v / cols;
      auto c = v % cols;
      const auto [inside, from] = at(row0 + r, p0 + c, m, k);
      IRON_IF(inside) { store(tile[r * pitch + c], load(x[from])); }
      IRON_ELSE { store(tile[r * pitch + c], 0.0f); }
    }
  }
};

}  // namespace iron::kernels::convolution
