/// iron_conv2d: out[b, oy, ox, co] = Σ_{ky, kx, ci} x[b, oy·sh − ph + ky·dh, ox·sw − pw + kx·dw,
/// g·cin_g + ci] · weight[co, ky, kx, ci] over NHWC images, g = co / cout_g (cin_g = c_in /
/// groups, cout_g = c_out / groups; the constexpr `group_count` is PyTorch's `groups`, a name
/// the contract's expressions keep for the grid), taps in the padding counting zero: PyTorch's
/// conv2d with stride, padding, dilation and groups on channels_last tensors. iron_conv1d is the
/// same over NLC sequences, a thin form of the same body: conv2d of images one row high with a
/// kernel one row high (h = kh = 1, stride, padding and dilation 1, 0, 1 along the height).
///
/// Products accumulate in f32; only the final value is rounded to T.
///
/// ## Error bound
/// Per element, relative to Σ |x · w| over its taps: γ_k (u = 2^-24, k = kh·kw·cin_g) for the
/// f32 sum of exact products, then the rounding to T (2^-11 f16, 2^-8 bf16).
///
/// ## How it runs
/// As an implicit GEMM on gemm::product_from's 128×128 tensor-core tiles (kernels/gemm/
/// gemm_tiles.hpp): for group g, A = im2col(x) [batch·oh·ow, kh·kw·cin_g] and B = the group's
/// weight rows [cout_g, kh·kw·cin_g] (a linear layer's [n, k] layout, read as gemm's DenseB). A is
/// never stored: its a source (kernels/convolution/im2col_a.hpp) gathers each stage from x, a
/// 16-byte asynchronous copy per 8 channels of one tap when c_in and cin_g are multiples of 8
/// (zeros for taps in the padding), element by element otherwise. Each thread places its rows of
/// the stage in the image once per tile and its columns' tap once per step, so no copy divides;
/// a plain 1×1 (stride 1, no padding, one group) reads x as the dense [pixels, c_in] matrix it
/// is. The groups run along z. Narrow groups (≤ 16 output channels, cin_g a multiple of 4, kw ·
/// cin_g ≤ 48, 16 in f32) take kernels/convolution/narrow_groups.hpp's body on the same grid: sets
/// of groups staged together, only each group's products. Under the tuning knob `pointwise`,
/// which the kernels' rule sets for a 16-bit plain 1×1 with c_in a multiple of 8 and ≥ 24
/// (docs/tuning.md, "Rules"), the product is iron_gemm_warpgroup_nk's instead
/// (kernels/convolution/pointwise.hpp).
///
/// ## Layout
/// - `x [batch, h, w, c_in]` T; `weight [c_out, kh, kw, c_in / group_count]` T
/// - `out [batch, oh, ow, c_out]` T, oh = (h + 2·pad_h − dil_h·(kh − 1) − 1) / stride_h + 1 and
///   ow alike
/// - iron_conv1d: `x [batch, length, c_in]`, `weight [c_out, kernel_size, c_in / group_count]`,
///   `out [batch, ol, c_out]`, ol = (length + 2·padding − dilation·(kernel_size − 1) − 1) /
///   stride + 1
/// - c_in and c_out multiples of group_count.
///
/// ## Dispatch
/// Tiled: a grid of ceil(cout_g / 128) × ceil(batch·oh·ow / 128) × group_count groups of exactly
/// 128 threads; under `pointwise`, ceil(c_out / 256) × ceil(batch·h·w / 128) × 1 groups of
/// exactly 384, every launch a plain 1×1 (kh, kw, strides and group_count at most 1, paddings 0).
#include <iron/iron.hpp>
#include <string>

#include "conv_shape.hpp"
#include "conv_tiles.hpp"
#include "dense_rules.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {

/// The convolution with a plain weight, each sum rounded to T into out [pixels, c_out].
template <class T>
void dense_conv(const Tensor<T>& x, const Tensor<T>& weight, const Out<T>& out,
                const convolution::Shape& s) {
  convolution::dense_product(x, weight, out, s,
                             [](const Expr<u32>&, const Expr<f32>& sum) { return sum; });
}

}  // namespace

