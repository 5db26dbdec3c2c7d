/// The a source of a convolution as implicit GEMM: the tiles of the im2col matrix
/// A[r, p] = x[b, oy·sh + ky·dh − ph, ox·sw + kx·dw − pw, g·cin_g + ci] (r = (b·oh + oy)·ow + ox
/// an output pixel, p = (ky·kw + kx)·cin_g + ci a tap of group g; zero where the tap falls in the
/// padding) gathered straight from the NHWC input into gemm::product_from's a stages, so the
/// matrix of kh·kw copies of the input is never stored.
///
/// The 16-byte path does no division per copy: a thread copies the same 8 columns of each of
/// its rows at every step, so the position of each of its rows in the image is worked out once
/// per tile (make_im2col_a), and the tap of its columns once per step. A 1×1 kernel of stride 1
/// without padding or groups reads x as the dense [pixels, c_in] matrix it then is.
#pragma once

#include <cstdint>
#include <iron/iron.hpp>
#include <utility>
#include <vector>

#include "../gemm/gemm_tiles.hpp"
#include "conv_shape.hpp"

namespace iron::kernels::convolution {

/// Where one of a thread's rows of the stage reads: its output pixel's first tap (y0, x0) in the
/// padded image, and the first image row of its image, b · h. A row outside the matrix has y0 at
/// the padded image's height, so that every tap of it is outside.
struct RowOrigin {
  dsl::Expr<dsl::u32> y0, x0, image_row;
};

/// Group `first_channel / cin_g`'s im2col matrix of the NHWC input `x` (m = batch · oh · ow rows,
/// k = kh · kw · cin_g columns), its 16-byte stages Cols columns wide. When c_in and cin_g are
/// multiples of 8, a 16-byte piece of a row (8 columns from a multiple of 8) is 8 consecutive
/// channels of one tap: one asynchronous copy, or zeros when the tap is in the padding.
/// Otherwise each element is gathered alone.
template <class T, std::uint32_t Cols>
struct Im2colA {
  using type = T;
  static constexpr std::uint32_t kW = 16 / dsl::lane_bytes<T>();       ///< elements per copy
  static constexpr std::uint32_t kPieces = Cols / kW;                  ///< copies across a row
  static constexpr std::uint32_t kRowStep = gemm::kThreads / kPieces;  ///< rows between copies
  static_assert(gemm::kThreads % kPieces == 0, "whole rows a pass of the group");

  const dsl::Tensor<T>& x;
  Shape shape;
  dsl::Expr<dsl::u32> first_channel;  ///< g · cin_g
  dsl::Expr<bool> dense;              ///< x is the [m, k] matrix itself (a plain 1×1)
  std::vector<RowOrigin> rows;        ///< the calling thread's rows of the stage, by copy

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
  /// start_tile_copy lays them out: copy j of thread t is row t / kPieces + j · kRowStep,
  /// columns (t % kPieces) · kW …, the row of rows[j] (row0 is the tile's, as make_im2col_a
  /// was given).
  template <std::uint32_t Rows, std::uint32_t StageCols>
  void start(const dsl::Shared<T>& tile, std::uint32_t pitch, const dsl::Expr<dsl::u32>& at_,
             const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& p0,
             const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& k) const {
    using namespace iron::dsl;
    static_assert(StageCols == Cols, "the stage width the rows were laid out for");
    static_assert(Rows == gemm::kBM && Rows * Cols % (kW * gemm::kThreads) == 0,
                  "whole copies per thread");
    // A launch's module holds one of the two (the gather being the usual case).
    IRON_IF(specialized(!dense)) {
      if (rows.empty()) {
        start_each<Rows>(tile, pitch, at_, row0, p0, m, k);
      } else {
        start_hoisted(tile, pitch, at_, p0, k);
      }
    }
    IRON_ELSE {
      gemm::start_tile_copy<T, Rows, Cols>(gemm::Matrix<T>{x, Expr<u32>(0u), m, k}, tile, pitch,
                                           at_, row0, p0);
    }
  }

