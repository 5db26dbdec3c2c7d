/// Convolutions of stride 1 on the warpgroup product: the implicit GEMM of a tile of BH × BW
/// output pixels of one image, each step of k one tap's 64 input channels, whose a operand is
/// that tap's box of input pixels: one image copy (dsl::copy_image_tile_async) from pixel
/// (oy0 + ky·dil − pad, ox0 + kx·dil − pad), the padding landing as zeros. On sm_90a the copy is
/// a four-dimensional TMA copy and the product wgmma, as iron_gemm_warpgroup_nk's; elsewhere the
/// threads' copies and fragment products. The knob `image` (the box's width in pixels, 0: off)
/// selects it at trace time; the dense forms' rule sets it for 16-bit launches of stride 1, one
/// group and c_in a multiple of 64 that are not plain 1×1s (bench/NOTES.md §64).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iron/iron.hpp>
#include <optional>
#include <string>

#include "../gemm/gemm_warpgroup.hpp"
#include "conv_shape.hpp"

namespace iron::kernels::convolution {

inline constexpr const char* kImageKnob = "image";  ///< the box's width in pixels; 0: off
/// Input channels a step of the image path: one 128-byte row of 16-bit elements.
inline constexpr std::uint32_t kImageStep = 64;
/// Output pixels a tile: the product's 128 rows.
inline constexpr std::uint32_t kImagePixels = gemm::warpgroup::kBM;

/// Whether this trace takes the image path: the knob on and T 16-bit.
template <class T>
bool image_path() {
  return dsl::lane_bytes<T>() == 2 && dsl::tuned(kImageKnob) != 0;
}

/// The box's width for an output of oh × ow pixels: 16 × 8 pixels (8 × 16 for rows of at most 8),
/// whose taps' halo over the box is the least of the widths (on the H100, 47.6 µs against 61.2
/// for boxes of 64 × 2 at ResNet's 56² × 64 3×3, and the best or within 1% at 28² and 14²,
/// bench/NOTES.md §64); a sequence (one row) one row of the narrowest power of two from 8 to
/// 128 that holds it.
inline std::uint32_t box_width_for(double oh, double ow) {
  if (oh > 1) return ow > 8 ? 16 : 8;
  std::uint32_t width = 8;
  while (width < kImagePixels && width < ow) width *= 2;
  return width;
}

/// The image path's a operand: the im2col rows of the tile of BH × BW output pixels of image
/// `img` from (oy0, ox0), a step (64 channels of one tap, c_in a multiple of 64) at a time. Its
/// rows are the tile's pixels in (y, x) order; those past the output's edges are computed and
/// never written (whole_rows, inside, at: gemm::warpgroup::product's a source).
template <class T, std::uint32_t BH, std::uint32_t BW>
struct PixelTileA {
  using Element = T;
  const dsl::Tensor<T>& x;
  const Shape& s;
  dsl::Expr<dsl::u32> img, oy0, ox0;

  /// The tap and first channel of the step at k offset p.
  struct Tap {
    dsl::Expr<dsl::u32> ky, kx, c;
  };
  Tap tap_of(const dsl::Expr<dsl::u32>& p) const {
    auto tap = p / s.c_in;
    auto ky = tap / s.kw;
    return {ky, tap - ky * s.kw, p - tap * s.c_in};
  }

  template <std::uint32_t BM, std::uint32_t STEP>
  void start(const dsl::Shared<T>& ring, const dsl::Expr<dsl::u32>& at,
             const dsl::Expr<dsl::u32>& p0) const {
    using namespace iron::dsl;
    if constexpr (BM != BH * BW) {  // traced only as 128 rows (image_shape)
      throw Error("the image path's tile is " + std::to_string(BH * BW) + " pixels, not " +
                  std::to_string(BM) + " rows");
    }
    const Tap t = tap_of(p0);
    auto y0 = cast<i32>(oy0 + t.ky * s.dil_h) - cast<i32>(s.pad_h);
    auto x0 = cast<i32>(ox0 + t.kx * s.dil_w) - cast<i32>(s.pad_w);
    copy_image_tile_async<BH, BW, STEP>(ring, at, x, {Expr<u32>(0u), s.batch, s.h, s.w, s.c_in},
                                        img, y0, x0, t.c);
  }

  /// The step element by element, each converted to the tile's R: zeros for taps in the padding
  /// and past k.
  template <std::uint32_t BM, std::uint32_t STEP, class R>
  void copy(const dsl::Shared<R>& tile, const dsl::Expr<dsl::u32>& p0) const {
    using namespace iron::dsl;
    auto k = s.kh * s.kw * s.c_in;
    for (auto v : range(thread_id<0>(), BM * STEP, group_size<0>())) {
      auto r = v / STEP;
      auto c = v % STEP;
      const Tap t = tap_of(p0 + c);
      // Padded coordinates: the input pixel is (y − pad_h, x − pad_w) when inside.
      auto y = oy0 + r / BW + t.ky * s.dil_h;
      auto x_at = ox0 + r % BW + t.kx * s.dil_w;
      IRON_IF(p0 + c < k && y >= s.pad_h && y < s.h + s.pad_h && x_at >= s.pad_w &&
              x_at < s.w + s.pad_w) {
        auto pixel = (img * s.h + y - s.pad_h) * s.w + x_at - s.pad_w;
        store(tile[v], cast<R>(load(x[pixel * s.c_in + t.c])));
      }
      IRON_ELSE { store(tile[v], 0.0f); }
    }
  }