IRON_KERNEL(iron_conv2d,
            (Tensor<T> x, Tensor<T> weight, Out<T> out, Constexpr<u32> batch, Constexpr<u32> h,
             Constexpr<u32> w, Constexpr<u32> c_in, Constexpr<u32> c_out, Constexpr<u32> kh,
             Constexpr<u32> kw, Constexpr<u32> stride_h, Constexpr<u32> stride_w,
             Constexpr<u32> pad_h, Constexpr<u32> pad_w, Constexpr<u32> dil_h, Constexpr<u32> dil_w,
             Constexpr<u32> group_count)) {
  const std::string oh = convolution::kOutHeight;
  const std::string ow = convolution::kOutWidth;
  convolution::declare_dense_conv2d<T>(c_in, kh, kw, stride_h, stride_w, pad_h, pad_w, group_count);
  layout(x, "[batch, h, w, c_in]");
  layout(weight, "[c_out, kh, kw, c_in / group_count]");
  layout(out, "[batch, " + oh + ", " + ow + ", c_out]");
  dense_conv(x, weight, out,
             {batch, h, w, c_in, c_out, kh, kw, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
              group_count});
}

IRON_KERNEL(iron_conv1d, (Tensor<T> x, Tensor<T> weight, Out<T> out, Constexpr<u32> batch,
                          Constexpr<u32> length, Constexpr<u32> c_in, Constexpr<u32> c_out,
                          Constexpr<u32> kernel_size, Constexpr<u32> stride, Constexpr<u32> padding,
                          Constexpr<u32> dilation, Constexpr<u32> group_count)) {
  const std::string ol = convolution::kOutLength;
  if (convolution::pointwise<T>()) {
    convolution::declare_pointwise<T>("batch * length", c_in, {kernel_size, stride, group_count},
                                      {padding});
  } else if (convolution::image_path<T>()) {
    convolution::declare_image("1", ol, c_in, {stride, group_count});
  } else {
    convolution::declare_tiles("batch * " + ol, "c_out / group_count", "group_count");
  }
  layout(x, "[batch, length, c_in]");
  layout(weight, "[c_out, kernel_size, c_in / group_count]");
  layout(out, "[batch, " + ol + ", c_out]");
  const Expr<u32> one(1u);
  const Expr<u32> zero(0u);
  dense_conv(x, weight, out,
             {batch, one, length, c_in, c_out, one, kernel_size, one, stride, zero, padding, one,
              dilation, group_count});
}

IRON_GEOMETRY(iron_conv2d) { return convolution::dense_conv2d_geometry(q); }
IRON_GEOMETRY(iron_conv1d) { return convolution::conv1d_geometry(q); }
IRON_TUNING(iron_conv2d) { return convolution::dense_tuning(&convolution::prefer_dense_2d); }
IRON_TUNING(iron_conv1d) { return convolution::dense_tuning(&convolution::prefer_dense_1d); }

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

using convolution::line;
using convolution::Sizes;
using convolution::square;

testing::TestSetup conv_setup(const Sizes& s, bool one_d, DType dt, testing::Rng& rng,
                              const dsl::TuningConfig& config = {}) {
  namespace tol = testing::tolerance;
  const auto x = testing::round_through(rng.uniform(s.input(), -1.0f, 1.0f), dt);
  const auto weight = testing::round_through(rng.uniform(s.weights(), -1.0f, 1.0f), dt);
  const ProductExpected want = convolution::conv_oracle(x, weight, s);
  testing::TestSetup setup(one_d ? "iron_conv1d" : "iron_conv2d", dt, config);
  setup.input("x", x).input("weight", weight).output("out", s.output());
  convolution::set_constants(setup, s, one_d);
  setup.expect("out", want.out)
      .tolerance(tol::stored(dt, tol::gamma(s.taps()) * want.s, tol::gamma(1)));
  return setup.grid(testing::geometry_grid(setup));
}

/// The bench: random x and weight, the grid from the geometry, cuDNN (torch's conv on
/// channels_last tensors) computing the same convolution.
bench::BenchSetup conv_bench(const Sizes& s, bool one_d, DType dt) {
  bench::BenchSetup setup(one_d ? "iron_conv1d" : "iron_conv2d", dt);
  setup.random("x", s.input()).random("weight", s.weights()).output("out", s.output());
  convolution::set_constants(setup, s, one_d);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((s.input() + s.weights() + s.output()) * dtype_size(dt))
      .flops(convolution::flops(s))
      .peer(one_d ? "conv1d" : "conv2d", convolution::peer_dims(s));
}

}  // namespace

