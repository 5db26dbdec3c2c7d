/// The convolution family's test oracle, from the definition in double (test code only): loops
/// over the output pixels, channels and the kernel's taps, the taps in the padding left out.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../gemm/gemm_oracle.hpp"

namespace iron::kernels::convolution {

/// A convolution's sizes on the host (conv1d: h = kh = 1 and the height's stride and dilation 1,
/// padding 0).
struct Sizes {
  std::size_t batch = 1, h = 1, w = 1, c_in = 1, c_out = 1, kh = 1, kw = 1;
  std::size_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;

  std::size_t oh() const { return (h + 2 * pad_h - dil_h * (kh - 1) - 1) / stride_h + 1; }
  std::size_t ow() const { return (w + 2 * pad_w - dil_w * (kw - 1) - 1) / stride_w + 1; }
  std::size_t cin_g() const { return c_in / groups; }
  std::size_t cout_g() const { return c_out / groups; }
  std::size_t taps() const { return kh * kw * cin_g(); }  ///< a weight row: [kh, kw, cin_g]
  std::size_t input() const { return batch * h * w * c_in; }
  std::size_t output() const { return batch * oh() * ow() * c_out; }
  std::size_t weights() const { return c_out * taps(); }
};

/// The definition in double: out[b, oy, ox, co] = Σ_{ky, kx, ci} x[b, iy, ix, g · cin_g + ci] ·
/// w(co, (ky · kw + kx) · cin_g + ci), iy = oy · sh − ph + ky · dh and ix alike, over the taps
/// inside the image; g = co / cout_g. With the error bound's scales: the largest S = Σ |x · w| of
/// an output and the largest X = Σ |x| over one output's taps.
template <class Weight>
ProductExpected conv_oracle(const std::vector<float>& x, const Sizes& s, Weight&& w) {
  ProductExpected e;
  e.out.resize(s.output());
  const auto inside = [](std::size_t at, std::size_t pad, std::size_t size) {
    return at >= pad && at - pad < size;
  };
  std::size_t i = 0;
  for (std::size_t b = 0; b < s.batch; ++b) {
    for (std::size_t oy = 0; oy < s.oh(); ++oy) {
      for (std::size_t ox = 0; ox < s.ow(); ++ox) {
        for (std::size_t co = 0; co < s.c_out; ++co, ++i) {
          const std::size_t g = co / s.cout_g();
          double sum = 0.0;
          double magnitude = 0.0;
          double inputs = 0.0;
          for (std::size_t ky = 0; ky < s.kh; ++ky) {
            const std::size_t y = oy * s.stride_h + ky * s.dil_h;  // in the padded image
            if (!inside(y, s.pad_h, s.h)) continue;
            for (std::size_t kx = 0; kx < s.kw; ++kx) {
              const std::size_t xx = ox * s.stride_w + kx * s.dil_w;
              if (!inside(xx, s.pad_w, s.w)) continue;
              for (std::size_t ci = 0; ci < s.cin_g(); ++ci) {
                const double v =
                    x[((b * s.h + y - s.pad_h) * s.w + xx - s.pad_w) * s.c_in + g * s.cin_g() + ci];
                const double product = v * w(co, (ky * s.kw + kx) * s.cin_g() + ci);
                sum += product;
                magnitude += std::fabs(product);
                inputs += std::fabs(v);
              }
            }
          }
          e.out[i] = static_cast<float>(sum);
          e.s = std::max(e.s, magnitude);
          e.x = std::max(e.x, inputs);
        }
      }
    }
  }
  return e;
}

/// conv_oracle for a plain weight [c_out, kh, kw, cin_g].
inline ProductExpected conv_oracle(const std::vector<float>& x, const std::vector<float>& weight,
                                   const Sizes& s) {
  const std::size_t taps = s.taps();
  return conv_oracle(x, s, [&](std::size_t co, std::size_t p) {
    return static_cast<double>(weight[co * taps + p]);
  });
}

}  // namespace iron::kernels::convolution