  /// Whether the pipelined path's copies apply: whole 16-byte pieces of channels.
  dsl::Expr<bool> whole() const { return s.c_in % 8u == 0u; }
  /// Whether every pixel of the tile is an output pixel.
  template <std::uint32_t BM>
  dsl::Expr<bool> whole_rows() const {
    return oy0 + BH <= s.oh() && ox0 + BW <= s.ow();
  }
  /// Whether the tile's row r is an output pixel, and which row of out [pixels, c_out] it is.
  dsl::Expr<bool> inside(const dsl::Expr<dsl::u32>& r) const {
    return oy0 + r / BW < s.oh() && ox0 + r % BW < s.ow();
  }
  dsl::Expr<dsl::u32> at(const dsl::Expr<dsl::u32>& r) const {
    return (img * s.oh() + oy0 + r / BW) * s.ow() + ox0 + r % BW;
  }
};

/// The image path's tile shape: 128 pixels, the width, stage and residency knobs'
/// (iron_gemm_warpgroup_nk's `bn`, `stages` and `resident`), the rest gemm's defaults.
inline gemm::warpgroup::Shape image_shape() {
  gemm::warpgroup::Shape shape;
  shape.bn = dsl::tuned("bn");
  shape.stages = dsl::tuned("stages");
  shape.resident = dsl::tuned("resident");
  return shape;
}

/// The contract's expression of the tiles of pixels for box width `bw`: batch · ⌈oh / bh⌉ ·
/// ⌈ow / bw⌉ over the constexprs' names `oh` and `ow`.
inline std::string image_tiles(const std::string& oh, const std::string& ow, std::uint32_t bw) {
  return "batch * ceil_div(" + oh + ", " + std::to_string(kImagePixels / bw) + ") * ceil_div(" +
         ow + ", " + std::to_string(bw) + ")";
}

/// Declares the image path's dispatch, grid and contract: a group of 384 threads per tile of
/// 128 pixels × bn channels (`oh`, `ow`: the output's height and width as contract
/// expressions), `resident` of them a multiprocessor asked of the compiler, every launch of
/// stride 1 (`strides`), one group and c_in a multiple of 64.
inline void declare_image(const std::string& oh, const std::string& ow,
                          const dsl::Constexpr<dsl::u32>& c_in,
                          std::initializer_list<dsl::Constexpr<dsl::u32>> ones) {
  using namespace iron::dsl;
  const gemm::warpgroup::Shape shape = image_shape();
  dispatch(tiled, {exactly(gemm::warpgroup::threads_of(shape.bm))});
  if (shape.resident > 1) occupancy(shape.resident);
  grid("[ceil_div(c_out, " + std::to_string(shape.bn) + "), " +
       image_tiles(oh, ow, dsl::tuned(kImageKnob)) + ", 1]");
  for (const auto& c : ones) require_at_most(c, "1");
  require_multiple_of(c_in, kImageStep);
}

/// The image path's launch over outputs of oh × ow pixels, when the knob is on for this dtype.
inline std::optional<dsl::Geometry> image_geometry(const dsl::GeometryQuery& q, std::uint64_t oh,
                                                   std::uint64_t ow) {
  const bool half = q.dtype == DType::F16 || q.dtype == DType::BF16;
  const std::uint32_t bw = dsl::tuned(kImageKnob);
  if (!half || bw == 0) return std::nullopt;
  const std::uint32_t bh = kImagePixels / bw;
  const gemm::warpgroup::Shape shape = image_shape();
  const std::uint64_t tiles =
      q.constant("batch") * std::uint64_t{dsl::tile_count(oh, bh)} * dsl::tile_count(ow, bw);
  return dsl::Geometry{
      {dsl::tile_count(q.constant("c_out"), shape.bn), static_cast<std::uint32_t>(tiles), 1},
      {gemm::warpgroup::threads_of(shape.bm), 1, 1}};
}

/// out [pixels, c_out] ← value(channel, Σ x's im2col row · weight row) rounded to T for this
/// group's tile: program_id 0 its channels, 1 its image and tile of pixels (image_tiles' order).
template <class T, class Value>
void image_product(const dsl::Tensor<T>& x, const dsl::Tensor<T>& weight, const dsl::Out<T>& out,
                   const Shape& s, Value&& value) {
  using namespace iron::dsl;
  const std::uint32_t bw = dsl::tuned(kImageKnob);
  const gemm::warpgroup::Shape shape = image_shape();
  auto k = s.kh * s.kw * s.c_in;
  auto col0 = program_id<0>() * shape.bn;
  const auto run = [&]<std::uint32_t BW>() {
    constexpr std::uint32_t kBH = kImagePixels / BW;
    auto tiles_x = (s.ow() + (BW - 1u)) / BW;
    auto tiles_y = (s.oh() + (kBH - 1u)) / kBH;
    auto t = program_id<1>();
    auto per_image = tiles_x * tiles_y;
    auto in_image = t % per_image;
    const PixelTileA<T, kBH, BW> a{x, s, t / per_image, in_image / tiles_x * kBH,
                                   in_image % tiles_x * BW};
    gemm::warpgroup::tile_product_at(
        a, weight, Expr<u32>(kImagePixels), s.c_out, k, Expr<u32>(0u), col0,
        [&](const Expr<u32>& r, const Expr<u32>& c, const Expr<f32>& sum) {
          store(out[r * s.c_out + c], cast<T>(value(c, sum)));
        },
        shape);
  };
  switch (bw) {
    case 8:
      return run.template operator()<8>();
    case 16:
      return run.template operator()<16>();
    case 32:
      return run.template operator()<32>();
    case 64:
      return run.template operator()<64>();
    case 128:
      return run.template operator()<128>();
    default:
      throw Error("the image path's box is 8, 16, 32, 64 or 128 pixels wide, not " +
                  std::to_string(bw));
  }
}

}  // namespace iron::kernels::convolution
