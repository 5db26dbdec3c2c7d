/// The dense convolution forms' knobs and rule: a plain 1×1 takes the pointwise path
/// (pointwise.hpp), a 16-bit launch of stride 1, one group and c_in a multiple of 64 the image
/// path (image_product.hpp), every other launch the fragment tiles.
#pragma once

#include <cmath>
#include <cstdint>
#include <iron/iron.hpp>

#include "image_product.hpp"
#include "pointwise.hpp"

namespace iron::kernels::convolution {

/// The image path's configuration for a launch of oh × ow output pixels a `batch` images when
/// it qualifies (16-bit, `stride_one` and one group, c_in a multiple of 64), else the defaults:
/// the box of box_width_for; the tile's width the narrowest that holds c_out,
/// narrowed further until the launch has gemm::warpgroup::kFillTiles tiles; under 256
/// columns, a ring as deep as the shared memory holds (as gemm::warpgroup::prefer_tiles does);
/// and at 64 columns, where the launch has tiles for two groups a multiprocessor
/// (gemm::warpgroup::kPersistentTiles), two resident groups (`resident`), so that one's epilogue
/// runs beside the other's products: ResNet's 56² × 64 3×3 on the H100 took 39.1 µs so against
/// 49.2 (bench/NOTES.md §67).
inline dsl::TuningConfig image_when(DType dtype, const dsl::LaunchConstants& c, bool stride_one,
                                    double batch, double oh, double ow) {
  using gemm::warpgroup::kBN;
  const bool half = dtype == DType::F16 || dtype == DType::BF16;
  const double c_in = constant_or_zero(c, "c_in");
  const double c_out = constant_or_zero(c, "c_out");
  const bool deep = c_in >= kImageStep && std::fmod(c_in, kImageStep) == 0;
  if (!half || !stride_one || !deep || c_out < 1 || oh < 1 || ow < 1 ||
      !constants_are(c, {"group_count"}, {})) {
    return {};
  }
  const std::uint32_t bw = box_width_for(oh, ow);
  const double tiles_of_pixels =
      batch * std::ceil(oh / (kImagePixels / bw)) * std::ceil(ow / static_cast<double>(bw));
  std::uint32_t bn = kBN;
  const auto tiles = [&] { return tiles_of_pixels * std::ceil(c_out / bn); };
  while (bn > kBN / 4 && c_out <= bn / 2) bn /= 2;
  while (bn > kBN / 4 && tiles() < gemm::warpgroup::kFillTiles) bn /= 2;
  dsl::TuningConfig config{{kImageKnob, bw}};
  if (bn != kBN) {
    config[kWidthKnob] = bn;
    config["stages"] = gemm::warpgroup::kFillStages;
  }
  if (bn == kBN / 4 && tiles() >= gemm::warpgroup::kPersistentTiles) config[kResidentKnob] = 2;
  return config;
}

/// The rule of iron_conv2d's dense forms.
inline dsl::TuningConfig prefer_dense_2d(DType dtype, const dsl::LaunchConstants& c) {
  dsl::TuningConfig pointwise = prefer_pointwise_2d(dtype, c);
  if (!pointwise.empty()) return pointwise;
  // The output's extent along an axis at stride 1 (no other takes the image path).
  const auto span = [&](const char* size, const char* pad, const char* dil, const char* k) {
    return constant_or_zero(c, size) + 2 * constant_or_zero(c, pad) -
           constant_or_zero(c, dil) * (constant_or_zero(c, k) - 1);
  };
  return image_when(dtype, c, constants_are(c, {"stride_h", "stride_w"}, {}),
                    constant_or_zero(c, "batch"), span("h", "pad_h", "dil_h", "kh"),
                    span("w", "pad_w", "dil_w", "kw"));
}

/// The rule of iron_conv1d.
inline dsl::TuningConfig prefer_dense_1d(DType dtype, const dsl::LaunchConstants& c) {
  dsl::TuningConfig pointwise = prefer_pointwise_1d(dtype, c);
  if (!pointwise.empty()) return pointwise;
  const double ol = constant_or_zero(c, "length") + 2 * constant_or_zero(c, "padding") -
                    constant_or_zero(c, "dilation") * (constant_or_zero(c, "kernel_size") - 1);
  return image_when(dtype, c, constants_are(c, {"stride"}, {}), constant_or_zero(c, "batch"), 1,
                    ol);
}

/// The dense forms' knobs, every path off by default: the pointwise path's (pointwise_tuning),
/// the image path's box width, and the ring's stages (iron_gemm_warpgroup_nk's `stages`; the
/// image path's alone), with `rule`.
inline dsl::TuningSpace dense_tuning(dsl::TuningRule rule) {
  return pointwise_tuning(rule)
      .knob(kImageKnob, {0, 8, 16, 32, 64, 128})
      .knob("stages", {gemm::warpgroup::kWideStages, gemm::warpgroup::kFillStages});
}

}  // namespace iron::kernels::convolution
