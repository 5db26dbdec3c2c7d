/// iron_vision_resize_normalize_{bilinear,bicubic}[_aa]_{chw,nhwc}: a batch of u8 RGB images
/// resized and normalized for a vision encoder in one pass,
/// out[b, c, y, x] = (resize(image[b, :, :, c])[y, x] / 255 − mean[c]) / std_dev[c].
///
/// The resize is torch.nn.functional.interpolate's with align_corners=False (half-pixel
/// centers), mode bilinear or bicubic, antialias off or on (`_aa`); the weights of each axis are
/// kernels/vision/resize_filter.hpp's. The 2-D weight of input (i, j) for output (y, x) is the
/// product of the axes' weights, each axis normalized to sum 1 (as PyTorch's antialias path
/// does; without antialias the weights already sum to 1). The resize is computed on the exact
/// u8 values, so the order of resize and normalization does not matter, and nothing is clamped:
/// bicubic may overshoot [0, 255] as PyTorch's float path does. An output of the input's size
/// is the normalization alone (every weight 1 or 0).
///
/// ## Error bound
/// Absolute, per element: ρ_x·ρ_y·(E_x + E_y + γ_(2·K_x + 2·K_y + 6)) + γ_3·(ρ_x·ρ_y +
/// |mean[c]|), divided by std_dev[c], then the rounding to T. For each axis, K is the most
/// taps of an output, ρ ≥ 1 the largest Σ|w| / Σw of an output's weights (1 but for Keys'
/// negative lobes), W the smallest sum of an output's raw weights, and E = K·(1.5·δ + γ_48) / W
/// the error of the normalized weights: a filter argument computed in f32 errs by δ = u·(3·in +
/// 2·support + 8) / max(s, 1) (the f32 scale in / out, the center or source coordinate and the
/// subtraction of the index each round once; u = 2^-24), both filters' slopes are at most 1.5,
/// and evaluating a filter rounds at most 48 times its size. γ_(2·K_x + 2·K_y + 6) covers the
/// f32 sums of the taps and the weights, γ_3 the scaling by 1/255, the mean and the std. The u8
/// inputs are exact.
///
/// ## How it runs
/// A group owns a tile of kRows = 8 output rows by tpg output columns of one image, a thread an
/// output column and its 3 channels (kernels/vision/resize_tile.hpp). The horizontal pass runs
/// once per input row and tile, not once per output row, and the vertical weights fold each
/// summed row into the 8 rows' 24 accumulators. On the staged path (any tile that fits its
/// buffers: downscales up to about 9× along either axis, more without antialias) the group first
/// tabulates both axes' weights in threadgroup memory, lists the input rows some output row
/// weighs (a plain resize reads only those), and streams those rows' byte segments in with
/// 16-byte asynchronous copies, kBatch rows a stage, one stage in flight while the last is
/// summed from threadgroup memory. Other tiles take the direct path: weights evaluated per tap,
/// bytes read from global memory. Threads past the right edge compute the last column and store
/// nothing.
///
/// ## Layout
/// - `image   [batch, height, width, 3]` u8 (HWC, RGB)
/// - `mean    [3]` f32, `std_dev [3]` f32
/// - `out     [batch, 3, out_h, out_w]` T (`_chw`) or `[batch, out_h, out_w, 3]` T (`_nhwc`)
///
/// ## Dispatch
/// Tiled: ceil(out_w / tpg) × ceil(out_h / 8) × batch groups, tpg a multiple of 32 up to 64
/// (a column a thread: the staged path's weight table and row segments hold 64 columns).
#include <array>
#include <iron/iron.hpp>
#include <string>
#include <vector>

#include "resize_filter.hpp"
#include "resize_tile.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace vision {
enum class ImageLayout { Chw, Nhwc };
}  // namespace vision

