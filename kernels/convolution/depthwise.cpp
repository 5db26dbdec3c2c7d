/// iron_conv2d_depthwise_k{3,5,7}: the depthwise conv2d (groups = c_in = c_out = c, one filter a
/// channel) of MobileNet, EfficientNet and ConvNeXt over NHWC images with a K × K kernel:
/// out[b, oy, ox, ch] = Σ_{ky, kx} x[b, oy·s − p + ky·d, ox·s − p + kx·d, ch] · weight[ch, ky, kx],
/// taps in the padding counting zero (stride s, padding p and dilation d on both axes).
///
/// ## Error bound
/// Per element, relative to Σ |x · w| over its taps: γ_(K²) (u = 2^-24) for the f32 sum of
/// exact products, then the rounding to T.
///
/// ## How it runs
/// On CUDA cores, memory-bound: each pass of a thread's grid-stride loop computes kOut = 4
/// consecutive outputs of one row for V channels (one 16-byte vector: 8 of f16/bf16, 4 of f32,
/// when c is a multiple of V; else one), so consecutive threads read consecutive vectors of a
/// pixel's channels. With stride and dilation 1 the four outputs share the kOut + K − 1 input
/// vectors of each kernel row (each loaded once, converted to f32 once); otherwise every tap of
/// every output loads its vector. The weights of a kernel row are read once for the four
/// outputs; the caches serve the neighbours' rereads, so memory sees x once and out once.
///
/// ## Layout
/// - `x [batch, h, w, c]` T; `weight [c, K, K]` T (PyTorch's [c, 1, K, K])
/// - `out [batch, oh, ow, c]` T, oh = (h + 2·padding − dilation·(K − 1) − 1) / stride + 1, ow
///   alike
///
/// ## Dispatch
/// Elementwise, grid-stride: groups of a multiple of 32 threads up to 256, any grid up to one
/// thread per item (batch · oh · ⌈ow / 4⌉ · c).
#include <array>
#include <iron/iron.hpp>
#include <string>
#include <vector>

