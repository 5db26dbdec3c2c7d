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
/// On CUDA cores, memory-bound. The channels are cut into ⌈c / 128⌉ slices of equal size (whole
/// vectors), one a row of groups along y. A group first copies its slice's K² weights into
/// threadgroup memory as f32, tap-major, so a thread reads a tap's weights for its channels in one
/// 16-byte access; then, in a grid-stride loop over its slice, each item is kOut = 4 consecutive
/// outputs of a row for V = 4 channels (one 8-byte access in f16/bf16, 16 in f32, when c is a
/// multiple of 4; V = 2 under the knob `vector`; else one channel). With stride 1 or 2 and
/// dilation 1 an item holds R such rows of outputs (the knob `rows`) and loads each input vector
/// they need once, multiplying it into every output and tap that reads it (so neighbouring output
/// rows do not each fetch their shared input rows from L2), in the order of its input rows or of
/// its taps (the knob `order`); other strides and dilations take items of one row whose kernel
/// rows are a loop, an input vector a tap and output. The kernels' rule picks the knobs by dtype
/// and stride. Padding is a select, never
/// a branch (a tap in the padding reads a pixel of the image and counts zero), so all of an item's
/// loads can be in flight together. The groups are few enough (four a multiprocessor, shared
/// among the slices) that each reuses its staged weights for many items.
///
/// ## Layout
/// - `x [batch, h, w, c]` T; `weight [c, K, K]` T (PyTorch's [c, 1, K, K])
/// - `out [batch, oh, ow, c]` T, oh = (h + 2·padding − dilation·(K − 1) − 1) / stride + 1, ow
///   alike
///
/// ## Dispatch
/// Tiled: ⌈c / 128⌉ groups along y; along x any count up to one thread per item of one output row
/// (batch · oh · ⌈ow / 4⌉ · c; a grid-stride loop covers the rest), groups of a multiple of 32
/// threads up to 256.
#include <algorithm>
#include <array>
#include <iron/iron.hpp>
#include <optional>
#include <string>
#include <vector>