IRON_KERNEL_TEMPLATE(iron_vision_resize_normalize,
                     (vision::ResizeFilter FILTER, vision::Antialias AA,
                      vision::ImageLayout LAYOUT),
                     (Tensor<u8> image, Tensor<f32> mean, Tensor<f32> std_dev, Out<T> out,
                      Constexpr<u32> batch, Constexpr<u32> height, Constexpr<u32> width,
                      Constexpr<u32> out_h, Constexpr<u32> out_w)) {
  using Taps = vision::AxisTaps<FILTER, AA>;
  constexpr u32 kRows = vision::kRows;
  constexpr bool kChw = LAYOUT == vision::ImageLayout::Chw;
  dispatch(tiled, {multiple_of(32), at_most(vision::kMaxCols)});
  grid("[ceil_div(out_w, tpg), ceil_div(out_h, " + std::to_string(kRows) + "), batch]");
  layout(image, "[batch, height, width, 3]");
  layout(mean, "[3]");
  layout(std_dev, "[3]");
  layout(out, kChw ? "[batch, 3, out_h, out_w]" : "[batch, out_h, out_w, 3]");
  auto b = program_id<2>();
  auto tid = thread_id<0>();
  auto x0 = program_id<0>() * group_size<0>();
  auto x = x0 + tid;
  auto y0 = program_id<1>() * kRows;
  const Taps col(min(x, out_w - 1u), width, out_w);
  std::vector<Taps> rows;
  for (u32 k = 0; k < kRows; ++k) rows.emplace_back(min(y0 + k, out_h - 1u), height, out_h);

  Regs<f32, std::size_t{3} * kRows> acc(0.0f);
  Regs<f32, kRows> row_sum(0.0f);
  Var<f32> col_sum = 0.0f;
  const vision::ResizeTile<FILTER, AA> tile{
      image, b, height, width, batch * height * width * 3u, tid, col, rows, acc, row_sum, col_sum};
  // The staged path when the tile's byte segment, every column's taps and the rows reached fit
  // its buffers (the same answer in every thread of the group).
  const Taps first_col(x0, width, out_w);
  const Taps last_col(min(x0 + group_size<0>() - 1u, out_w - 1u), width, out_w);
  auto px0 = first_col.first;
  auto px_end = last_col.last + 1u;
  auto taps = col.last + 1u - col.first;
  auto most_taps = AA == vision::Antialias::On ? reduce_max(taps) : taps;
  auto fits = (px_end - px0) * 3u + 15u <= vision::kPitch && most_taps <= vision::kMaxTaps<AA> &&
              rows[kRows - 1].last + 1u - rows[0].first <= vision::kMaxSpan;
  IRON_IF(fits) { tile.staged(px0, px_end); }
  IRON_ELSE { tile.direct(); }

  std::array<Expr<f32>, 3> mu;
  std::array<Expr<f32>, 3> sigma;
  for (u32 c = 0; c < 3; ++c) {
    mu[c] = load(mean[c]);
    sigma[c] = load(std_dev[c]);
  }
  for (u32 k = 0; k < kRows; ++k) {
    auto y = y0 + k;
    auto total = col_sum * row_sum[k];
    IRON_IF(x < out_w && y < out_h) {
      for (u32 c = 0; c < 3; ++c) {
        auto value = (acc[3 * k + c] / total / 255.0f - mu[c]) / sigma[c];
        auto at =
            kChw ? ((b * 3u + c) * out_h + y) * out_w + x : ((b * out_h + y) * out_w + x) * 3u + c;
        store(out[at], cast<T>(value));
      }
    }
  }
}

IRON_KERNEL_VARIANT(iron_vision_resize_normalize, bilinear_chw, vision::ResizeFilter::Bilinear,
                    vision::Antialias::Off, vision::ImageLayout::Chw);
IRON_KERNEL_VARIANT(iron_vision_resize_normalize, bilinear_nhwc, vision::ResizeFilter::Bilinear,
                    vision::Antialias::Off, vision::ImageLayout::Nhwc);
IRON_KERNEL_VARIANT(iron_vision_resize_normalize, bilinear_aa_chw, vision::ResizeFilter::Bilinear,
                    vision::Antialias::On, vision::ImageLayout::Chw);
