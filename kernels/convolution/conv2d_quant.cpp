/// iron_conv2d_affine_b4_g{32,64,128}, iron_conv2d_mxfp4: iron_conv2d (groups = 1) with the
/// weight [c_out, kh, kw, c_in] quantized along its rows as iron_gemm's quantized forms take a
/// weight [n, k] (k = kh·kw·c_in, here in the order of the taps): MLX's affine 4-bit codes
/// (w = scale · q + bias per group of G weights of a row) or OCP MXFP4 (E2M1 codes, one E8M0
/// power of two per 32). c_in is a multiple of G (of 32 for MXFP4), so a group of weights is one
/// tap's channels.
///
/// Each decoded weight is rounded to T before the tensor cores multiply it; products accumulate
/// in f32 and only the final value is rounded to T.
///
/// ## Error bound
/// iron_gemm_affine's (kernels/gemm/gemm_quant.cpp) with k = kh·kw·c_in, over each output's taps:
/// (γ_k + ε + γ_k·ε)·S + (1 + γ_k)·η·X, S = Σ |x · w| and X = Σ |x|, ε = u_T + γ_2 and η half
/// T's smallest subnormal, then the rounding to T.
///
/// ## How it runs
/// iron_conv2d's implicit GEMM (kernels/convolution/conv2d.cpp) with gemm's quantized b source
/// (kernels/gemm/quant_b.hpp): each k step, the im2col a stage is gathered from x while the
/// threads decode the step's weight tile from the codes into the b stage.
///
/// ## Layout
/// - `x [batch, h, w, c_in]` T; `out [batch, oh, ow, c_out]` T (iron_conv2d's oh and ow)
/// - affine: `packed [c_out, kh · kw · c_in / 8]` u32, `scales`, `biases [c_out, kh · kw · c_in /
///   G]` T; c_in a multiple of G
/// - MXFP4: `packed [c_out, kh · kw · c_in / 8]` u32, `scales [c_out, kh · kw · c_in / 32]` u8;
///   c_in a multiple of 32
///
/// ## Dispatch
/// Tiled: a grid of ceil(c_out / 128) × ceil(batch·oh·ow / 128) groups of exactly 128 threads.
#include <iron/iron.hpp>
#include <string>

#include "../gemm/quant_b.hpp"
#include "conv_shape.hpp"
#include "conv_tiles.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {

/// The declarations every quantized form shares, x's and out's, and the shape (one group).
template <class T>
convolution::Shape declare_quant_conv(const Tensor<T>& x, const Out<T>& out,
                                      const Constexpr<u32>& batch, const Constexpr<u32>& h,
                                      const Constexpr<u32>& w, const Constexpr<u32>& c_in,
                                      const Constexpr<u32>& c_out, const Constexpr<u32>& kh,
                                      const Constexpr<u32>& kw, const Constexpr<u32>& stride_h,
                                      const Constexpr<u32>& stride_w, const Constexpr<u32>& pad_h,
                                      const Constexpr<u32>& pad_w, const Constexpr<u32>& dil_h,
                                      const Constexpr<u32>& dil_w) {
  const std::string oh = convolution::kOutHeight;
  const std::string ow = convolution::kOutWidth;
  convolution::declare_tiles("batch * " + oh + " * " + ow, "c_out", "1");
  layout(x, "[batch, h, w, c_in]");
  layout(out, "[batch, " + oh + ", " + ow + ", c_out]");
  return {batch,    h,        w,     c_in,  c_out, kh,    kw,
          stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, Expr<u32>(1u)};
}

/// The product with the quantized b source `bsrc` (rows [c_out, kh · kw · c_in]).
template <class T, class BSource>
void quant_conv(const Tensor<T>& x, const Out<T>& out, const convolution::Shape& s,
                const BSource& bsrc) {
  convolution::conv_product(
      x, out, s, [&](const Expr<u32>&, const Expr<u32>&, const Expr<u32>&) { return bsrc; },
      [&](const Expr<u32>&, const Expr<f32>& sum) { return sum; });
}

}  // namespace