namespace iron::kernels {
using namespace iron::dsl;

namespace depthwise {

inline constexpr u32 kOut = 4;      ///< consecutive outputs of a row per item
inline constexpr u32 kV = 4;        ///< channels per access on the vector path
inline constexpr u32 kSlice = 128;  ///< most channels a slice (a row of groups) holds
inline constexpr u32 kPitch =
    kSlice + kV;  ///< a tap's row of staged weights (4-way staging stores)
inline constexpr const char* kRowsKnob = "rows";      ///< output rows an item (stride 1 or 2)
inline constexpr const char* kGroupsKnob = "groups";  ///< groups a multiprocessor asked of ptxas
inline constexpr const char* kOrderKnob = "order";    ///< 1: an item's taps outermost, else rows
inline constexpr const char* kVectorKnob = "vector";  ///< channels a thread: kV or 2
inline constexpr const char* kInteriorKnob = "interior";  ///< 1: items inside skip the selects

/// The sizes the body reads.
struct Sizes {
  Expr<u32> batch, h, w, c, stride, pad, dil, oh, ow;
};

/// V channels' f32 values of x at padded column xp of an image row (row_inside: the row is not
/// padding), zero in the padding, where the load reads the image's first pixel instead.
template <u32 V, class T>
std::array<Expr<f32>, V> pixel(const Tensor<T>& x, const Sizes& s, const Expr<u32>& image_row,
                               const Expr<boolean>& row_inside, const Expr<u32>& xp,
                               const Expr<u32>& ch) {
  auto inside = row_inside && xp >= s.pad && xp < s.w + s.pad;
  auto at = select(inside, (image_row * s.w + max(xp, s.pad) - s.pad) * s.c + ch, ch);
  std::array<Expr<f32>, V> v;
  if constexpr (V == 1) {
    v[0] = select(inside, cast<f32>(load(x[at])), Expr<f32>(0.0f));
  } else {
    const auto lanes = load_lanes<V>(x[at]);
    for (u32 e = 0; e < V; ++e) v[e] = select(inside, cast<f32>(lanes[e]), Expr<f32>(0.0f));
  }
  return v;
}

/// V channels' f32 values of x at element `at`, a pixel inside the image.
template <u32 V, class T>
std::array<Expr<f32>, V> inner_pixel(const Tensor<T>& x, const Expr<u32>& at) {
  std::array<Expr<f32>, V> v;
  if constexpr (V == 1) {
    v[0] = cast<f32>(load(x[at]));
  } else {
    const auto lanes = load_lanes<V>(x[at]);
    for (u32 e = 0; e < V; ++e) v[e] = cast<f32>(lanes[e]);
  }
  return v;
}

/// V staged f32 weights of tap `tap` for the slice's channels chl … chl + V.
template <u32 V>
std::array<Expr<f32>, V> tap_weights(const Shared<f32>& staged, const Expr<u32>& tap,
                                     const Expr<u32>& chl) {
  std::array<Expr<f32>, V> w;
  if constexpr (V == 1) {
    w[0] = load(staged[tap * kPitch + chl]);
  } else {
    w = load_lanes<V>(staged[tap * kPitch + chl]);
  }
  return w;
}

/// The slice [v0, v0 + sv) of the c / V vectors that this row of groups serves: the vectors
/// split as evenly as whole vectors allow among ⌈c / kSlice⌉ slices (at most kSlice channels
/// each).
struct Slice {
  Expr<u32> v0, sv;
};
template <u32 V>
Slice slice_of(const Sizes& s) {
  auto vectors = s.c / V;
  auto slices = (s.c + (kSlice - 1u)) / kSlice;
  auto y = program_id<1>();
  auto v0 = y * vectors / slices;
  return {v0, (y + 1u) * vectors / slices - v0};
}

/// Copies the slice's weights into `staged` as f32, tap-major (staged[tap · kPitch + channel of
/// the slice]); global reads in weight's order.
template <u32 K, u32 V, class T>
void stage_weights(const Tensor<T>& weight, const Shared<f32>& staged, const Slice& sl) {
  auto first = sl.v0 * V * (K * K);
  for (auto t : range(thread_id<0>(), sl.sv * V * (K * K), group_size<0>())) {
    auto chl = t / (K * K);
    auto tap = t % (K * K);
    store(staged[tap * kPitch + chl], cast<f32>(load(weight[first + t])));
  }
  barrier();
}

/// Stores an item's sums: output o of row `row` (b · oh + oy) from acc[first + o · V …] where the
/// column ox0 + o is inside the image.
template <u32 V, class T>
void store_outputs(const Out<T>& out, const Sizes& s, const std::vector<Var<f32>>& acc,
                   std::size_t first, const Expr<u32>& row, const Expr<u32>& ox0,
                   const Expr<u32>& ch) {
  for (u32 o = 0; o < kOut; ++o) {
    IRON_IF(ox0 + o < s.ow) {
      auto at = (row * s.ow + ox0 + o) * s.c + ch;
      if constexpr (V == 1) {
        store(out[at], cast<T>(acc[first + o].get()));
      } else {
        std::array<Expr<T>, V> values;
        for (u32 e = 0; e < V; ++e) values[e] = cast<T>(acc[first + o * V + e].get());
        store_lanes(out[at], values);
      }
    }
  }
}

/// One item of R output rows × kOut outputs of V channels (channel ch, the slice's chl) from
/// output row oy0 and column ox0 of image b, for a stride S and dilation D known at trace time:
/// each input row its outputs need ((R − 1)·S + (K − 1)·D + 1 of them) is loaded once, every tap
/// of every output row that uses it multiplied while it is in registers. At stride 1 an input row
/// is then read (R + K − 1) / R times, not K times as by items of one row (bench/NOTES.md §65).
/// kChecked: each input vector may lie in the padding (a select); else every one is inside.
template <u32 K, u32 V, u32 S, u32 D, u32 R, bool kTapsOuter, bool kChecked, class T>
void rolling_item(const Tensor<T>& x, const Shared<f32>& staged, const Out<T>& out, const Sizes& s,
                  const Expr<u32>& ch, const Expr<u32>& chl, const Expr<u32>& b,
                  const Expr<u32>& oy0, const Expr<u32>& ox0) {
  constexpr u32 kRows = (R - 1) * S + (K - 1) * D + 1;
  constexpr u32 kCols = (kOut - 1) * S + (K - 1) * D + 1;
  // acc[(q · kOut + o) · V + e]: output row oy0 + q, column ox0 + o, channel ch + e.
  std::vector<Var<f32>> acc;
  acc.reserve(std::size_t{R} * kOut * V);
  for (u32 a = 0; a < R * kOut * V; ++a) acc.emplace_back(0.0f);
  // Input row j's vectors, loaded where first used.
  using Row = std::array<std::array<Expr<f32>, V>, kCols>;
  std::array<std::optional<Row>, kRows> loaded;
  const auto row = [&](u32 j) -> const Row& {
    if (!loaded[j]) {
      auto yp = oy0 * S + j;
      Row px;
      if constexpr (kChecked) {
        auto row_inside = yp >= s.pad && yp < s.h + s.pad;
        auto image_row = b * s.h + max(yp, s.pad) - s.pad;
        for (u32 col = 0; col < kCols; ++col)
          px[col] = pixel<V>(x, s, image_row, row_inside, ox0 * S + col, ch);
      } else {
        auto first = ((b * s.h + yp - s.pad) * s.w + ox0 * S - s.pad) * s.c + ch;
        for (u32 col = 0; col < kCols; ++col) px[col] = inner_pixel<V>(x, first + col * s.c);
      }
      loaded[j] = px;
    }
    return *loaded[j];
  };
  // Output row q, tap (ky, kx): input row q·S + ky·D, its columns o·S + kx·D.
  const auto multiply = [&](u32 q, u32 ky, u32 kx, const std::array<Expr<f32>, V>& wk) {
    const Row& px = row(q * S + ky * D);
    for (u32 o = 0; o < kOut; ++o) {
      for (u32 e = 0; e < V; ++e) {
        auto& a = acc[(std::size_t{q} * kOut + o) * V + e];
        a = fma(px[o * S + kx * D][e], wk[e], a.get());
      }
    }
  };
  if constexpr (kTapsOuter) {
    // Each tap's weights read once; the input rows slide down with ky.
    for (u32 ky = 0; ky < K; ++ky) {
      for (u32 kx = 0; kx < K; ++kx) {
        const auto wk = tap_weights<V>(staged, Expr<u32>(ky * K + kx), chl);
        for (u32 q = 0; q < R; ++q) multiply(q, ky, kx, wk);
      }
    }
  } else {
    // Each input row in turn, into every output row and tap that reads it.
    for (u32 j = 0; j < kRows; ++j) {
      for (u32 q = 0; q < R; ++q) {
        if (j < q * S || (j - q * S) % D != 0 || (j - q * S) / D >= K) continue;
        const u32 ky = (j - q * S) / D;
        for (u32 kx = 0; kx < K; ++kx)
          multiply(q, ky, kx, tap_weights<V>(staged, Expr<u32>(ky * K + kx), chl));
      }
    }
  }
  for (u32 q = 0; q < R; ++q) {
    IRON_IF(oy0 + q < s.oh) {
      store_outputs<V>(out, s, acc, std::size_t{q} * kOut * V, b * s.oh + oy0 + q, ox0, ch);
    }
  }
}

/// The items of this row of groups for a stride S and dilation D known at trace time
/// (rolling_item); with kInterior, an item whose input vectors all lie inside the image takes a
/// body without selects (the branch is uniform across most warps: their items share a strip).
template <u32 K, u32 V, u32 S, u32 D, u32 R, bool kTapsOuter, bool kInterior, class T>
void rolling_outputs(const Tensor<T>& x, const Shared<f32>& staged, const Out<T>& out,
                     const Sizes& s, const Slice& sl) {
  constexpr u32 kRows = (R - 1) * S + (K - 1) * D + 1;
  constexpr u32 kCols = (kOut - 1) * S + (K - 1) * D + 1;
  auto strips = (s.ow + (kOut - 1u)) / kOut;
  auto chunks = (s.oh + (R - 1u)) / R;
  auto items = s.batch * chunks * strips * sl.sv;
  for (auto i : range(global_id<0>(), items, grid_threads<0>())) {
    auto chl = i % sl.sv * V;
    auto ch = sl.v0 * V + chl;
    auto rest = i / sl.sv;
    auto ox0 = rest % strips * kOut;
    auto chunk = rest / strips;  // b · chunks + oy0 / R
    auto oy0 = chunk % chunks * R;
    auto b = chunk / chunks;
    if constexpr (kInterior) {
      auto inside = oy0 * S >= s.pad && oy0 * S + kRows <= s.h + s.pad && ox0 * S >= s.pad &&
                    ox0 * S + kCols <= s.w + s.pad;
      IRON_IF(inside) {
        rolling_item<K, V, S, D, R, kTapsOuter, false>(x, staged, out, s, ch, chl, b, oy0, ox0);
      }
      IRON_ELSE {
        rolling_item<K, V, S, D, R, kTapsOuter, true>(x, staged, out, s, ch, chl, b, oy0, ox0);
      }
    } else {
      rolling_item<K, V, S, D, R, kTapsOuter, true>(x, staged, out, s, ch, chl, b, oy0, ox0);
    }
  }
}

/// The items of this row of groups for any stride and dilation: kOut outputs of a row for V
/// channels each, every tap's input vector loaded for each output.
template <u32 K, u32 V, class T>
void strided_outputs(const Tensor<T>& x, const Shared<f32>& staged, const Out<T>& out,
                     const Sizes& s, const Slice& sl) {
  auto strips = (s.ow + (kOut - 1u)) / kOut;
  auto items = s.batch * s.oh * strips * sl.sv;
  for (auto i : range(global_id<0>(), items, grid_threads<0>())) {
    auto chl = i % sl.sv * V;
    auto ch = sl.v0 * V + chl;
    auto rest = i / sl.sv;
    auto ox0 = rest % strips * kOut;
    auto row = rest / strips;  // b · oh + oy
    auto oy = row % s.oh;
    auto b = row / s.oh;
    // acc[o · V + e]: output o's sum for channel ch + e.
    std::vector<Var<f32>> acc;
    acc.reserve(std::size_t{kOut} * V);
    for (u32 a = 0; a < kOut * V; ++a) acc.emplace_back(0.0f);
    for (auto ky : range(0u, K)) {
      auto yp = oy * s.stride + ky * s.dil;
      auto row_inside = yp >= s.pad && yp < s.h + s.pad;
      auto image_row = b * s.h + max(yp, s.pad) - s.pad;
      for (u32 kx = 0; kx < K; ++kx) {
        const auto wk = tap_weights<V>(staged, ky * K + kx, chl);
        for (u32 o = 0; o < kOut; ++o) {
          const auto v =
              pixel<V>(x, s, image_row, row_inside, (ox0 + o) * s.stride + kx * s.dil, ch);
          for (u32 e = 0; e < V; ++e) acc[o * V + e] = fma(v[e], wk[e], acc[o * V + e].get());
        }
      }
    }
    store_outputs<V>(out, s, acc, 0, row, ox0, ch);
  }
}

/// The whole body for V channels an access: stage the slice's weights, then its items (R output
/// rows each where the stride is 1 or 2 and the dilation 1).
template <u32 K, u32 V, u32 R, bool kTapsOuter, bool kInterior, class T>
void convolve(const Tensor<T>& x, const Tensor<T>& weight, const Out<T>& out, const Sizes& s,
              const Shared<f32>& staged) {
  const Slice sl = slice_of<V>(s);
  stage_weights<K, V>(weight, staged, sl);
  IRON_IF(specialized(s.stride == 1u && s.dil == 1u)) {
    rolling_outputs<K, V, 1, 1, R, kTapsOuter, kInterior>(x, staged, out, s, sl);
  }
  IRON_ELSE {
    IRON_IF(specialized(s.stride == 2u && s.dil == 1u)) {
      rolling_outputs<K, V, 2, 1, R, kTapsOuter, kInterior>(x, staged, out, s, sl);
    }
    IRON_ELSE { strided_outputs<K, V>(x, staged, out, s, sl); }
  }
}

/// convolve with the knobs `rows` (R), `order` and `interior` in force.
template <u32 K, u32 V, class T>
void convolve_tuned(const Tensor<T>& x, const Tensor<T>& weight, const Out<T>& out, const Sizes& s,
                    const Shared<f32>& staged) {
  const auto with_interior = [&]<u32 R, bool kTapsOuter>() {
    if (tuned(kInteriorKnob) != 0) {
      convolve<K, V, R, kTapsOuter, true>(x, weight, out, s, staged);
    } else {
      convolve<K, V, R, kTapsOuter, false>(x, weight, out, s, staged);
    }
  };
  const auto with_order = [&]<u32 R>() {
    if (tuned(kOrderKnob) != 0) {
      with_interior.template operator()<R, true>();
    } else {
      with_interior.template operator()<R, false>();
    }
  };
  switch (tuned(kRowsKnob)) {
    case 2:
      with_order.template operator()<2>();
      break;
    case 4:
      with_order.template operator()<4>();
      break;
    default:
      with_order.template operator()<1>();
      break;
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
  dispatch(tiled, {multiple_of(32), at_most(256)});
  if (tuned(depthwise::kGroupsKnob) != 0) occupancy(tuned(depthwise::kGroupsKnob));
  grid("[<= ceil_div(batch * " + oh + " * ceil_div(" + ow + ", " + std::to_string(depthwise::kOut) +
       ") * c, tpg), ceil_div(c, " + std::to_string(depthwise::kSlice) + "), 1]");
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
  auto staged = shared<f32>(K * K * depthwise::kPitch);
  IRON_IF(specialized(c % depthwise::kV == 0u)) {
    if (tuned(depthwise::kVectorKnob) == 2) {
      depthwise::convolve_tuned<K, 2>(x, weight, out, s, staged);
    } else {
      depthwise::convolve_tuned<K, depthwise::kV>(x, weight, out, s, staged);
    }
  }
  IRON_ELSE { depthwise::convolve_tuned<K, 1>(x, weight, out, s, staged); }
}
IRON_KERNEL_VARIANT(iron_conv2d_depthwise, k3, 3);
IRON_KERNEL_VARIANT(iron_conv2d_depthwise, k5, 5);
IRON_KERNEL_VARIANT(iron_conv2d_depthwise, k7, 7);

namespace depthwise {
/// Groups of 256 threads, ⌈c / 128⌉ slices along y, and along x enough groups for the slice's
/// items but no more than four a multiprocessor in all (each group's staged weights then serve
/// many items).
inline Geometry geometry(const GeometryQuery& q, std::uint64_t k) {
  const auto span = [&](std::uint64_t size) {
    return (size + 2 * q.constant("padding") - q.constant("dilation") * (k - 1) - 1) /
               q.constant("stride") +
           1;
  };
  const std::uint64_t c = q.constant("c");
  const std::uint64_t v = tuned(kVectorKnob);
  const std::uint64_t vectors = c % kV == 0 ? c / v : c;
  const std::uint64_t slices = (c + kSlice - 1) / kSlice;
  const std::uint64_t slice_vectors = (vectors + slices - 1) / slices;
  const std::uint64_t stride = q.constant("stride");
  const bool rolling = (stride == 1 || stride == 2) && q.constant("dilation") == 1;
  const std::uint64_t rows = rolling ? tuned(kRowsKnob) : 1;
  const std::uint64_t items = q.constant("batch") * ((span(q.constant("h")) + rows - 1) / rows) *
                              ((span(q.constant("w")) + kOut - 1) / kOut) * slice_vectors;
  const std::uint32_t tpg = q.threads_per_group(256);
  const std::uint64_t resident = (4ull * q.device.multiprocessors + slices - 1) / slices;
  const std::uint64_t groups = std::min<std::uint64_t>(tile_count(items, tpg), resident);
  return {{static_cast<std::uint32_t>(groups), static_cast<std::uint32_t>(slices), 1}, {tpg, 1, 1}};
}

/// The rule of a K × K kernel: for f16 and bf16 launches of dilation 1, the fastest
/// configuration `iron tune` found for the benches on an H100 (bench/NOTES.md §65): at stride 1
/// 3×3 items of one row under four groups, those inside the image without selects; 5×5 two rows,
/// taps outermost; 7×7 four rows of two channels under two groups, taps outermost; at stride 2
/// 3×3 one row of two channels.
/// Anything else keeps the defaults (one row of four channels, no bound), which ptxas fits
/// without local memory in every dtype.
template <u32 K>
dsl::TuningConfig prefer_rows(DType dtype, const dsl::LaunchConstants& c) {
  const auto is = [&](const char* name, double value) {
    const auto it = c.find(name);
    return it != c.end() && it->second == value;
  };
  if (dtype_size(dtype) != 2 || !is("dilation", 1)) return {};
  if (is("stride", 1)) {
    if constexpr (K == 3) return {{kGroupsKnob, 4}, {kInteriorKnob, 1}};
    if constexpr (K == 5) return {{kRowsKnob, 2}, {kOrderKnob, 1}};
    if constexpr (K == 7)
      return {{kRowsKnob, 4}, {kGroupsKnob, 2}, {kOrderKnob, 1}, {kVectorKnob, 2}};
  }
  if (K == 3 && is("stride", 2)) return {{kVectorKnob, 2}};
  return {};
}

/// The knobs: `rows`, the output rows an item of a stride-1 or -2 launch holds (R · 4 · V f32
/// sums a thread), each input row read once for all of them; `groups`, the groups of 256 threads
/// a multiprocessor ptxas is asked to fit (0: no bound), which trades the loads it hoists for
/// groups in flight; `order`, whether an item's loop runs over its taps (each tap's weights read
/// once, the input rows loaded as the taps reach them) or its input rows (0); `vector`, the
/// channels a thread (V: 4, or 2 for half the registers a thread and twice the threads); and the
/// rule above.
template <u32 K>
TuningSpace tuning() {
  return TuningSpace{}
      .knob(kRowsKnob, {1, 2, 4})
      .knob(kGroupsKnob, {0, 1, 2, 3, 4})
      .knob(kOrderKnob, {0, 1})
      .knob(kVectorKnob, {kV, 2})
      .knob(kInteriorKnob, {0, 1})
      .prefer(&prefer_rows<K>);
}
}  // namespace depthwise

IRON_TUNING(iron_conv2d_depthwise_k3) { return depthwise::tuning<3>(); }
IRON_TUNING(iron_conv2d_depthwise_k5) { return depthwise::tuning<5>(); }
IRON_TUNING(iron_conv2d_depthwise_k7) { return depthwise::tuning<7>(); }
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

testing::TestSetup depthwise_setup(const Sizes& s, DType dt, testing::Rng& rng,
                                   const dsl::TuningConfig& config = {}) {
  namespace tol = testing::tolerance;
  const auto x = testing::round_through(rng.uniform(s.input(), -1.0f, 1.0f), dt);
  const auto weight = testing::round_through(rng.uniform(s.weights(), -1.0f, 1.0f), dt);
  const ProductExpected want = convolution::conv_oracle(x, weight, s);
  testing::TestSetup setup(depthwise_name(s.kw), dt, config);
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
// Past one slice of 128 channels: two slices of 17 vectors, and two of 65 and 66 single
// channels.
IRON_TEST(iron_conv2d_depthwise_k3, two_slices_1x5x7x136, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(1, 5, 136, 3, 1, 1), dt, rng);
}
IRON_TEST(iron_conv2d_depthwise_k3, two_slices_odd_1x4x4x131, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(1, 4, 131, 3, 2, 1), dt, rng);
}
// Wide rows with the padding on both sides: stride 1; strided and dilated.
IRON_TEST(iron_conv2d_depthwise_k3, wide_rows_1x3x21x8, F32, F16, BF16) {
  return depthwise_setup({1, 3, 21, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8}, dt, rng);
}
IRON_TEST(iron_conv2d_depthwise_k3, wide_strided_dilated_1x5x30x12, F32, F16, BF16) {
  return depthwise_setup({1, 5, 30, 12, 12, 3, 3, 2, 2, 2, 2, 2, 2, 12}, dt, rng);
}
// One group of 32 threads a slice: each thread loops over many items (and reuses its weights).
IRON_TEST(iron_conv2d_depthwise_k5, one_group_grid_stride_2x9x9x24, F32, F16, BF16) {
  return depthwise_setup(depthwise_sizes(2, 9, 24, 5, 1, 2), dt, rng)
      .grid(runtime::Grid{{1, 1, 1}, {32, 1, 1}});
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

// The knobs off their defaults: items of two and four output rows over heights that leave a
// partial last item, at stride 1 and 2, under ptxas's group bounds (the rule's configurations
// among these and the next ones: its stride-2 3×3 two channels a thread; 5×5 two rows, taps
// outermost; 7×7 four rows of two channels, taps outermost, two groups).
IRON_TEST(iron_conv2d_depthwise_k3, tuned_rows4_taps_2x7x9x16, F32, F16, BF16) {
  return depthwise_setup({2, 7, 9, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16}, dt, rng,
                         {{"rows", 4}, {"groups", 2}, {"order", 1}});
}
IRON_TEST(iron_conv2d_depthwise_k3, tuned_rows2_s2_1x11x8x12, F32, F16, BF16) {
  return depthwise_setup({1, 11, 8, 12, 12, 3, 3, 2, 2, 1, 1, 1, 1, 12}, dt, rng,
                         {{"rows", 2}, {"groups", 2}});
}
IRON_TEST(iron_conv2d_depthwise_k5, tuned_rows2_taps_1x9x6x20, F32, F16, BF16) {
  return depthwise_setup({1, 9, 6, 20, 20, 5, 5, 1, 1, 2, 2, 1, 1, 20}, dt, rng,
                         {{"rows", 2}, {"order", 1}});
}
IRON_TEST(iron_conv2d_depthwise_k5, tuned_rows4_1x11x6x8, F32, F16, BF16) {
  return depthwise_setup({1, 11, 6, 8, 8, 5, 5, 1, 1, 2, 2, 1, 1, 8}, dt, rng,
                         {{"rows", 4}, {"groups", 1}});
}
IRON_TEST(iron_conv2d_depthwise_k7, tuned_rows2_1x9x10x8, F32, F16, BF16) {
  return depthwise_setup({1, 9, 10, 8, 8, 7, 7, 1, 1, 3, 3, 1, 1, 8}, dt, rng, {{"rows", 2}});
}
IRON_TEST(iron_conv2d_depthwise_k7, tuned_rows4_s2_1x13x9x5, F32, F16, BF16) {
  return depthwise_setup({1, 13, 9, 5, 5, 7, 7, 2, 2, 3, 3, 1, 1, 5}, dt, rng,
                         {{"rows", 4}, {"groups", 3}});
}

// Two channels a thread (knob `vector`), with the taps outermost (knob `order`) or not, over
// the same partial items.
IRON_TEST(iron_conv2d_depthwise_k3, tuned_vector2_rows4_taps_2x7x9x16, F32, F16, BF16) {
  return depthwise_setup({2, 7, 9, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16}, dt, rng,
                         {{"rows", 4}, {"order", 1}, {"vector", 2}});
}
IRON_TEST(iron_conv2d_depthwise_k5, tuned_vector2_rows2_s2_1x11x8x12, F32, F16, BF16) {
  return depthwise_setup({1, 11, 8, 12, 12, 5, 5, 2, 2, 2, 2, 1, 1, 12}, dt, rng,
                         {{"rows", 2}, {"vector", 2}});
}
IRON_TEST(iron_conv2d_depthwise_k7, tuned_vector2_rows4_taps_1x9x10x136, F32, F16, BF16) {
  return depthwise_setup({1, 9, 10, 136, 136, 7, 7, 1, 1, 3, 3, 1, 1, 136}, dt, rng,
                         {{"rows", 4}, {"groups", 2}, {"order", 1}, {"vector", 2}});
}
IRON_TEST(iron_conv2d_depthwise_k3, tuned_vector2_s2_2x9x11x20, F32, F16, BF16) {
  return depthwise_setup({2, 9, 11, 20, 20, 3, 3, 2, 2, 1, 1, 1, 1, 20}, dt, rng, {{"vector", 2}});
}
IRON_TEST(iron_conv2d_depthwise_k3, tuned_vector2_strided_dilated_1x9x9x8, F32, F16, BF16) {
  return depthwise_setup({1, 9, 9, 8, 8, 3, 3, 2, 2, 2, 2, 2, 2, 8}, dt, rng, {{"vector", 2}});
}

// Items inside the image without selects (knob `interior`) beside items at its edges, in each
// order, at stride 1 and 2, with four and two channels a thread (the 3×3's rule: one row under
// four groups).
IRON_TEST(iron_conv2d_depthwise_k3, tuned_interior_rows2_2x12x13x16, F32, F16, BF16) {
  return depthwise_setup({2, 12, 13, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16}, dt, rng,
                         {{"rows", 2}, {"interior", 1}});
}
IRON_TEST(iron_conv2d_depthwise_k3, tuned_interior_groups4_1x11x10x24, F32, F16, BF16) {
  return depthwise_setup({1, 11, 10, 24, 24, 3, 3, 1, 1, 1, 1, 1, 1, 24}, dt, rng,
                         {{"groups", 4}, {"interior", 1}});
}
IRON_TEST(iron_conv2d_depthwise_k3, tuned_interior_s2_vector2_1x15x17x12, F32, F16, BF16) {
  return depthwise_setup({1, 15, 17, 12, 12, 3, 3, 2, 2, 1, 1, 1, 1, 12}, dt, rng,
                         {{"vector", 2}, {"interior", 1}});
}
IRON_TEST(iron_conv2d_depthwise_k5, tuned_interior_rows2_taps_1x14x15x8, F32, F16, BF16) {
  return depthwise_setup({1, 14, 15, 8, 8, 5, 5, 1, 1, 2, 2, 1, 1, 8}, dt, rng,
                         {{"rows", 2}, {"order", 1}, {"interior", 1}});
}
IRON_TEST(iron_conv2d_depthwise_k7, tuned_interior_rows4_taps_vector2_1x17x16x4, F32, F16, BF16) {
  return depthwise_setup({1, 17, 16, 4, 4, 7, 7, 1, 1, 3, 3, 1, 1, 4}, dt, rng,
                         {{"rows", 4}, {"order", 1}, {"vector", 2}, {"interior", 1}});
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