IRON_KERNEL_VARIANT(iron_vision_resize_normalize, bilinear_aa_nhwc, vision::ResizeFilter::Bilinear,
                    vision::Antialias::On, vision::ImageLayout::Nhwc);
IRON_KERNEL_VARIANT(iron_vision_resize_normalize, bicubic_chw, vision::ResizeFilter::Bicubic,
                    vision::Antialias::Off, vision::ImageLayout::Chw);
IRON_KERNEL_VARIANT(iron_vision_resize_normalize, bicubic_nhwc, vision::ResizeFilter::Bicubic,
                    vision::Antialias::Off, vision::ImageLayout::Nhwc);
IRON_KERNEL_VARIANT(iron_vision_resize_normalize, bicubic_aa_chw, vision::ResizeFilter::Bicubic,
                    vision::Antialias::On, vision::ImageLayout::Chw);
IRON_KERNEL_VARIANT(iron_vision_resize_normalize, bicubic_aa_nhwc, vision::ResizeFilter::Bicubic,
                    vision::Antialias::On, vision::ImageLayout::Nhwc);

namespace vision {
/// Groups of up to kMaxCols threads (one column each) across the output row, 8 rows a group.
inline Geometry resize_geometry(const GeometryQuery& q) {
  const auto tpg = q.threads_per_group(whole_simdgroups(q.constant("out_w"), kMaxCols));
  return {{tile_count(q.constant("out_w"), tpg), tile_count(q.constant("out_h"), kRows),
           static_cast<std::uint32_t>(q.constant("batch"))},
          {tpg, 1, 1}};
}
}  // namespace vision

