/// iron_conv2d_fused_bias[_relu|_silu]: out[b, oy, ox, co] = act(conv2d(x, weight)[b, oy, ox, co] +
/// bias[co]) (act the identity, max(·, 0) or silu, kernels/primitives/activation.hpp): a conv
/// layer with its bias and activation, as ResNet (ReLU) and EfficientNet (SiLU) follow each
/// convolution (with batch norm folded into the weight and bias). The product is iron_conv2d's
/// (kernels/convolution/conv2d.cpp), and the epilogue works on its f32 sums before the one
/// rounding to T, so the bias and activation cost no pass over out.
///
/// ## Error bound
/// iron_conv2d's for the sum (γ_k · S, S = Σ |x · w| over the taps), then one rounding each for
/// the bias add (relative to |sum| + |bias|) and silu's own bound (a few units of f32 rounding;
/// silu's slope is at most 1.1), then the rounding to T.
///
/// ## Layout
/// iron_conv2d's, and `bias [c_out]` T.
///
/// ## Dispatch
/// iron_conv2d's, under its knob `pointwise` too.
#include <cstdint>
#include <iron/iron.hpp>
#include <string>

#include "../primitives/activation.hpp"
#include "conv_shape.hpp"
#include "conv_tiles.hpp"
#include "dense_rules.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace convolution {

/// The activation after the bias.
enum class Activation : std::uint8_t { Identity, Relu, Silu };

template <class T, Activation ACT>
Expr<f32> activate(const Expr<f32>& v) {
  if constexpr (ACT == Activation::Relu) {
    return max(v, Expr<f32>(0.0f));
  } else if constexpr (ACT == Activation::Silu) {
    return silu<T>(v);
  } else {
    return v;
  }
}

}  // namespace convolution

IRON_KERNEL_TEMPLATE(iron_conv2d_fused, (convolution::Activation ACT),
                     (Tensor<T> x, Tensor<T> weight, Tensor<T> bias, Out<T> out,
                      Constexpr<u32> batch, Constexpr<u32> h, Constexpr<u32> w, Constexpr<u32> c_in,
                      Constexpr<u32> c_out, Constexpr<u32> kh, Constexpr<u32> kw,
                      Constexpr<u32> stride_h, Constexpr<u32> stride_w, Constexpr<u32> pad_h,
                      Constexpr<u32> pad_w, Constexpr<u32> dil_h, Constexpr<u32> dil_w,
                      Constexpr<u32> group_count)) {
  const std::string oh = convolution::kOutHeight;
  const std::string ow = convolution::kOutWidth;
  convolution::declare_dense_conv2d<T>(c_in, kh, kw, stride_h, stride_w, pad_h, pad_w, group_count);
  layout(x, "[batch, h, w, c_in]");
  layout(weight, "[c_out, kh, kw, c_in / group_count]");
  layout(bias, "[c_out]");
  layout(out, "[batch, " + oh + ", " + ow + ", c_out]");
  const convolution::Shape s{batch,    h,        w,     c_in,  c_out, kh,    kw,
                             stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, group_count};
  convolution::dense_product(x, weight, out, s, [&](const Expr<u32>& c, const Expr<f32>& sum) {
    return convolution::activate<T, ACT>(sum + cast<f32>(load(bias[c])));
  });
}
IRON_KERNEL_VARIANT(iron_conv2d_fused, bias, convolution::Activation::Identity);
IRON_KERNEL_VARIANT(iron_conv2d_fused, bias_relu, convolution::Activation::Relu);
IRON_KERNEL_VARIANT(iron_conv2d_fused, bias_silu, convolution::Activation::Silu);