// ResNet's 3×3 (stride 1, padding 1): 16-byte gathers, a tile of 72 pixels.
IRON_TEST(iron_conv2d, resnet_3x3_2x6x6x16_to_24, F32, F16, BF16) {
  return conv_setup(square(2, 6, 16, 24, 3, 1, 1), false, dt, rng);
}
// A stem's 7×7 stride 2 padding 3 over 8 channels; its 3-channel image (the element path).
IRON_TEST(iron_conv2d, stem_7x7_s2_11x11x8_to_16, F32, F16, BF16) {
  return conv_setup(square(1, 11, 8, 16, 7, 2, 3), false, dt, rng);
}
IRON_TEST(iron_conv2d, rgb_3x3_2x5x5x3_to_10, F32, F16, BF16) {
  return conv_setup(square(2, 5, 3, 10, 3, 1, 1), false, dt, rng);
}
// A 1×1 (a plain product of pixels and channels) over two tiles of c_out (136 > 128).
IRON_TEST(iron_conv2d, pointwise_2x8x8x32_to_136, F32, F16, BF16) {
  return conv_setup(square(2, 8, 32, 136, 1, 1, 0), false, dt, rng);
}
// A plain 1×1 (stride 1, no padding, one group) reads x as the dense [pixels, c_in] matrix:
// 154 pixels (a partial second tile of rows) in a non-square image; 12 channels take the
// element-by-element path; a stride of 2 is a 1×1 that still gathers.
IRON_TEST(iron_conv2d, pointwise_dense_2x7x11x24_to_40, F32, F16, BF16) {
  return conv_setup({2, 7, 11, 24, 40, 1, 1, 1, 1, 0, 0, 1, 1, 1}, false, dt, rng);
}
IRON_TEST(iron_conv2d, pointwise_odd_channels_9x9x12_to_20, F32, F16, BF16) {
  return conv_setup(square(1, 9, 12, 20, 1, 1, 0), false, dt, rng);
}
IRON_TEST(iron_conv2d, pointwise_s2_9x9x16_to_24, F32, F16, BF16) {
  return conv_setup(square(1, 9, 16, 24, 1, 2, 0), false, dt, rng);
}
// The pointwise path (knob `pointwise`: the warpgroup product, kernels/convolution/
// pointwise.hpp): 162 pixels past a 128-row tile and 300 channels past a 256-column one over
// five 64-channel steps (the ring wraps); 12 channels (a row not of whole 16-byte pieces: the
// step-by-step path); one pixel. f32 keeps the tiles under the knob.
IRON_TEST(iron_conv2d, tuned_pointwise_2x9x9x320_to_300, F32, F16, BF16) {
  return conv_setup(square(2, 9, 320, 300, 1, 1, 0), false, dt, rng, {{"pointwise", 1}});
}
IRON_TEST(iron_conv2d, tuned_pointwise_odd_channels_1x5x7x12_to_20, F16, BF16) {
  return conv_setup({1, 5, 7, 12, 20, 1, 1, 1, 1, 0, 0, 1, 1, 1}, false, dt, rng,
                    {{"pointwise", 1}});
}
IRON_TEST(iron_conv2d, tuned_pointwise_one_pixel_1x1x16_to_8, F16, BF16) {
  return conv_setup(square(1, 1, 16, 8, 1, 1, 0), false, dt, rng, {{"pointwise", 1}});
}
// Persistent groups (knob `persistent`): 3 groups over the 2 × 2 tiles of 162 pixels by 300
// channels, one group taking two; and one group taking all five 64-column tiles.
testing::TestSetup persistent_conv_setup(const Sizes& c, DType dt, testing::Rng& rng,
                                         std::uint32_t groups, dsl::TuningConfig config) {
  config["pointwise"] = 1;
  config["persistent"] = 1;
  testing::TestSetup setup = conv_setup(c, false, dt, rng, config);
  setup.groups(groups);
  return setup;
}
IRON_TEST(iron_conv2d, tuned_persistent_2x9x9x320_to_300, F16, BF16) {
  return persistent_conv_setup(square(2, 9, 320, 300, 1, 1, 0), dt, rng, 3, {});
}
IRON_TEST(iron_conv2d, tuned_persistent_bn64_1x9x9x64_to_300, F16, BF16) {
  return persistent_conv_setup(square(1, 9, 64, 300, 1, 1, 0), dt, rng, 1, {{"bn", 64}});
}
// 64-pixel tiles of two groups a multiprocessor (knobs `bm`, `resident`): 3 × 3 tiles of 162
// pixels by 300 channels (the last of each partial) over 4 groups.
IRON_TEST(iron_conv2d, tuned_persistent_resident_2_2x9x9x64_to_300, F16, BF16) {
  return persistent_conv_setup(square(2, 9, 64, 300, 1, 1, 0), dt, rng, 4,
                               {{"bm", 64}, {"bn", 128}, {"resident", 2}});
}
// Narrower tiles (knob `bn`): 300 channels over five 64-column tiles, the last partial.
IRON_TEST(iron_conv2d, tuned_pointwise_bn64_1x9x9x64_to_300, F16, BF16) {
  return conv_setup(square(1, 9, 64, 300, 1, 1, 0), false, dt, rng, {{"pointwise", 1}, {"bn", 64}});
}
// The image path (knob `image`, the box's width: kernels/convolution/image_product.hpp): a 3×3
// over 9 × 9 pixels in boxes of 8 rows of 16 (two tiles of rows, a partial one; columns past
// the image) and 72 channels past a 64-column tile; a non-square image, dilation 2 and padding
// 2, two 64-channel steps a tap, 40 channels in 64-column tiles on the deepest ring; a box of 8
// pixels a row over rows of 10 (two tiles across, the second mostly outside).
IRON_TEST(iron_conv2d, tuned_image_3x3_2x9x9x64_to_72, F16, BF16) {
  return conv_setup(square(2, 9, 64, 72, 3, 1, 1), false, dt, rng, {{"image", 16}, {"bn", 64}});
}
IRON_TEST(iron_conv2d, tuned_image_dilated_1x6x10x128_to_40, F16, BF16) {
  return conv_setup({1, 6, 10, 128, 40, 3, 3, 1, 1, 2, 2, 2, 2, 1}, false, dt, rng,
                    {{"image", 8}, {"bn", 64}, {"stages", 16}});
}
// Two groups a multiprocessor (knob `resident`: on CUDA half the registers and the ring's
// stages that fit half the shared memory) over the 3×3 of 9 × 9 pixels into 72 channels.
IRON_TEST(iron_conv2d, tuned_image_resident_2_2x9x9x64_to_72, F16, BF16) {
  return conv_setup(square(2, 9, 64, 72, 3, 1, 1), false, dt, rng,
                    {{"image", 16}, {"bn", 64}, {"stages", 16}, {"resident", 2}});
}
// Five steps of k (the ring wraps, each thread's taps move across kernel rows) over 200 pixels.
IRON_TEST(iron_conv2d, resnet_3x3_steps_2x10x10x32_to_24, F32, F16, BF16) {
  return conv_setup(square(2, 10, 32, 24, 3, 1, 1), false, dt, rng);
}
// Padding past the kernel's reach (outputs whose every tap is padding), dilation 2.
IRON_TEST(iron_conv2d, wide_padding_dilated_4x4x8_to_8, F32, F16, BF16) {
  return conv_setup(square(1, 4, 8, 8, 3, 1, 4, 2), false, dt, rng);
}
// Two groups of 8 channels (16-byte gathers), and of 6 (element by element), a stride of 2.
IRON_TEST(iron_conv2d, groups2_7x7x16_to_24, F32, F16, BF16) {
  return conv_setup(square(1, 7, 16, 24, 3, 1, 1, 1, 2), false, dt, rng);
}
IRON_TEST(iron_conv2d, groups2_odd_9x9x12_to_10_s2, F32, F16, BF16) {
  return conv_setup(square(1, 9, 12, 10, 3, 2, 1, 1, 2), false, dt, rng);
}
// One output pixel (the kernel covers the image), and a non-square kernel and stride.
IRON_TEST(iron_conv2d, one_pixel_3x3x8_to_5, F32, F16, BF16) {
  return conv_setup(square(1, 3, 8, 5, 3, 1, 0), false, dt, rng);
}
IRON_TEST(iron_conv2d, rect_1x3_kernel_5x7x16_to_8, F32, F16, BF16) {
  return conv_setup({1, 5, 7, 16, 8, 1, 3, 2, 1, 0, 1, 1, 1, 1}, false, dt, rng);
}
// Narrow groups (kernels/convolution/narrow_groups.hpp): sets of 4 groups of 4 channels over
// two tiles of pixels (162); two sets of 8 groups (more launched groups than work: some idle);
// 16 channels a group in three chunks of one kernel row; a stride of 2; a strided 1×1 of one
// group of 40 channels (10 copies a pixel: lanes idle); and one past a chunk (a kernel row of
// 3 · 32 columns) on the tiled body. f32 chunks hold 16 columns: only the 4-channel groups
// take the narrow body in f32.
IRON_TEST(iron_conv2d, narrow_groups4_2x9x9x16_to_16, F32, F16, BF16) {
  return conv_setup(square(2, 9, 16, 16, 3, 1, 1, 1, 4), false, dt, rng);
}
IRON_TEST(iron_conv2d, narrow_groups16_sets_2x7x7x64_to_64, F32, F16, BF16) {
  return conv_setup(square(2, 7, 64, 64, 3, 1, 1, 1, 16), false, dt, rng);
}
IRON_TEST(iron_conv2d, narrow_groups2_chunks_1x6x6x32_to_32, F32, F16, BF16) {
  return conv_setup(square(1, 6, 32, 32, 3, 1, 1, 1, 2), false, dt, rng);
}
IRON_TEST(iron_conv2d, narrow_groups2_s2_1x9x9x16_to_12, F32, F16, BF16) {
  return conv_setup(square(1, 9, 16, 12, 3, 2, 1, 1, 2), false, dt, rng);
}
IRON_TEST(iron_conv2d, narrow_one_group_1x1_s2_1x7x7x40_to_16, F32, F16, BF16) {
  return conv_setup({1, 7, 7, 40, 16, 1, 1, 2, 2, 0, 0, 1, 1, 1}, false, dt, rng);
}
// ResNeXt's sets: 8 groups of 8 channels (16-byte copies in f16/bf16) over 2 × 7 × 7 pixels.
IRON_TEST(iron_conv2d, narrow_groups8_resnext_2x7x7x64_to_64, F32, F16, BF16) {
  return conv_setup(square(2, 7, 64, 64, 3, 1, 1, 1, 8), false, dt, rng);
}
IRON_TEST(iron_conv2d, past_narrow_1x5x5x32_to_16, F32, F16, BF16) {
  return conv_setup(square(1, 5, 32, 16, 3, 1, 1), false, dt, rng);
}