IRON_KERNEL_TEMPLATE(iron_conv2d_affine, (u32 GROUP),
                     (Tensor<T> x, Tensor<u32> packed, Tensor<T> scales, Tensor<T> biases,
                      Out<T> out, Constexpr<u32> batch, Constexpr<u32> h, Constexpr<u32> w,
                      Constexpr<u32> c_in, Constexpr<u32> c_out, Constexpr<u32> kh,
                      Constexpr<u32> kw, Constexpr<u32> stride_h, Constexpr<u32> stride_w,
                      Constexpr<u32> pad_h, Constexpr<u32> pad_w, Constexpr<u32> dil_h,
                      Constexpr<u32> dil_w)) {
  constexpr u32 kBits = 4;
  const auto s = declare_quant_conv(x, out, batch, h, w, c_in, c_out, kh, kw, stride_h, stride_w,
                                    pad_h, pad_w, dil_h, dil_w);
  require_multiple_of(c_in, GROUP);
  const std::string groups = "[c_out, kh * kw * c_in / " + std::to_string(GROUP) + "]";
  layout(packed, "[c_out, kh * kw * c_in / " + std::to_string(codes_per_word<kBits>) + "]");
  layout(scales, groups);
  layout(biases, groups);
  using Codes = gemm::AffineCodes<T, kBits, GROUP>;
  quant_conv(x, out, s, gemm::QuantB<T, Codes>{Codes{packed, scales, biases}});
}
IRON_KERNEL_VARIANT(iron_conv2d_affine, b4_g32, 32);
IRON_KERNEL_VARIANT(iron_conv2d_affine, b4_g64, 64);
IRON_KERNEL_VARIANT(iron_conv2d_affine, b4_g128, 128);

IRON_KERNEL(iron_conv2d_mxfp4,
            (Tensor<T> x, Tensor<u32> packed, Tensor<u8> scales, Out<T> out, Constexpr<u32> batch,
             Constexpr<u32> h, Constexpr<u32> w, Constexpr<u32> c_in, Constexpr<u32> c_out,
             Constexpr<u32> kh, Constexpr<u32> kw, Constexpr<u32> stride_h, Constexpr<u32> stride_w,
             Constexpr<u32> pad_h, Constexpr<u32> pad_w, Constexpr<u32> dil_h,
             Constexpr<u32> dil_w)) {
  const auto s = declare_quant_conv(x, out, batch, h, w, c_in, c_out, kh, kw, stride_h, stride_w,
                                    pad_h, pad_w, dil_h, dil_w);
  require_multiple_of(c_in, gemm::Mxfp4Codes::kBlock);
  layout(packed, "[c_out, kh * kw * c_in / 8]");
  layout(scales, "[c_out, kh * kw * c_in / 32]");
  quant_conv(x, out, s, gemm::QuantB<T, gemm::Mxfp4Codes>{gemm::Mxfp4Codes{packed, scales}});
}