IRON_GEOMETRY(iron_vision_resize_normalize_bilinear_chw) { return vision::resize_geometry(q); }
IRON_GEOMETRY(iron_vision_resize_normalize_bilinear_nhwc) { return vision::resize_geometry(q); }
IRON_GEOMETRY(iron_vision_resize_normalize_bilinear_aa_chw) { return vision::resize_geometry(q); }
IRON_GEOMETRY(iron_vision_resize_normalize_bilinear_aa_nhwc) { return vision::resize_geometry(q); }
IRON_GEOMETRY(iron_vision_resize_normalize_bicubic_chw) { return vision::resize_geometry(q); }
IRON_GEOMETRY(iron_vision_resize_normalize_bicubic_nhwc) { return vision::resize_geometry(q); }
IRON_GEOMETRY(iron_vision_resize_normalize_bicubic_aa_chw) { return vision::resize_geometry(q); }
IRON_GEOMETRY(iron_vision_resize_normalize_bicubic_aa_nhwc) { return vision::resize_geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <algorithm>
#include <cmath>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <utility>

namespace iron::kernels {

namespace {

using vision::Antialias;
using vision::ImageLayout;
using vision::ResizeFilter;

/// CLIP's normalization (OpenAI CLIP, LLaVA).
const std::vector<float> kClipMean = {0.48145466f, 0.4578275f, 0.40821073f};
const std::vector<float> kClipStd = {0.26862954f, 0.26130258f, 0.27577711f};

/// Keys' cubic convolution kernel with parameter a, from its definition.
double keys(double x, double a) {
  x = std::abs(x);
  if (x < 1.0) return (a + 2.0) * x * x * x - (a + 3.0) * x * x + 1.0;
  if (x < 2.0) return a * x * x * x - 5.0 * a * x * x + 8.0 * a * x - 4.0 * a;
  return 0.0;
}

/// One axis of the resize for every output coordinate: its (input index, weight) taps,
/// normalized to sum 1, and what the error bound needs of the axis.
struct Axis {
  std::vector<std::vector<std::pair<std::size_t, double>>> taps;
  std::size_t most_taps = 0;    ///< K
  double ratio = 1.0;           ///< ρ: the largest Σ|w| / Σw
  double least_sum = 1e300;     ///< W: the smallest sum of raw weights
  double argument_error = 0.0;  ///< δ
};

/// PyTorch's interpolate weights (align_corners=False) of `in` inputs resized to `out`, in
/// double: the source coordinate (o + 0.5)·in/out − 0.5 with clamped neighbours without
/// antialias; with it, the filter stretched by max(in/out, 1) over the window around the center
/// (o + 0.5)·in/out, the pixels outside the image left out.
Axis resize_axis(std::size_t in, std::size_t out, ResizeFilter filter, Antialias aa) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double stretch = aa == Antialias::On ? std::max(scale, 1.0) : 1.0;
  const double half = filter == ResizeFilter::Bilinear ? 1.0 : 2.0;
  const auto last = static_cast<std::int64_t>(in) - 1;
  Axis axis;
  axis.argument_error =
      std::ldexp(3.0 * static_cast<double>(in) + 2.0 * half * stretch + 8.0, -24) / stretch;
  for (std::size_t o = 0; o < out; ++o) {
    std::vector<std::pair<std::size_t, double>> taps;
    const double at = (static_cast<double>(o) + 0.5) * scale;
    if (aa == Antialias::On) {
      // The window's ends are truncated, not rounded, as PyTorch computes them.
      const auto lo = std::max<std::int64_t>(
          static_cast<std::int64_t>(std::trunc(at - half * stretch + 0.5)), 0);
      const auto hi = std::min<std::int64_t>(
          static_cast<std::int64_t>(std::trunc(at + half * stretch + 0.5)), last + 1);
      for (auto i = lo; i < hi; ++i) {
        const double x = (static_cast<double>(i) - at + 0.5) / stretch;
        const double w =
            filter == ResizeFilter::Bilinear ? std::max(1.0 - std::abs(x), 0.0) : keys(x, -0.5);
        taps.emplace_back(static_cast<std::size_t>(i), w);
      }
    } else if (filter == ResizeFilter::Bilinear) {
      const double src = std::max(at - 0.5, 0.0);
      const auto i0 = static_cast<std::int64_t>(std::floor(src));
      const double l = src - static_cast<double>(i0);
      taps.emplace_back(static_cast<std::size_t>(i0), 1.0 - l);
      taps.emplace_back(static_cast<std::size_t>(std::min(i0 + 1, last)), l);
    } else {
      const double src = at - 0.5;
      const double f = std::floor(src);
      for (std::int64_t k = -1; k <= 2; ++k) {
        const auto i = std::clamp(static_cast<std::int64_t>(f) + k, std::int64_t{0}, last);
        taps.emplace_back(static_cast<std::size_t>(i),
                          keys(src - (f + static_cast<double>(k)), -0.75));
      }
    }
    double sum = 0.0;
    double abs_sum = 0.0;
    for (const auto& [i, w] : taps) {
      sum += w;
      abs_sum += std::abs(w);
    }
    for (auto& tap : taps) tap.second /= sum;
    axis.most_taps = std::max(axis.most_taps, taps.size());
    axis.ratio = std::max(axis.ratio, abs_sum / sum);
    axis.least_sum = std::min(axis.least_sum, sum);
    axis.taps.push_back(std::move(taps));
  }
  return axis;
}

/// E of the error bound: the error of an axis's normalized weights.
double weight_error(const Axis& a) {
  namespace tol = testing::tolerance;
  return static_cast<double>(a.most_taps) * (1.5 * a.argument_error + tol::gamma(48)) / a.least_sum;
}

struct ResizeCase {
  std::size_t batch, height, width, out_h, out_w;
};

/// The definition: each output the weighted sum of the input pixels over both axes' taps, then
/// scaled to [0, 1] and normalized, in the layout asked for.
std::vector<float> resize_oracle(const std::vector<std::uint32_t>& image, const ResizeCase& s,
                                 const Axis& ys, const Axis& xs, ImageLayout layout) {
  std::vector<float> out(s.batch * 3 * s.out_h * s.out_w);
  for (std::size_t b = 0; b < s.batch; ++b) {
    for (std::size_t y = 0; y < s.out_h; ++y) {
      for (std::size_t x = 0; x < s.out_w; ++x) {
        for (std::size_t c = 0; c < 3; ++c) {
          double v = 0.0;
          for (const auto& [i, wi] : ys.taps[y]) {
            for (const auto& [j, wj] : xs.taps[x]) {
              v += wi * wj * image[((b * s.height + i) * s.width + j) * 3 + c];
            }
          }
          const double normalized = (v / 255.0 - kClipMean[c]) / kClipStd[c];
          const std::size_t at = layout == ImageLayout::Chw
                                     ? ((b * 3 + c) * s.out_h + y) * s.out_w + x
                                     : ((b * s.out_h + y) * s.out_w + x) * 3 + c;
          out[at] = static_cast<float>(normalized);
        }
      }
    }
  }
  return out;
}

/// The kernel of a filter, antialias setting and layout:
/// iron_vision_resize_normalize_{bilinear,bicubic}[_aa]_{chw,nhwc}.
std::string resize_kernel(ResizeFilter filter, Antialias aa, ImageLayout layout) {
  return std::string("iron_vision_resize_normalize_") +
         (filter == ResizeFilter::Bilinear ? "bilinear" : "bicubic") +
         (aa == Antialias::On ? "_aa" : "") + (layout == ImageLayout::Chw ? "_chw" : "_nhwc");
}

testing::TestSetup resize_setup(ResizeFilter filter, Antialias aa, ImageLayout layout,
                                const ResizeCase& s, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const auto image = rng.integers(s.batch * s.height * s.width * 3, 0, 256);
  const Axis ys = resize_axis(s.height, s.out_h, filter, aa);
  const Axis xs = resize_axis(s.width, s.out_w, filter, aa);
  const double rho = xs.ratio * ys.ratio;
  const double sums = tol::gamma(2 * xs.most_taps + 2 * ys.most_taps + 6);
  const double abs_err =
      (rho * (weight_error(xs) + weight_error(ys) + sums) +
       tol::gamma(3) * (rho + *std::max_element(kClipMean.begin(), kClipMean.end()))) /
      *std::min_element(kClipStd.begin(), kClipStd.end());
  testing::TestSetup setup(resize_kernel(filter, aa, layout), dt);
  setup.input_u32("image", image)
      .input("mean", kClipMean)
      .input("std_dev", kClipStd)
      .output("out", s.batch * 3 * s.out_h * s.out_w)
      .constant("batch", static_cast<double>(s.batch))
      .constant("height", static_cast<double>(s.height))
      .constant("width", static_cast<double>(s.width))
      .constant("out_h", static_cast<double>(s.out_h))
      .constant("out_w", static_cast<double>(s.out_w))
      .expect("out", resize_oracle(image, s, ys, xs, layout))
      .tolerance(tol::stored(dt, abs_err, 0.0));
  return setup.grid(testing::geometry_grid(setup));
}

/// Bench: a batch of 32 1080p frames to the encoder's size. Bytes: the input rows some output
/// reads (whole rows: the columns a row's taps read are closer than a 32-byte sector), the
/// output written once.
bench::BenchSetup resize_bench(ResizeFilter filter, Antialias aa, ImageLayout layout,
                               std::size_t out_size, DType dt) {
  const ResizeCase s{32, 1080, 1920, out_size, out_size};
  const Axis ys = resize_axis(s.height, s.out_h, filter, aa);
  std::vector<bool> read(s.height, false);
  for (const auto& taps : ys.taps) {
    for (const auto& [i, w] : taps) read[i] = read[i] || w != 0.0;
  }
  const auto rows_read = static_cast<std::size_t>(std::count(read.begin(), read.end(), true));
  const std::size_t outputs = s.batch * 3 * s.out_h * s.out_w;
  bench::BenchSetup setup(resize_kernel(filter, aa, layout), dt);
  setup.random_u32("image", s.batch * s.height * s.width * 3, 0, 256)
      .input("mean", kClipMean)
      .input("std_dev", kClipStd)
      .output("out", outputs)
      .constant("batch", static_cast<double>(s.batch))
      .constant("height", static_cast<double>(s.height))
      .constant("width", static_cast<double>(s.width))
      .constant("out_h", static_cast<double>(s.out_h))
      .constant("out_w", static_cast<double>(s.out_w));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(s.batch * rows_read * s.width * 3 + 24 + outputs * dtype_size(dt))
      .peer("vision_resize_normalize",
            {{"batch", static_cast<double>(s.batch)},
             {"height", static_cast<double>(s.height)},
             {"width", static_cast<double>(s.width)},
             {"out_h", static_cast<double>(s.out_h)},
             {"out_w", static_cast<double>(s.out_w)},
             {"bicubic", filter == ResizeFilter::Bicubic ? 1.0 : 0.0},
             {"antialias", aa == Antialias::On ? 1.0 : 0.0},
             {"channels_last", layout == ImageLayout::Nhwc ? 1.0 : 0.0}});
}

// The shapes: a downscale by about 3.5 along both axes (odd sizes, two images), an upscale, a
// downscale along one axis with an upscale along the other, the input's own size (the
// normalization alone), and one pixel in and out.
constexpr ResizeCase kDownscale{2, 45, 67, 13, 19};
constexpr ResizeCase kUpscale{1, 7, 5, 16, 13};
constexpr ResizeCase kMixed{1, 20, 6, 7, 15};
constexpr ResizeCase kSameSize{2, 9, 11, 9, 11};
constexpr ResizeCase kOnePixelIn{1, 1, 1, 3, 2};
constexpr ResizeCase kOnePixelOut{1, 5, 4, 1, 1};
// Several column tiles, the last one partial: an odd width downscaled by about 2.2 (rows of 453
// bytes, not a multiple of 16), and an odd width upscaled by about 2.7.
constexpr ResizeCase kWideDown{2, 12, 151, 5, 70};
constexpr ResizeCase kWideUp{1, 6, 37, 9, 100};
// A downscale past the staged path's buffers (a tile's columns span more bytes than a staged
// row holds; with antialias also more taps and rows than its tables): the direct path.
constexpr ResizeCase kFarDown{1, 130, 1000, 3, 4};

}  // namespace

IRON_TEST(iron_vision_resize_normalize_bilinear_chw, downscale_45x67_to_13x19, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Chw, kDownscale, dt,
                      rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_chw, upscale_7x5_to_16x13, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Chw, kUpscale, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_chw, same_size_normalizes_only, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Chw, kSameSize, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_chw, one_pixel_in, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Chw, kOnePixelIn, dt,
                      rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_nhwc, downscale_45x67_to_13x19, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Nhwc, kDownscale, dt,
                      rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_nhwc, mixed_20x6_to_7x15, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Nhwc, kMixed, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_aa_chw, downscale_45x67_to_13x19, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Chw, kDownscale, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_aa_chw, upscale_7x5_to_16x13, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Chw, kUpscale, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_aa_chw, same_size_normalizes_only, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Chw, kSameSize, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_aa_chw, one_pixel_out, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Chw, kOnePixelOut, dt,
                      rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_aa_nhwc, downscale_45x67_to_13x19, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Nhwc, kDownscale, dt,
                      rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_aa_nhwc, mixed_20x6_to_7x15, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Nhwc, kMixed, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_chw, downscale_45x67_to_13x19, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Chw, kDownscale, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_chw, upscale_7x5_to_16x13, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Chw, kUpscale, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_chw, same_size_normalizes_only, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Chw, kSameSize, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_chw, one_pixel_in, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Chw, kOnePixelIn, dt,
                      rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_nhwc, downscale_45x67_to_13x19, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Nhwc, kDownscale, dt,
                      rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_nhwc, mixed_20x6_to_7x15, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Nhwc, kMixed, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_aa_chw, downscale_45x67_to_13x19, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Chw, kDownscale, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_aa_chw, upscale_7x5_to_16x13, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Chw, kUpscale, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_aa_chw, same_size_normalizes_only, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Chw, kSameSize, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_aa_chw, one_pixel_out, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Chw, kOnePixelOut, dt,
                      rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_aa_nhwc, downscale_45x67_to_13x19, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Nhwc, kDownscale, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_aa_nhwc, mixed_20x6_to_7x15, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Nhwc, kMixed, dt, rng);
}