// conv1d: a 3-tap sequence layer, and stride 2, dilation 2, two groups of 6 channels.
IRON_TEST(iron_conv1d, taps3_2x20x16_to_24, F32, F16, BF16) {
  return conv_setup(line(2, 20, 16, 24, 3, 1, 1), true, dt, rng);
}
IRON_TEST(iron_conv1d, strided_dilated_groups2_1x23x12_to_10, F32, F16, BF16) {
  return conv_setup(line(1, 23, 12, 10, 3, 2, 2, 2, 2), true, dt, rng);
}
// Four narrow groups of 8 channels, 5 taps and padding 2, over 130 positions.
IRON_TEST(iron_conv1d, narrow_groups4_1x130x32_to_16, F32, F16, BF16) {
  return conv_setup(line(1, 130, 32, 16, 5, 1, 2, 1, 4), true, dt, rng);
}
// A kernel of one tap: the dense path, over 150 positions.
IRON_TEST(iron_conv1d, pointwise_2x75x16_to_24, F32, F16, BF16) {
  return conv_setup(line(2, 75, 16, 24, 1, 1, 0), true, dt, rng);
}

// The image path over sequences: 150 positions in boxes of 128 (a partial second tile), a
// 3-tap kernel with padding 1 over 64 channels.
IRON_TEST(iron_conv1d, tuned_image_taps3_2x150x64_to_24, F16, BF16) {
  return conv_setup(line(2, 150, 64, 24, 3, 1, 1), true, dt, rng, {{"image", 128}, {"bn", 64}});
}