IRON_GEOMETRY(iron_conv2d_affine_b4_g32) { return convolution::conv2d_geometry(q, false); }
IRON_GEOMETRY(iron_conv2d_affine_b4_g64) { return convolution::conv2d_geometry(q, false); }
IRON_GEOMETRY(iron_conv2d_affine_b4_g128) { return convolution::conv2d_geometry(q, false); }
IRON_GEOMETRY(iron_conv2d_mxfp4) { return convolution::conv2d_geometry(q, false); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "../gemm/quant_weights.hpp"
#include "conv_cases.hpp"

namespace iron::kernels {

namespace {

using convolution::Sizes;
using convolution::square;

testing::TestSetup quant_conv_setup(const std::string& kernel, const QuantWeights& q,
                                    const Sizes& s, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const auto x = testing::round_through(rng.uniform(s.input(), -1.0f, 1.0f), dt);
  const std::size_t k = s.taps();
  const ProductExpected want = convolution::conv_oracle(
      x, s, [&](std::size_t co, std::size_t p) { return q.w(co * k + p); });
  // gemm_quant's bound: each weight rounded to T, then the f32 sum of k products.
  const double eps = tol::unit_roundoff(dt) + tol::gamma(2);
  const double sum = tol::gamma(k);
  const double bound = (sum + eps + sum * eps) * want.s + (1.0 + sum) * tol::underflow(dt) * want.x;
  testing::TestSetup setup(kernel, dt);
  setup.input("x", x);
  for (const auto& [name, words] : q.words) setup.input_u32(name, words);
  for (const auto& [name, values] : q.values) setup.input(name, values);
  setup.output("out", s.output());
  convolution::set_constants(setup, s, false, false);
  setup.expect("out", want.out).tolerance(tol::stored(dt, bound, 0.0));
  return setup.grid(testing::geometry_grid(setup));
}

testing::TestSetup affine_conv_setup(std::size_t group, const Sizes& s, DType dt,
                                     testing::Rng& rng) {
  const auto q = affine_weights(s.c_out, s.taps(), 4, group, 1e-3f, 0.1f, dt, rng);
  return quant_conv_setup("iron_conv2d_affine_b4_g" + std::to_string(group), q, s, dt, rng);
}
testing::TestSetup mxfp4_conv_setup(const Sizes& s, DType dt, testing::Rng& rng) {
  // Exponents 2^-7 … 2^7: products and sums stay well inside every T's range.
  return quant_conv_setup("iron_conv2d_mxfp4", mxfp4_weights(s.c_out, s.taps(), 120, 135, rng), s,
                          dt, rng);
}

/// The bench: x random, the weights' inputs, cuDNN computing the convolution with a dense weight
/// of T.
bench::BenchSetup quant_conv_bench(const std::string& kernel, const QuantWeights& q, const Sizes& s,
                                   DType dt) {
  bench::BenchSetup setup(kernel, dt);
  std::size_t weight_bytes = 0;
  setup.random("x", s.input());
  for (const auto& [name, words] : q.words) {
    setup.input_u32(name, words);
    weight_bytes += words.size() * (name == "scales" ? 1 : 4);
  }
  for (const auto& [name, values] : q.values) {
    setup.input(name, values);
    weight_bytes += values.size() * dtype_size(dt);
  }
  setup.output("out", s.output());
  convolution::set_constants(setup, s, false, false);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(weight_bytes + (s.input() + s.output()) * dtype_size(dt))
      .flops(convolution::flops(s))
      .peer("conv2d", convolution::peer_dims(s));
}

}  // namespace

// A 3×3 layer (one group of weights a tap's channels, two for g32 over 64 channels), a 1×1 with
// c_out past a tile, and one output pixel of a strided kernel.
IRON_TEST(iron_conv2d_affine_b4_g32, resnet_3x3_1x4x4x64_to_20, F32, F16, BF16) {
  return affine_conv_setup(32, square(1, 4, 64, 20, 3, 1, 1), dt, rng);
}
IRON_TEST(iron_conv2d_affine_b4_g32, pointwise_2x6x6x32_to_130, F32, F16, BF16) {
  return affine_conv_setup(32, square(2, 6, 32, 130, 1, 1, 0), dt, rng);
}
IRON_TEST(iron_conv2d_affine_b4_g64, resnet_3x3_1x3x3x64_to_24, F32, F16, BF16) {
  return affine_conv_setup(64, square(1, 3, 64, 24, 3, 1, 1), dt, rng);
}
IRON_TEST(iron_conv2d_affine_b4_g64, one_pixel_s2_1x3x3x64_to_7, F32, F16, BF16) {
  return affine_conv_setup(64, square(1, 3, 64, 7, 3, 2, 0), dt, rng);
}
IRON_TEST(iron_conv2d_affine_b4_g128, pointwise_1x5x5x128_to_24, F32, F16, BF16) {
  return affine_conv_setup(128, square(1, 5, 128, 24, 1, 1, 0), dt, rng);
}
IRON_TEST(iron_conv2d_affine_b4_g128, strided_3x3_1x4x4x128_to_9, F32, F16, BF16) {
  return affine_conv_setup(128, square(1, 4, 128, 9, 3, 2, 1), dt, rng);
}
IRON_TEST(iron_conv2d_mxfp4, resnet_3x3_1x4x4x32_to_24, F32, F16, BF16) {
  return mxfp4_conv_setup(square(1, 4, 32, 24, 3, 1, 1), dt, rng);
}
IRON_TEST(iron_conv2d_mxfp4, pointwise_2x6x6x64_to_130, F32, F16, BF16) {
  return mxfp4_conv_setup(square(2, 6, 64, 130, 1, 1, 0), dt, rng);
}

// ResNet-50's 28×28×128 3×3 and 56×56×256 → 1024 1×1, batch 32, beside cuDNN's dense bf16 conv.
IRON_BENCH(iron_conv2d_affine_b4_g64, resnet_b32_28x28x128_3x3, BF16) {
  testing::Rng rng(7);
  const Sizes s = square(32, 28, 128, 128, 3, 1, 1);
  return quant_conv_bench("iron_conv2d_affine_b4_g64",
                          affine_weights(s.c_out, s.taps(), 4, 64, 0.001f, 0.01f, dt, rng), s, dt);
}
IRON_BENCH(iron_conv2d_affine_b4_g32, resnet_b32_56x56x256_1x1_to_1024, BF16) {
  testing::Rng rng(7);
  const Sizes s = square(32, 56, 256, 1024, 1, 1, 0);
  return quant_conv_bench("iron_conv2d_affine_b4_g32",
                          affine_weights(s.c_out, s.taps(), 4, 32, 0.001f, 0.01f, dt, rng), s, dt);
}
IRON_BENCH(iron_conv2d_affine_b4_g128, resnet_b32_28x28x128_3x3, BF16) {
  testing::Rng rng(7);
  const Sizes s = square(32, 28, 128, 128, 3, 1, 1);
  return quant_conv_bench("iron_conv2d_affine_b4_g128",
                          affine_weights(s.c_out, s.taps(), 4, 128, 0.001f, 0.01f, dt, rng), s, dt);
}
IRON_BENCH(iron_conv2d_mxfp4, resnet_b32_28x28x128_3x3, BF16) {
  testing::Rng rng(7);
  const Sizes s = square(32, 28, 128, 128, 3, 1, 1);
  return quant_conv_bench("iron_conv2d_mxfp4", mxfp4_weights(s.c_out, s.taps(), 118, 122, rng), s,
                          dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
