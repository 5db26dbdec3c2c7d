/// Pointwise convolutions on the warpgroup GEMM: a plain 1×1 (stride 1, no padding, one group)
/// is out [pixels, c_out] = x [pixels, c_in] · weightᵀ with weight [c_out, c_in], a linear
/// layer's [n, k], so it takes gemm::warpgroup's 128×256 product (wgmma and TMA on sm_90a) in
/// place of the implicit GEMM's 128×128 fragment tiles. The dense forms' knob `pointwise`
/// selects it at trace time (it changes the group's threads, so it cannot be a launch-constant
/// branch); their tuning rule sets it for every 16-bit launch of that shape, and the contract
/// traced under it refuses any other shape (docs/tuning.md, "Rules").
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iron/iron.hpp>
#include <optional>
#include <string>

#include "../gemm/gemm_warpgroup.hpp"
#include "conv_shape.hpp"

namespace iron::kernels::convolution {

inline constexpr const char* kPointwiseKnob = "pointwise";
inline constexpr const char* kWidthKnob = "bn";   ///< the pointwise tile's columns
inline constexpr const char* kHeightKnob = "bm";  ///< the pointwise tile's pixels
/// Groups a multiprocessor (gemm::warpgroup::Shape::resident).
inline constexpr const char* kResidentKnob = "resident";
/// A group a multiprocessor taking tile after tile (gemm::warpgroup::Shape::persistent).
inline constexpr const char* kPersistentKnob = "persistent";
/// Fewest input channels the rule puts on the pointwise path at its default width: one
/// 64-column step of k.
inline constexpr double kMinChannels = 64;
/// Fewest input channels the rule puts on the pointwise path at all (in 64-column tiles): the
/// narrowest measured, EfficientNet's 24 (bench/NOTES.md §66).
inline constexpr double kMinShallowChannels = 24;

/// Whether this trace takes the pointwise path: the knob on and T 16-bit (f32 has no warpgroup
/// product and keeps the tiles under either value).
template <class T>
bool pointwise() {
  return dsl::lane_bytes<T>() == 2 && dsl::tuned(kPointwiseKnob) == 1;
}

/// Whether the launch's constexprs in `ones` are all 1 and those in `zeros` all 0.
inline bool constants_are(const dsl::LaunchConstants& c, std::initializer_list<const char*> ones,
                          std::initializer_list<const char*> zeros) {
  const auto is = [&](const char* name, double want) {
    const auto found = c.find(name);
    return found != c.end() && found->second == want;
  };
  return std::ranges::all_of(ones, [&](const char* name) { return is(name, 1.0); }) &&
         std::ranges::all_of(zeros, [&](const char* name) { return is(name, 0.0); });
}

/// The pointwise configuration for a 16-bit launch when `plain` and c_in is whole 16-byte pieces
/// of at least kMinShallowChannels, persistent where its `pixels` × c_out make enough tiles
/// (gemm::warpgroup::persistent_pays), else the defaults (the tiles). Where c_in fills a 64-column
/// step of k (kMinChannels) the tile width stays at its default 256 (bench/NOTES.md §55); below
/// it, where a tile's product is one short step and its epilogue most of its time, tiles of 64
/// columns: EfficientNet's 24 → 144 with bias and SiLU on the H100 took 75.0 µs so, persistent,
/// against 86.9 on the fragment tiles and 115.4 at 256 columns (bench/NOTES.md §66).
inline dsl::TuningConfig pointwise_when(DType dtype, const dsl::LaunchConstants& c, bool plain,
                                        double pixels) {
  const auto c_in = c.find("c_in");
  const auto c_out = c.find("c_out");
  const bool pieces = c_in != c.end() && c_in->second >= kMinShallowChannels &&
                      static_cast<std::uint64_t>(c_in->second) % 8 == 0;
  const bool half = dtype == DType::F16 || dtype == DType::BF16;
  if (!plain || !pieces || !half || c_out == c.end()) return {};
  dsl::TuningConfig config{{kPointwiseKnob, 1}};
  if (c_in->second < kMinChannels) config[kWidthKnob] = gemm::warpgroup::kBN / 4;
  if (gemm::warpgroup::persistent_pays(pixels, c_out->second, c_in->second, 2)) {
    config[kPersistentKnob] = 1;
  }
  return config;
}

/// The launch constant `name`, 0 where the launch lacks it.
inline double constant_or_zero(const dsl::LaunchConstants& c, const char* name) {
  const auto found = c.find(name);
  return found == c.end() ? 0 : found->second;
}

/// The rule of iron_conv2d's dense forms.
inline dsl::TuningConfig prefer_pointwise_2d(DType dtype, const dsl::LaunchConstants& c) {
  return pointwise_when(
      dtype, c,
      constants_are(c, {"kh", "kw", "stride_h", "stride_w", "group_count"}, {"pad_h", "pad_w"}),
      constant_or_zero(c, "batch") * constant_or_zero(c, "h") * constant_or_zero(c, "w"));
}
/// The rule of iron_conv1d.
inline dsl::TuningConfig prefer_pointwise_1d(DType dtype, const dsl::LaunchConstants& c) {
  return pointwise_when(dtype, c,
                        constants_are(c, {"kernel_size", "stride", "group_count"}, {"padding"}),
                        constant_or_zero(c, "batch") * constant_or_zero(c, "length"));
}

/// The knobs, the path off by default, with a form's rule: `pointwise`, the height and width of
/// its tile (iron_gemm_warpgroup_nk's `bm` and `bn`), whether its groups are persistent (its
/// `persistent`) and how many a multiprocessor holds (its `resident`); nothing changes under the
/// tiles.
inline dsl::TuningSpace pointwise_tuning(dsl::TuningRule rule) {
  using gemm::warpgroup::kBM;
  using gemm::warpgroup::kBN;
  return dsl::TuningSpace{}
      .knob(kPointwiseKnob, {0, 1})
      .knob(kHeightKnob, {kBM, kBM / 2})
      .knob(kWidthKnob, {kBN, kBN / 2, kBN / 4})
      .knob(kPersistentKnob, {0, 1})
      .knob(kResidentKnob, {1, 2})
      .prefer(rule);
}

/// The pointwise product's shape: the height, width, persistence and residency knobs', the rest
/// gemm's defaults.
inline gemm::warpgroup::Shape pointwise_shape() {
  gemm::warpgroup::Shape shape;
  shape.bm = dsl::tuned(kHeightKnob);
  shape.bn = dsl::tuned(kWidthKnob);
  shape.persistent = dsl::tuned(kPersistentKnob) == 1;
  shape.resident = dsl::tuned(kResidentKnob);
  return shape;
}

/// Declares the pointwise path's dispatch, grid and contract, gemm::warpgroup::declare's for out
/// [pixels, c_out] (pointwise_shape; the contract's expressions) with c_in as its k, and
/// requires of every launch the plain 1×1: each constexpr of `ones` at most 1 and of `zeros` at
/// most 0.
template <class T>
void declare_pointwise(const std::string& pixels, const dsl::Constexpr<dsl::u32>& c_in,
                       std::initializer_list<dsl::Constexpr<dsl::u32>> ones,
                       std::initializer_list<dsl::Constexpr<dsl::u32>> zeros) {
  using namespace iron::dsl;
  gemm::warpgroup::declare<T>(pointwise_shape(), c_in, pixels, "c_out");
  for (const auto& c : ones) require_at_most(c, "1");
  for (const auto& c : zeros) require_at_most(c, "0");
}

/// The pointwise launch over `pixels` output pixels, when the knob is on for this dtype
/// (gemm::warpgroup::geometry of out [pixels, c_out]).
inline std::optional<dsl::Geometry> pointwise_geometry(const dsl::GeometryQuery& q,
                                                       std::uint64_t pixels) {
  const bool half = q.dtype == DType::F16 || q.dtype == DType::BF16;
  if (!half || dsl::tuned(kPointwiseKnob) != 1) return std::nullopt;
  const gemm::warpgroup::Shape shape = pointwise_shape();
  dsl::GeometryQuery product = q;
  product.constants["m"] = static_cast<double>(pixels);
  product.constants["n"] = static_cast<double>(q.constant("c_out"));
  return gemm::warpgroup::geometry(product, shape.bm, shape.bn, shape.persistent, shape.resident);
}

/// out [pixels, c_out] ← value(channel, Σ_ci x[pixel, ci] · weight[channel, ci]) rounded to T,
/// this group's tile of it (pointwise_shape).
template <class T, class Value>
void pointwise_product(const dsl::Tensor<T>& x, const dsl::Tensor<T>& weight,
                       const dsl::Out<T>& out, const dsl::Expr<dsl::u32>& pixels, const Shape& s,
                       Value&& value) {
  using namespace iron::dsl;
  gemm::warpgroup::tile_product(
      x, weight, pixels, s.c_out, s.c_in,
      [&](const Expr<u32>& r, const Expr<u32>& c, const Expr<f32>& sum) {
        store(out[r * s.c_out + c], cast<T>(value(c, sum)));
      },
      pointwise_shape());
}

}  // namespace iron::kernels::convolution