IRON_TEST(iron_conv1d, tuned_pointwise_2x75x16_to_24, F16, BF16) {
  return conv_setup(line(2, 75, 16, 24, 1, 1, 0), true, dt, rng, {{"pointwise", 1}});
}

// ResNet-50's 3×3 layers of each stage and a 1×1 expansion, batch 32.
IRON_BENCH(iron_conv2d, resnet_b32_56x56x64_3x3, BF16) {
  return conv_bench(square(32, 56, 64, 64, 3, 1, 1), false, dt);
}
IRON_BENCH(iron_conv2d, resnet_b32_28x28x128_3x3, BF16) {
  return conv_bench(square(32, 28, 128, 128, 3, 1, 1), false, dt);
}
IRON_BENCH(iron_conv2d, resnet_b32_14x14x256_3x3, BF16) {
  return conv_bench(square(32, 14, 256, 256, 3, 1, 1), false, dt);
}
IRON_BENCH(iron_conv2d, resnet_b32_56x56x256_1x1_to_1024, BF16) {
  return conv_bench(square(32, 56, 256, 1024, 1, 1, 0), false, dt);
}
// ResNeXt's grouped 3×3: 32 groups of 8 channels.
IRON_BENCH(iron_conv2d, resnext_b32_28x28x256_3x3_g32, BF16) {
  return conv_bench(square(32, 28, 256, 256, 3, 1, 1, 1, 32), false, dt);
}
// A sequence model's conv1d: 4096 positions of 512 channels, kernel 3.
IRON_BENCH(iron_conv1d, b8_l4096_c512_k3, BF16) {
  return conv_bench(line(8, 4096, 512, 512, 3, 1, 1), true, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