namespace iron::kernels {
using namespace iron::dsl;

namespace depthwise {

inline constexpr u32 kOut = 4;  ///< consecutive outputs of a row per thread

/// The sizes the body reads.
struct Sizes {
  Expr<u32> batch, h, w, c, stride, pad, dil, oh, ow;
};

/// V channels' f32 values of x at (b, y − pad, xx − pad) for (y, xx) in padded coordinates, zero
/// in the padding.
template <u32 V, class T>
std::array<Expr<f32>, V> pixel(const Tensor<T>& x, const Sizes& s, const Expr<u32>& b,
                               const Expr<u32>& y, const Expr<u32>& xx, const Expr<u32>& ch) {
  auto inside = y >= s.pad && y < s.h + s.pad && xx >= s.pad && xx < s.w + s.pad;
  auto at = ((b * s.h + max(y, s.pad) - s.pad) * s.w + max(xx, s.pad) - s.pad) * s.c + ch;
  auto from = select(inside, at, Expr<u32>(0u));
  std::array<Expr<f32>, V> v;
  if constexpr (V == 1) {
    v[0] = select(inside, cast<f32>(load(x[from])), Expr<f32>(0.0f));
  } else {
    const auto lanes = load_lanes<V>(x[from]);
    for (u32 e = 0; e < V; ++e) v[e] = select(inside, cast<f32>(lanes[e]), Expr<f32>(0.0f));
  }
  return v;
}

/// The outputs of item i (a row's kOut outputs for channels ch … ch + V) in the grid-stride loop.
template <u32 K, u32 V, class T>
void outputs(const Tensor<T>& x, const Tensor<T>& weight, const Out<T>& out, const Sizes& s) {
  auto vectors = s.c / V;
  auto strips = (s.ow + (kOut - 1u)) / kOut;
  auto items = s.batch * s.oh * strips * vectors;
  for (auto i : range(global_id<0>(), items, grid_threads<0>())) {
    auto ch = i % vectors * V;
    auto rest = i / vectors;
    auto ox0 = rest % strips * kOut;
    auto row = rest / strips;  // b · oh + oy
    auto oy = row % s.oh;
    auto b = row / s.oh;
    // acc[o · V + e]: output o's sum for channel ch + e.
    std::vector<Var<f32>> acc;
    acc.reserve(kOut * V);
    for (u32 a = 0; a < kOut * V; ++a) acc.emplace_back(0.0f);
    for (u32 ky = 0; ky < K; ++ky) {
      auto y = oy * s.stride + ky * s.dil;
      // The kernel row's weights for the V channels, as f32.
      std::array<std::array<Expr<f32>, V>, K> wk;
      for (u32 kx = 0; kx < K; ++kx) {
        for (u32 e = 0; e < V; ++e) {
          wk[kx][e] = cast<f32>(load(weight[(ch + e) * (K * K) + ky * K + kx]));
        }
      }
      IRON_IF(s.stride == 1u && s.dil == 1u) {
        // Input column ox0 + j serves output o at tap kx = j − o.
        for (u32 j = 0; j < kOut + K - 1; ++j) {
          const auto v = pixel<V>(x, s, b, y, ox0 + j, ch);
          for (u32 o = 0; o < kOut && o <= j; ++o) {
            if (j - o < K) {
              for (u32 e = 0; e < V; ++e)
                acc[o * V + e] = fma(v[e], wk[j - o][e], acc[o * V + e].get());
            }
          }
        }
      }
      IRON_ELSE {
        for (u32 kx = 0; kx < K; ++kx) {
          for (u32 o = 0; o < kOut; ++o) {
            const auto v = pixel<V>(x, s, b, y, (ox0 + o) * s.stride + kx * s.dil, ch);
            for (u32 e = 0; e < V; ++e) acc[o * V + e] = fma(v[e], wk[kx][e], acc[o * V + e].get());
          }
        }
      }
    }
    for (u32 o = 0; o < kOut; ++o) {
      IRON_IF(ox0 + o < s.ow) {
        auto at = (row * s.ow + ox0 + o) * s.c + ch;
        if constexpr (V == 1) {
          store(out[at], cast<T>(acc[o * V].get()));
        } else {
          std::array<Expr<T>, V> values;
          for (u32 e = 0; e < V; ++e) values[e] = cast<T>(acc[o * V + e].get());
          store_lanes(out[at], values);
        }
      }
    }
  }
}

/// The contract's output height (and width) over the constexprs, for a K × K kernel.
inline std::string out_size(const char* size, u32 k) {
  return "((" + std::string(size) + " + 2 * padding - dilation * " + std::to_string(k - 1) +
         " - 1) / stride + 1)";
}

}  // namespace depthwise

IRON_KERNEL_TEMPLATE(iron_conv2d_depthwise, (u32 K),
                     (Tensor<T> x, Tensor<T> weight, Out<T> out, Constexpr<u32> batch,
                      Constexpr<u32> h, Constexpr<u32> w, Constexpr<u32> c, Constexpr<u32> stride,
                      Constexpr<u32> padding, Constexpr<u32> dilation)) {
  const std::string oh = depthwise::out_size("h", K);
  const std::string ow = depthwise::out_size("w", K);
  // At most 256 threads a group: the registers of 4 outputs × a vector of channels and of a
  // kernel row's weights fit without spilling.
  dispatch(elementwise, {multiple_of(32), at_most(256)});
  grid("[<= ceil_div(batch * " + oh + " * ceil_div(" + ow + ", " + std::to_string(depthwise::kOut) +
       ") * c, tpg), 1, 1]");
  layout(x, "[batch, h, w, c]");
  layout(weight, "[c, " + std::to_string(K) + ", " + std::to_string(K) + "]");
  layout(out, "[batch, " + oh + ", " + ow + ", c]");
  auto reach = dilation * (K - 1u) + 1u;
  const depthwise::Sizes s{batch,
                           h,
                           w,
                           c,
                           stride,
                           padding,
                           dilation,
                           (h + 2u * padding - reach) / stride + 1u,
                           (w + 2u * padding - reach) / stride + 1u};
  constexpr u32 kV = 16 / lane_bytes<T>();
  IRON_IF(c % kV == 0u) { depthwise::outputs<K, kV>(x, weight, out, s); }
  IRON_ELSE { depthwise::outputs<K, 1>(x, weight, out, s); }
}
IRON_KERNEL_VARIANT(iron_conv2d_depthwise, k3, 3);
IRON_KERNEL_VARIANT(iron_conv2d_depthwise, k5, 5);
IRON_KERNEL_VARIANT(iron_conv2d_depthwise, k7, 7);

namespace depthwise {
/// One thread per item (groups of 128: three or four a multiprocessor at the registers the body
/// takes): a row's kOut outputs for one 16-byte vector of channels (or one channel
/// when c is not a multiple of the vector).
inline Geometry geometry(const GeometryQuery& q, std::uint64_t k) {
  const auto span = [&](std::uint64_t size) {
    return (size + 2 * q.constant("padding") - q.constant("dilation") * (k - 1) - 1) /
               q.constant("stride") +
           1;
  };
  const std::uint64_t c = q.constant("c");
  const std::uint64_t lanes = 16 / dtype_size(q.dtype);
  const std::uint64_t vectors = c % lanes == 0 ? c / lanes : c;
  const std::uint64_t items = q.constant("batch") * span(q.constant("h")) *
                              ((span(q.constant("w")) + kOut - 1) / kOut) * vectors;
  return Geometry::elementwise(items, q.threads_per_group(128));
}
}  // namespace depthwise

IRON_GEOMETRY(iron_conv2d_depthwise_k3) { return depthwise::geometry(q, 3); }
IRON_GEOMETRY(iron_conv2d_depthwise_k5) { return depthwise::geometry(q, 5); }
IRON_GEOMETRY(iron_conv2d_depthwise_k7) { return depthwise::geometry(q, 7); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "conv_cases.hpp"

namespace iron::kernels {

namespace {

using convolution::Sizes;

/// A depthwise conv of c channels: a K × K kernel over a square image.
Sizes depthwise_sizes(std::size_t batch, std::size_t size, std::size_t c, std::size_t k,
                      std::size_t stride, std::size_t pad, std::size_t dil = 1) {
  return {batch, size, size, c, c, k, k, stride, stride, pad, pad, dil, dil, c};
}

std::string depthwise_name(std::size_t k) { return "iron_conv2d_depthwise_k" + std::to_string(k); }

template <class Setup>
void depthwise_constants(Setup& setup, const Sizes& s) {
  setup.constant("batch", static_cast<double>(s.batch))
      .constant("h", static_cast<double>(s.h))
      .constant("w", static_cast<double>(s.w))
      .constant("c", static_cast<double>(s.c_in))
      .constant("stride", static_cast<double>(s.stride_w))
      .constant("padding", static_cast<double>(s.pad_w))
      .constant("dilation", static_cast<double>(s.dil_w));
}

testing::TestSetup depthwise_setup(const Sizes& s, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const auto x = testing::round_through(rng.uniform(s.input(), -1.0f, 1.0f), dt);
  const auto weight = testing::round_through(rng.uniform(s.weights(), -1.0f, 1.0f), dt);
  const ProductExpected want = convolution::conv_oracle(x, weight, s);
  testing::TestSetup setup(depthwise_name(s.kw), dt);
  setup.input("x", x).input("weight", weight).output("out", s.output());
  depthwise_constants(setup, s);
  setup.expect("out", want.out)
      .tolerance(tol::stored(dt, tol::gamma(s.kh * s.kw) * want.s, tol::gamma(1)));
  return setup.grid(testing::geometry_grid(setup));
}

/// The bench: x read once and out written once (the weights are small), the same convolution
/// by cuDNN (torch's conv2d with groups = c on channels_last tensors).
bench::BenchSetup depthwise_bench(const Sizes& s, DType dt) {
  bench::BenchSetup setup(depthwise_name(s.kw), dt);
  setup.random("x", s.input()).random("weight", s.weights()).output("out", s.output());
  depthwise_constants(setup, s);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((s.input() + s.weights() + s.output()) * dtype_size(dt))
      .flops(2 * s.output() * s.kh * s.kw)
      .peer("conv2d", convolution::peer_dims(s));
}

}  // namespace

// Same-size 3×3 over 16 channels (whole vectors) with a partial last strip of outputs; stride
// 2; channels not a multiple of a vector (one a thread); dilation 2 with padding past the reach.
IRON_TEST(iron_conv2d_depthwise_k3, same_2x9x9x16, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(2, 9, 16, 3, 1, 1), dt, rng);
}
IRON_TEST(iron_conv2d_depthwise_k3, stride2_1x10x10x24, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(1, 10, 24, 3, 2, 1), dt, rng);
}
IRON_TEST(iron_conv2d_depthwise_k3, odd_channels_1x6x6x5, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(1, 6, 5, 3, 1, 1), dt, rng);
}
IRON_TEST(iron_conv2d_depthwise_k3, dilated_wide_padding_1x5x5x8, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(1, 5, 8, 3, 1, 4, 2), dt, rng);
}
IRON_TEST(iron_conv2d_depthwise_k5, same_1x11x11x16, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(1, 11, 16, 5, 1, 2), dt, rng);
}
IRON_TEST(iron_conv2d_depthwise_k5, stride2_1x9x9x8, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(1, 9, 8, 5, 2, 2), dt, rng);
}
IRON_TEST(iron_conv2d_depthwise_k7, same_1x10x10x16, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(1, 10, 16, 7, 1, 3), dt, rng);
}
// The kernel covering the whole image: one output.
IRON_TEST(iron_conv2d_depthwise_k7, one_pixel_1x7x7x12, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(1, 7, 12, 7, 1, 0), dt, rng);
}

// MobileNetV2's 112×112×96 3×3, EfficientNet's 56×56×144 5×5 and ConvNeXt's 56×56×96 7×7,
// batch 32.
IRON_BENCH(iron_conv2d_depthwise_k3, mobilenet_b32_112x112x96, BF16) {
  return depthwise_bench(depthwise_sizes(32, 112, 96, 3, 1, 1), dt);
}
IRON_BENCH(iron_conv2d_depthwise_k3, mobilenet_s2_b32_112x112x96, BF16) {
  return depthwise_bench(depthwise_sizes(32, 112, 96, 3, 2, 1), dt);
}
IRON_BENCH(iron_conv2d_depthwise_k5, efficientnet_b32_56x56x144, BF16) {
  return depthwise_bench(depthwise_sizes(32, 56, 144, 5, 1, 2), dt);
}
IRON_BENCH(iron_conv2d_depthwise_k7, convnext_b32_56x56x96, BF16) {
  return depthwise_bench(depthwise_sizes(32, 56, 96, 7, 1, 3), dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