// The column tiles, the unaligned rows and the direct path, for each filter.
IRON_TEST(iron_vision_resize_normalize_bilinear_chw, wide_151_to_70, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Chw, kWideDown, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_nhwc, upscale_37_to_100, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Nhwc, kWideUp, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_chw, far_downscale_direct, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Chw, kFarDown, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_aa_chw, wide_151_to_70, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Chw, kWideDown, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_aa_nhwc, upscale_37_to_100, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Nhwc, kWideUp, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bilinear_aa_chw, far_downscale_direct, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Chw, kFarDown, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_chw, wide_151_to_70, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Chw, kWideDown, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_nhwc, upscale_37_to_100, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Nhwc, kWideUp, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_nhwc, far_downscale_direct, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Nhwc, kFarDown, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_aa_chw, wide_151_to_70, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Chw, kWideDown, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_aa_nhwc, upscale_37_to_100, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Nhwc, kWideUp, dt, rng);
}
IRON_TEST(iron_vision_resize_normalize_bicubic_aa_nhwc, far_downscale_direct, F32, F16, BF16) {
  return resize_setup(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Nhwc, kFarDown, dt, rng);
}

// CLIP / LLaVA (336) and ViT (224) inputs from 1080p frames.
IRON_BENCH(iron_vision_resize_normalize_bilinear_chw, b32_1080x1920_to_336, BF16) {
  return resize_bench(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Chw, 336, dt);
}
IRON_BENCH(iron_vision_resize_normalize_bilinear_nhwc, b32_1080x1920_to_336, BF16) {
  return resize_bench(ResizeFilter::Bilinear, Antialias::Off, ImageLayout::Nhwc, 336, dt);
}
IRON_BENCH(iron_vision_resize_normalize_bilinear_aa_chw, b32_1080x1920_to_336, F32, BF16) {
  return resize_bench(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Chw, 336, dt);
}
IRON_BENCH(iron_vision_resize_normalize_bilinear_aa_chw, b32_1080x1920_to_224, BF16) {
  return resize_bench(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Chw, 224, dt);
}
IRON_BENCH(iron_vision_resize_normalize_bilinear_aa_nhwc, b32_1080x1920_to_336, BF16) {
  return resize_bench(ResizeFilter::Bilinear, Antialias::On, ImageLayout::Nhwc, 336, dt);
}
IRON_BENCH(iron_vision_resize_normalize_bicubic_chw, b32_1080x1920_to_336, BF16) {
  return resize_bench(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Chw, 336, dt);
}
IRON_BENCH(iron_vision_resize_normalize_bicubic_nhwc, b32_1080x1920_to_336, BF16) {
  return resize_bench(ResizeFilter::Bicubic, Antialias::Off, ImageLayout::Nhwc, 336, dt);
}
IRON_BENCH(iron_vision_resize_normalize_bicubic_aa_chw, b32_1080x1920_to_336, BF16) {
  return resize_bench(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Chw, 336, dt);
}
IRON_BENCH(iron_vision_resize_normalize_bicubic_aa_chw, b32_1080x1920_to_224, BF16) {
  return resize_bench(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Chw, 224, dt);
}
IRON_BENCH(iron_vision_resize_normalize_bicubic_aa_nhwc, b32_1080x1920_to_336, BF16) {
  return resize_bench(ResizeFilter::Bicubic, Antialias::On, ImageLayout::Nhwc, 336, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