  /// The 16-byte copies of a stage from the rows' origins: one division a step for the tap.
  void start_hoisted(const dsl::Shared<T>& tile, std::uint32_t pitch,
                     const dsl::Expr<dsl::u32>& at_, const dsl::Expr<dsl::u32>& p0,
                     const dsl::Expr<dsl::u32>& k) const {
    using namespace iron::dsl;
    const Shape& s = shape;
    auto c = thread_id<0>() % kPieces * kW;
    auto p = p0 + c;
    // The tap of this thread's columns: (ky, kx) and channel ci.
    auto tap = p / s.cin_g();
    auto ci = p - tap * s.cin_g();
    auto ky = tap / s.kw;
    auto dy = ky * s.dil_h;
    auto dx = (tap - ky * s.kw) * s.dil_w;
    auto channel = first_channel + ci;
    auto in_k = p < k;
    auto y_end = s.h + s.pad_h;
    auto x_end = s.w + s.pad_w;
    auto first = thread_id<0>() / kPieces * pitch + c;
    for (std::uint32_t j = 0; j < rows.size(); ++j) {
      const RowOrigin& o = rows[j];
      auto y = o.y0 + dy;
      auto xx = o.x0 + dx;
      auto inside = in_k && y >= s.pad_h && y < y_end && xx >= s.pad_w && xx < x_end;
      auto iy = max(y, s.pad_h) - s.pad_h;
      auto ix = max(xx, s.pad_w) - s.pad_w;
      auto from = ((o.image_row + iy) * s.w + ix) * s.c_in + channel;
      copy_async<kW>(tile[at_ + first + j * kRowStep * pitch],
                     x[select(inside, from, Expr<u32>(0u))], inside);
    }
  }

  /// The 16-byte copies of a stage, each placed in the image on its own (f32's path: its
  /// software fragment product leaves no registers to keep the rows' origins in).
  template <std::uint32_t Rows>
  void start_each(const dsl::Shared<T>& tile, std::uint32_t pitch, const dsl::Expr<dsl::u32>& at_,
                  const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& p0,
                  const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& k) const {
    using namespace iron::dsl;
    for (std::uint32_t j = 0; j < Rows * Cols / kW / gemm::kThreads; ++j) {
      auto v = thread_id<0>() + j * gemm::kThreads;
      auto r = v / kPieces;
      auto c = v % kPieces * kW;
      const auto [inside, from] = at(row0 + r, p0 + c, m, k);
      copy_async<kW>(tile[at_ + r * pitch + c], x[select(inside, from, Expr<u32>(0u))], inside);
    }
  }

  /// The element-by-element stage (rows row0…, columns p0…): any channel count.
  void copy(const dsl::Shared<T>& tile, std::uint32_t pitch, const dsl::Expr<dsl::u32>& row0,
            const dsl::Expr<dsl::u32>& p0, std::uint32_t rows_, std::uint32_t cols,
            const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& k) const {
    using namespace iron::dsl;
    for (auto v : range(thread_id<0>(), rows_ * cols, group_size<0>())) {
      auto r = v / cols;
      auto c = v % cols;
      const auto [inside, from] = at(row0 + r, p0 + c, m, k);
      IRON_IF(inside) { store(tile[r * pitch + c], load(x[from])); }
      IRON_ELSE { store(tile[r * pitch + c], 0.0f); }
    }
  }
};

/// The a source of group `first_channel / cin_g` for the tile of rows row0… (m rows in all):
/// for 16-bit T, each of the calling thread's rows of a 16-byte stage placed in the image once,
/// here.
template <class T, std::uint32_t Cols>
Im2colA<T, Cols> make_im2col_a(const dsl::Tensor<T>& x, const Shape& s,
                               const dsl::Expr<dsl::u32>& first_channel,
                               const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& m) {
  using namespace iron::dsl;
  using A = Im2colA<T, Cols>;
  constexpr std::uint32_t kCopies = gemm::kBM * Cols / A::kW / gemm::kThreads;
  auto dense = s.kh == 1u && s.kw == 1u && s.stride_h == 1u && s.stride_w == 1u && s.pad_h == 0u &&
               s.pad_w == 0u && s.groups == 1u;
  A a{x, s, first_channel, dense, {}};
  if constexpr (dsl::lane_bytes<T>() != 2) return a;
  auto ow = s.ow();
  auto pixels = s.oh() * ow;
  auto first = row0 + thread_id<0>() / A::kPieces;
  for (std::uint32_t j = 0; j < kCopies; ++j) {
    auto r = first + j * A::kRowStep;
    auto b = r / pixels;
    auto pixel = r - b * pixels;
    auto oy = pixel / ow;
    auto inside = r < m;
    a.rows.push_back({select(inside, oy * s.stride_h, s.h + s.pad_h),
                      select(inside, (pixel - oy * ow) * s.stride_w, Expr<u32>(0u)),
                      select(inside, b * s.h, Expr<u32>(0u))});
  }
  return a;
}

}  // namespace iron::kernels::convolution
