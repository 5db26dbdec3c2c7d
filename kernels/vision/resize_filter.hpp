/// The weights of one axis of PyTorch's image resize (torch.nn.functional.interpolate with
/// align_corners=False), as DSL values: for an output coordinate, the input indices
/// [first, last] whose weight may be nonzero and the weight of each. Weights are not normalized;
/// the resize divides by their sum (which is 1 in exact arithmetic without antialias).
///
/// - Without antialias, the source coordinate is (o + 0.5) · in / out − 0.5; bilinear clamps it
///   at 0 and takes its two neighbours (the upper one clamped to in − 1), bicubic takes the four
///   around floor(src) with Keys' kernel at a = −0.75, each index clamped to [0, in − 1], so an
///   edge pixel is counted once per tap that lands on it.
/// - With antialias, the filter (the triangle, or Keys' kernel at a = −0.5 as PIL and PyTorch
///   use) is stretched by the downscale factor s = in / out when s > 1: center (o + 0.5) · s,
///   support (taps / 2) · max(s, 1), and input i in [trunc(center − support + 0.5),
///   trunc(center + support + 0.5)) ∩ [0, in) weighs filter((i − center + 0.5) / max(s, 1)).
#pragma once

#include <array>
#include <cstddef>
#include <iron/iron.hpp>

namespace iron::kernels::vision {
using namespace iron::dsl;

enum class ResizeFilter { Bilinear, Bicubic };
enum class Antialias { Off, On };

/// Keys' cubic convolution kernel at |x| (a the sharpness): 1 at 0, 0 at the other integers.
inline Expr<f32> keys_cubic(const Expr<f32>& x, float a) {
  auto d = abs(x);
  auto near = ((a + 2.0f) * d - (a + 3.0f)) * d * d + 1.0f;
  auto far = ((a * d - 5.0f * a) * d + 8.0f * a) * d - 4.0f * a;
  return select(d < 1.0f, near, select(d < 2.0f, far, Expr<f32>(0.0f)));
}

/// The triangle: 1 − |x| on (−1, 1), 0 outside.
inline Expr<f32> triangle(const Expr<f32>& x) { return max(1.0f - abs(x), 0.0f); }

/// One output coordinate's taps along an axis of `in` inputs resized to `out`.
template <ResizeFilter F, Antialias AA>
struct AxisTaps {
  Expr<u32> first;  ///< the lowest input index with a weight
  Expr<u32> last;   ///< the highest, inclusive
  Expr<f32> pos;    ///< antialias: the center; otherwise floor(src) (bicubic) or src (bilinear)
  Expr<f32> frac;   ///< without antialias: src − floor(src)
  Expr<f32> inv;    ///< antialias: 1 / max(s, 1)
  std::array<Expr<u32>, 4> index;  ///< bicubic without antialias: the taps' clamped indices
  std::array<Expr<f32>, 4> coef;   ///< and their weights

  AxisTaps(const Expr<u32>& o, const Expr<u32>& in, const Expr<u32>& out) {
    const auto scale = cast<f32>(in) / cast<f32>(out);
    if constexpr (AA == Antialias::On) {
      constexpr float kHalfTaps = F == ResizeFilter::Bilinear ? 1.0f : 2.0f;
      const auto stretch = max(scale, 1.0f);
      const auto support = kHalfTaps * stretch;
      pos = scale * (cast<f32>(o) + 0.5f);
      inv = 1.0f / stretch;
      first = cast<u32>(max(pos - support + 0.5f, 0.0f));
      last = min(cast<u32>(pos + support + 0.5f), in) - 1u;
    } else if constexpr (F == ResizeFilter::Bilinear) {
      pos = max(scale * (cast<f32>(o) + 0.5f) - 0.5f, 0.0f);
      first = cast<u32>(pos);
      frac = pos - cast<f32>(first);
      last = min(first + 1u, in - 1u);
    } else {
      // Tap k sits at floor(src) − 1 + k, at distance frac + 1 − k from src.
      const auto src = scale * (cast<f32>(o) + 0.5f) - 0.5f;
      pos = floor(src);
      frac = src - pos;
      for (int k = 0; k < 4; ++k) {
        auto at = cast<i32>(pos) + (k - 1);
        index[k] = cast<u32>(min(max(at, 0), cast<i32>(in) - 1));
        coef[k] = keys_cubic(frac + static_cast<float>(1 - k), -0.75f);
      }
      first = index[0];
      last = index[3];
    }
  }

  /// The weight of input index i (0 outside [first, last]).
  Expr<f32> weight(const Expr<u32>& i) const {
    if constexpr (AA == Antialias::On) {
      auto x = (cast<f32>(i) - pos + 0.5f) * inv;
      auto w = F == ResizeFilter::Bilinear ? triangle(x) : keys_cubic(x, -0.5f);
      return select(i >= first && i <= last, w, Expr<f32>(0.0f));
    } else if constexpr (F == ResizeFilter::Bilinear) {
      auto low = select(i == first, 1.0f - frac, Expr<f32>(0.0f));
      return low + select(i == last, frac, Expr<f32>(0.0f));
    } else {
      Expr<f32> w(0.0f);
      for (std::size_t k = 0; k < 4; ++k) w = w + select(i == index[k], coef[k], Expr<f32>(0.0f));
      return w;
    }
  }
};

}  // namespace iron::kernels::vision