IRON_GEOMETRY(iron_conv2d_fused_bias) { return convolution::dense_conv2d_geometry(q); }
IRON_GEOMETRY(iron_conv2d_fused_bias_relu) { return convolution::dense_conv2d_geometry(q); }
IRON_GEOMETRY(iron_conv2d_fused_bias_silu) { return convolution::dense_conv2d_geometry(q); }
IRON_TUNING(iron_conv2d_fused_bias) {
  return convolution::dense_tuning(&convolution::prefer_dense_2d);
}
IRON_TUNING(iron_conv2d_fused_bias_relu) {
  return convolution::dense_tuning(&convolution::prefer_dense_2d);
}
IRON_TUNING(iron_conv2d_fused_bias_silu) {
  return convolution::dense_tuning(&convolution::prefer_dense_2d);
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <algorithm>
#include <cmath>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <vector>

#include "conv_cases.hpp"

namespace iron::kernels {

namespace {

using convolution::Sizes;
using convolution::square;

/// act(conv + bias) in double; the bound: the sum's γ_k · S, the bias add's rounding of
/// |sum| + |bias|, silu's few f32 roundings, each through a slope of at most 1.1.
testing::TestSetup fused_setup(const std::string& act, const Sizes& s, DType dt, testing::Rng& rng,
                               const dsl::TuningConfig& config = {}) {
  namespace tol = testing::tolerance;
  const auto x = testing::round_through(rng.uniform(s.input(), -1.0f, 1.0f), dt);
  const auto weight = testing::round_through(rng.uniform(s.weights(), -1.0f, 1.0f), dt);
  const auto bias = testing::round_through(rng.uniform(s.c_out, -2.0f, 2.0f), dt);
  const ProductExpected sums = convolution::conv_oracle(x, weight, s);
  std::vector<float> want(sums.out.size());
  double largest = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double v = double{sums.out[i]} + bias[i % s.c_out];
    largest = std::max(largest, std::fabs(v));
    double y = v;
    if (act == "relu") y = std::max(v, 0.0);
    if (act == "silu") y = v / (1.0 + std::exp(-v));
    want[i] = static_cast<float>(y);
  }
  const double bound = 1.1 * (tol::gamma(s.taps()) * sums.s + tol::gamma(1) * (sums.s + 2.0) +
                              tol::gamma(8) * largest);
  const std::string kernel =
      act.empty() ? "iron_conv2d_fused_bias" : "iron_conv2d_fused_bias_" + act;
  testing::TestSetup setup(kernel, dt, config);
  setup.input("x", x).input("weight", weight).input("bias", bias).output("out", s.output());
  convolution::set_constants(setup, s, false);
  setup.expect("out", want).tolerance(tol::stored(dt, bound, tol::gamma(1)));
  return setup.grid(testing::geometry_grid(setup));
}

/// The bench: cuDNN's conv with its bias, then torch's activation (`act` 0 none, 1 ReLU, 2 SiLU).
bench::BenchSetup fused_bench(const std::string& kernel, double act, const Sizes& s, DType dt) {
  bench::BenchSetup setup(kernel, dt);
  setup.random("x", s.input())
      .random("weight", s.weights())
      .random("bias", s.c_out)
      .output("out", s.output());
  convolution::set_constants(setup, s, false);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((s.input() + s.weights() + s.c_out + s.output()) * dtype_size(dt))
      .flops(convolution::flops(s))
      .peer("conv2d_bias_act", [&] {
        auto dims = convolution::peer_dims(s);
        dims["act"] = act;
        return dims;
      }());
}

}  // namespace

// A 3×3 layer over 16-byte gathers, and two groups of an odd channel count with stride 2.
IRON_TEST(iron_conv2d_fused_bias, resnet_3x3_1x5x5x16_to_24, F32, F16, BF16) {
  return fused_setup("", square(1, 5, 16, 24, 3, 1, 1), dt, rng);
}
IRON_TEST(iron_conv2d_fused_bias, groups2_odd_1x7x7x6_to_10_s2, F32, F16, BF16) {
  return fused_setup("", square(1, 7, 6, 10, 3, 2, 1, 1, 2), dt, rng);
}
// Narrow groups (4 of 8 channels): the bias and activation on the narrow body's sums.
IRON_TEST(iron_conv2d_fused_bias_relu, narrow_groups4_1x6x6x32_to_32, F32, F16, BF16) {
  return fused_setup("relu", square(1, 6, 32, 32, 3, 1, 1, 1, 4), dt, rng);
}
IRON_TEST(iron_conv2d_fused_bias_relu, resnet_3x3_1x5x5x16_to_24, F32, F16, BF16) {
  return fused_setup("relu", square(1, 5, 16, 24, 3, 1, 1), dt, rng);
}
IRON_TEST(iron_conv2d_fused_bias_relu, pointwise_2x4x4x8_to_130, F32, F16, BF16) {
  return fused_setup("relu", square(2, 4, 8, 130, 1, 1, 0), dt, rng);
}
IRON_TEST(iron_conv2d_fused_bias_silu, resnet_3x3_1x5x5x16_to_24, F32, F16, BF16) {
  return fused_setup("silu", square(1, 5, 16, 24, 3, 1, 1), dt, rng);
}
IRON_TEST(iron_conv2d_fused_bias_silu, pointwise_2x4x4x8_to_130, F32, F16, BF16) {
  return fused_setup("silu", square(2, 4, 8, 130, 1, 1, 0), dt, rng);
}
// The same on the warpgroup product (knob `pointwise`): past a 256-column tile, with ReLU and
// SiLU after the bias; f32 keeps the tiles.
IRON_TEST(iron_conv2d_fused_bias_relu, tuned_pointwise_2x4x4x8_to_260, F32, F16, BF16) {
  return fused_setup("relu", square(2, 4, 8, 260, 1, 1, 0), dt, rng, {{"pointwise", 1}});
}
IRON_TEST(iron_conv2d_fused_bias_silu, tuned_pointwise_1x12x12x24_to_40, F16, BF16) {
  return fused_setup("silu", square(1, 12, 24, 40, 1, 1, 0), dt, rng,
                     {{"pointwise", 1}, {"bn", 128}});
}
// The rule's configuration below a 64-column step of k (bench/NOTES.md §66): 64-column tiles,
// persistent groups (fewer than the tiles: each takes several), 24 channels into 144.
IRON_TEST(iron_conv2d_fused_bias_silu, tuned_pointwise_shallow_2x15x15x24_to_144, F16, BF16) {
  return fused_setup("silu", square(2, 15, 24, 144, 1, 1, 0), dt, rng,
                     {{"pointwise", 1}, {"bn", 64}, {"persistent", 1}})
      .groups(3);
}
// The image path (knob `image`): a 3×3 with the bias and ReLU in its epilogue, 80 channels
// past a 64-column tile, rows of 7 pixels in boxes 8 wide.
IRON_TEST(iron_conv2d_fused_bias_relu, tuned_image_2x7x7x64_to_80, F16, BF16) {
  return fused_setup("relu", square(2, 7, 64, 80, 3, 1, 1), dt, rng, {{"image", 8}, {"bn", 64}});
}

// ResNet-50's 28×28×128 3×3 with its ReLU, EfficientNet's 1×1 expansion with SiLU, batch 32.
IRON_BENCH(iron_conv2d_fused_bias, resnet_b32_28x28x128_3x3, BF16) {
  return fused_bench("iron_conv2d_fused_bias", 0, square(32, 28, 128, 128, 3, 1, 1), dt);
}
IRON_BENCH(iron_conv2d_fused_bias_relu, resnet_b32_28x28x128_3x3, BF16) {
  return fused_bench("iron_conv2d_fused_bias_relu", 1, square(32, 28, 128, 128, 3, 1, 1), dt);
}
IRON_BENCH(iron_conv2d_fused_bias_silu, efficientnet_b32_56x56x24_1x1_to_144, BF16) {
  return fused_bench("iron_conv2d_fused_bias_silu", 2, square(32, 56, 24, 144, 1, 1, 0), dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
