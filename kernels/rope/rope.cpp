/// iron_rope_*: rotary position embedding. For each token t, head h and pair p < rot_dim / 2,
/// with angle = positions[t] * inv_freq_p:
///   out[lo] = x[lo] * cos(angle) - x[hi] * sin(angle)
///   out[hi] = x[hi] * cos(angle) + x[lo] * sin(angle)
/// where (lo, hi) = (p, p + rot_dim / 2) in the NeoX layout (rotate halves) and (2p, 2p + 1) in
/// the GPT-J layout (interleaved). Dims from rot_dim to head_dim are not rotated.
///
/// Eight kernels, named iron_rope[_table][_inplace]_{neox,gptj}:
/// - iron_rope_{neox,gptj}: cos/sin computed from theta, inv_freq_p = base^(-2p / rot_dim),
///   out of place (the dims past rot_dim are copied to `out`).
/// - iron_rope_inplace_{neox,gptj}: the same, rotating `x` in place (dims past rot_dim untouched).
/// - iron_rope_table_{neox,gptj}, iron_rope_table_inplace_{neox,gptj}: cos/sin read from a table.
///
/// Precision: the angle is computed in f32 (as PyTorch's f32 composite does), so it carries a
/// relative error of a few 2^-24: about positions[t] · 2^-22 radians for the fastest pair. The
/// table variants are exact up to the table's own f32 rounding. Rotation arithmetic is f32;
/// each output is rounded once to T. One thread owns both elements of a pair in every head it
/// rotates, so the in-place kernels read both before writing either, and cos/sin are computed
/// once per (token, pair) for a block of up to 8 heads.
///
/// ## Error bound
/// Absolute, before the rounding to T (2^-11 f16, 2^-8 bf16 relative), u = 2^-24, for a pair
/// (x_lo, x_hi): (|x_lo| + |x_hi|)·(Δ + γ_6), where γ_6 covers cos and sin (within 3u absolute,
/// budgeted 4u; positions below 2^24) and the two products and the sum; Δ is the angle's
/// error: γ_19·positions[t] for the theta
/// variants (powf's 4 ulp = 8u, the exponent −2p/rot_dim's rounding times ln(base) ≤ 10 for
/// base ≤ e^10, and the product by the position) and 0 for the table variants, whose f32
/// entries add their own rounding (γ_1 instead of cos and sin's 4u). Dims past rot_dim are exact.
///
/// ## Layout
/// - `inp [tokens, heads, head_dim]` T, `out` the same (out of place); or `x` (in place, InOut)
/// - `positions [tokens]` u32, each < max_pos for the table variants
/// - `cos_sin [max_pos, rot_dim]` f32 (table variants): cos of pair p at [pos, p], sin at
///   [pos, rot_dim / 2 + p]
/// - constexprs: tokens, heads, head_dim (a multiple of 8), rot_dim (a multiple of 16,
///   16 ≤ rot_dim ≤ head_dim), base (theta variants). The guard checks both multiples: every
///   model's head and rotary dims are.
///
/// ## Dispatch
/// Elementwise, grid-stride: any grid. Work item i is (token, 8 consecutive pairs, a block of up
/// to 8 heads), pairs fastest; thread i handles items i, i + T, … (T = threads in the grid): it
/// computes the 8 pairs' cos/sin once, then rotates them in each head of its block, each run of
/// 8 (NeoX: the lo and the hi run) or 16 (GPT-J: interleaved) elements with 16-byte accesses
/// (twice as many in f32). The out-of-place kernels then copy the unrotated dims in chunks of 8
/// over tokens · heads · (head_dim - rot_dim) / 8 items the same way. Best: tokens ·
/// ceil(heads / 8) · rot_dim / 16 threads.
#include <algorithm>
#include <array>
#include <cmath>
#include <iron/iron.hpp>
#include <numeric>

namespace iron::kernels {
using namespace iron::dsl;

namespace {

constexpr std::uint32_t kPairs = 8;   // pairs a thread rotates together: 16 bytes of f16/bf16
constexpr std::uint32_t kHeads = 8;   // heads a thread rotates with one set of cos/sin
constexpr std::uint32_t kCopied = 8;  // unrotated elements a thread copies together

/// The sizes every variant takes.
struct RopeShape {
  Expr<u32> tokens, heads, head_dim, rot_dim;
};

struct CosSin {
  Expr<f32> cos, sin;
};
using ChunkCosSin = std::array<CosSin, kPairs>;

/// The rules every variant declares: whole 16-byte runs of pairs in every head.
void require_whole_runs(const Constexpr<u32>& head_dim, const Constexpr<u32>& rot_dim) {
  require_multiple_of(head_dim, kCopied);
  require_multiple_of(rot_dim, std::int64_t{2} * kPairs);
}

/// cos and sin of an angle a with 0 <= a < 2^24 · π/2, from one reduction: a = k · π/2 + r with
/// k = floor(a · 2/π + 1/2) and r = a - k · π/2 in three fmas (π/2 split into three f32 parts,
/// so r is exact but for the last two roundings: within 1u of the true remainder, |r| <= π/4 up
/// to that), then the Taylor polynomials of sin (to r^9) and cos (to r^10), whose truncation is
/// below 2^-28 on [-π/4, π/4], and the quadrant k mod 4. Within 3u absolute of the exact values,
/// without the long-argument reduction of the library's sinf and cosf, which needs local memory.
CosSin cos_sin_of_angle(const Expr<f32>& a) {
  constexpr float kTwoOverPi = 0x1.45f306p-1f;
  constexpr float kHalfPi[] = {0x1.921fb6p+0f, -0x1.777a5cp-25f, -0x1.ee59dap-50f};
  auto k = floor(a * kTwoOverPi + 0.5f);
  auto r = fma(-k, kHalfPi[0], a);
  r = fma(-k, kHalfPi[1], r);
  r = fma(-k, kHalfPi[2], r);
  auto r2 = r * r;
  // 1/n! in f32: sin r = r + r^3 (-1/3! + r^2 (1/5! - …)), cos r = 1 + r^2 (-1/2! + …).
  auto odd = r2 * (-1.0f / 5040.0f + r2 * (1.0f / 362880.0f));
  auto sin_r = fma(r * r2, -1.0f / 6.0f + r2 * (1.0f / 120.0f + odd), r);
  auto even = r2 * (-1.0f / 720.0f + r2 * (1.0f / 40320.0f + r2 * (-1.0f / 3628800.0f)));
  auto cos_r = fma(r2, -0.5f + r2 * (1.0f / 24.0f + even), 1.0f);
  // a = r + qπ/2: (sin, cos) = (sin r, cos r), (cos r, -sin r), (-sin r, -cos r), (-cos r, sin r).
  auto quadrant = cast<u32>(k) & 3u;
  auto swapped = (quadrant & 1u) == 1u;
  auto sin_part = select(swapped, cos_r, sin_r);
  auto cos_part = select(swapped, sin_r, cos_r);
  return {select(quadrant == 1u || quadrant == 2u, -cos_part, cos_part),
          select(quadrant >= 2u, -sin_part, sin_part)};
}

/// cos/sin of pairs p0 .. p0 + 7 at position pos from theta: angle = pos · base^(-2p / rot_dim).
ChunkCosSin theta_cos_sin(const Expr<u32>& pos, const Expr<u32>& p0, const RopeShape& s,
                          const Expr<f32>& base) {
  ChunkCosSin cs;
  for (std::uint32_t c = 0; c < kPairs; ++c) {
    auto inv_freq = pow(base, -cast<f32>(2u * (p0 + c)) / cast<f32>(s.rot_dim));
    cs[c] = cos_sin_of_angle(cast<f32>(pos) * inv_freq);
  }
  return cs;
}

/// cos/sin of pairs p0 .. p0 + 7 at position pos from the table (row pos: cos values, then sin
/// values).
template <class Table>
ChunkCosSin table_cos_sin(const Table& cos_sin, const Expr<u32>& pos, const Expr<u32>& p0,
                          const RopeShape& s) {
  auto cos_row = pos * s.rot_dim + p0;
  auto sin_row = cos_row + s.rot_dim / 2u;
  ChunkCosSin cs;
  for (std::uint32_t c = 0; c < kPairs; ++c) cs[c].cos = load(cos_sin[cos_row + c]);
  for (std::uint32_t c = 0; c < kPairs; ++c) cs[c].sin = load(cos_sin[sin_row + c]);
  return cs;
}

/// Rotates 8 pairs of one head: loads every element before storing any (`src` and `dst` may be
/// the same tensor), and stores each run in order.
template <class T, bool Interleaved, class Src, class Dst>
void rotate_chunk(const Src& src, const Dst& dst, const Expr<u32>& head, const Expr<u32>& p0,
                  const Expr<u32>& half, const ChunkCosSin& cs) {
  // NeoX: lo run at head + p0, hi run at + half. GPT-J: pair c at head + 2 p0 + 2c, + 1.
  auto lo = Interleaved ? head + 2u * p0 : head + p0;
  auto hi = Interleaved ? lo : lo + half;
  const auto lo_at = [&](std::uint32_t c) { return Interleaved ? lo + 2u * c : lo + c; };
  const auto hi_at = [&](std::uint32_t c) { return Interleaved ? hi + (2u * c + 1u) : hi + c; };
  std::array<Expr<f32>, kPairs> a;
  std::array<Expr<f32>, kPairs> b;
  for (std::uint32_t c = 0; c < kPairs; ++c) {
    a[c] = cast<f32>(load(src[lo_at(c)]));
    if (Interleaved) b[c] = cast<f32>(load(src[hi_at(c)]));
  }
  for (std::uint32_t c = 0; c < kPairs && !Interleaved; ++c) b[c] = cast<f32>(load(src[hi_at(c)]));
  for (std::uint32_t c = 0; c < kPairs; ++c) {
    store(dst[lo_at(c)], cast<T>(a[c] * cs[c].cos - b[c] * cs[c].sin));
    if (Interleaved) store(dst[hi_at(c)], cast<T>(b[c] * cs[c].cos + a[c] * cs[c].sin));
  }
  for (std::uint32_t c = 0; c < kPairs && !Interleaved; ++c) {
    store(dst[hi_at(c)], cast<T>(b[c] * cs[c].cos + a[c] * cs[c].sin));
  }
}

/// Rotates every pair of every head: `src` and `dst` may be the same tensor (in place).
/// `cos_sin_of(pos, p0)` gives the ChunkCosSin of pairs p0 .. p0 + 7 at position pos.
template <class T, bool Interleaved, class Src, class Positions, class Dst, class CosSinOf>
void rotate_pairs(const Src& src, const Positions& positions, const Dst& dst, const RopeShape& s,
                  CosSinOf cos_sin_of) {
  auto half = s.rot_dim / 2u;
  auto chunks = half / kPairs;  // per token
  auto head_blocks = (s.heads + (kHeads - 1u)) / kHeads;
  auto token_stride = s.heads * s.head_dim;
  for (auto i : range(global_id<0>(), s.tokens * head_blocks * chunks, grid_threads<0>())) {
    auto p0 = i % chunks * kPairs;
    auto item = i / chunks;
    auto t = item / head_blocks;
    auto h0 = item % head_blocks * kHeads;
    const ChunkCosSin cs = cos_sin_of(load(positions[t]), p0);
    for (auto h : range(h0, min(h0 + kHeads, s.heads), 1u)) {
      rotate_chunk<T, Interleaved>(src, dst, t * token_stride + h * s.head_dim, p0, half, cs);
    }
  }
}

/// Copies dims rot_dim .. head_dim of every head (out-of-place kernels), 8 at a time.
template <class Src, class Dst>
void copy_unrotated(const Src& src, const Dst& dst, const RopeShape& s) {
  auto kept = (s.head_dim - s.rot_dim) / kCopied;  // chunks per head
  for (auto i : range(global_id<0>(), s.tokens * s.heads * kept, grid_threads<0>())) {
    auto first = i / kept * s.head_dim + s.rot_dim + i % kept * kCopied;
    for (std::uint32_t e = 0; e < kCopied; ++e) store(dst[first + e], load(src[first + e]));
  }
}

/// One work item per thread in groups of 256: the (token, 8 pairs, 8 heads) items, or for the
/// out-of-place kernels the copy's chunks of 8 when there are more of them.
Geometry rope_geometry(const GeometryQuery& q, bool copies) {
  const std::uint64_t tokens = q.constant("tokens");
  const std::uint64_t heads = q.constant("heads");
  const std::uint64_t head_dim = q.constant("head_dim");
  const std::uint64_t rot_dim = q.constant("rot_dim");
  std::uint64_t items =
      tokens * ((heads + kHeads - 1) / kHeads) * (rot_dim / (std::uint64_t{2} * kPairs));
  if (copies && head_dim > rot_dim) {
    items = std::max(items, tokens * heads * ((head_dim - rot_dim) / kCopied));
  }
  return Geometry::elementwise(std::max<std::uint64_t>(items, 1), q.threads_per_group(256));
}

}  // namespace

IRON_KERNEL_TEMPLATE(iron_rope, (bool Interleaved),
                     (Tensor<T> inp, Tensor<u32> positions, Out<T> out, Constexpr<u32> tokens,
                      Constexpr<u32> heads, Constexpr<u32> head_dim, Constexpr<u32> rot_dim,
                      Constexpr<f32> base)) {
  dispatch(elementwise);
  static_assert(kPairs == 8 && kHeads == 8 && kCopied == 8, "the grid rule counts items of 8");
  grid(
      "[<= ceil_div(max(tokens * ceil_div(heads, 8) * rot_dim / 16, "
      "tokens * heads * (head_dim - rot_dim) / 8), tpg), 1, 1]");
  layout(inp, "[tokens, heads, head_dim]");
  layout(positions, "[tokens]");
  layout(out, "[tokens, heads, head_dim]");
  require_whole_runs(head_dim, rot_dim);
  const RopeShape s{tokens, heads, head_dim, rot_dim};
  rotate_pairs<T, Interleaved>(inp, positions, out, s,
                               [&](auto pos, auto p0) { return theta_cos_sin(pos, p0, s, base); });
  copy_unrotated(inp, out, s);
}
IRON_KERNEL_VARIANT(iron_rope, neox, false);
IRON_KERNEL_VARIANT(iron_rope, gptj, true);
IRON_GEOMETRY(iron_rope_neox) { return rope_geometry(q, true); }
IRON_GEOMETRY(iron_rope_gptj) { return rope_geometry(q, true); }

IRON_KERNEL_TEMPLATE(iron_rope_inplace, (bool Interleaved),
                     (InOut<T> x, Tensor<u32> positions, Constexpr<u32> tokens,
                      Constexpr<u32> heads, Constexpr<u32> head_dim, Constexpr<u32> rot_dim,
                      Constexpr<f32> base)) {
  dispatch(elementwise);
  static_assert(kPairs == 8 && kHeads == 8, "the grid rule counts items of 8");
  grid("[<= ceil_div(tokens * ceil_div(heads, 8) * rot_dim / 16, tpg), 1, 1]");
  layout(x, "[tokens, heads, head_dim]");
  layout(positions, "[tokens]");
  require_whole_runs(head_dim, rot_dim);
  const RopeShape s{tokens, heads, head_dim, rot_dim};
  rotate_pairs<T, Interleaved>(x, positions, x, s,
                               [&](auto pos, auto p0) { return theta_cos_sin(pos, p0, s, base); });
}
IRON_KERNEL_VARIANT(iron_rope_inplace, neox, false);
IRON_KERNEL_VARIANT(iron_rope_inplace, gptj, true);
IRON_GEOMETRY(iron_rope_inplace_neox) { return rope_geometry(q, false); }
IRON_GEOMETRY(iron_rope_inplace_gptj) { return rope_geometry(q, false); }

IRON_KERNEL_TEMPLATE(iron_rope_table, (bool Interleaved),
                     (Tensor<T> inp, Tensor<u32> positions, Tensor<f32> cos_sin, Out<T> out,
                      Constexpr<u32> tokens, Constexpr<u32> heads, Constexpr<u32> head_dim,
                      Constexpr<u32> rot_dim)) {
  dispatch(elementwise);
  static_assert(kPairs == 8 && kHeads == 8 && kCopied == 8, "the grid rule counts items of 8");
  grid(
      "[<= ceil_div(max(tokens * ceil_div(heads, 8) * rot_dim / 16, "
      "tokens * heads * (head_dim - rot_dim) / 8), tpg), 1, 1]");
  layout(inp, "[tokens, heads, head_dim]");
  layout(positions, "[tokens]");
  layout_at_least(cos_sin, "[1, rot_dim]");  // a row per position: up to the largest one
  layout(out, "[tokens, heads, head_dim]");
  require_whole_runs(head_dim, rot_dim);
  const RopeShape s{tokens, heads, head_dim, rot_dim};
  rotate_pairs<T, Interleaved>(inp, positions, out, s, [&](auto pos, auto p0) {
    return table_cos_sin(cos_sin, pos, p0, s);
  });
  copy_unrotated(inp, out, s);
}
IRON_KERNEL_VARIANT(iron_rope_table, neox, false);
IRON_KERNEL_VARIANT(iron_rope_table, gptj, true);
IRON_GEOMETRY(iron_rope_table_neox) { return rope_geometry(q, true); }
IRON_GEOMETRY(iron_rope_table_gptj) { return rope_geometry(q, true); }

IRON_KERNEL_TEMPLATE(iron_rope_table_inplace, (bool Interleaved),
                     (InOut<T> x, Tensor<u32> positions, Tensor<f32> cos_sin, Constexpr<u32> tokens,
                      Constexpr<u32> heads, Constexpr<u32> head_dim, Constexpr<u32> rot_dim)) {
  dispatch(elementwise);
  static_assert(kPairs == 8 && kHeads == 8, "the grid rule counts items of 8");
  grid("[<= ceil_div(tokens * ceil_div(heads, 8) * rot_dim / 16, tpg), 1, 1]");
  layout(x, "[tokens, heads, head_dim]");
  layout(positions, "[tokens]");
  layout_at_least(cos_sin, "[1, rot_dim]");  // a row per position: up to the largest one
  require_whole_runs(head_dim, rot_dim);
  const RopeShape s{tokens, heads, head_dim, rot_dim};
  rotate_pairs<T, Interleaved>(
      x, positions, x, s, [&](auto pos, auto p0) { return table_cos_sin(cos_sin, pos, p0, s); });
}
IRON_KERNEL_VARIANT(iron_rope_table_inplace, neox, false);
IRON_KERNEL_VARIANT(iron_rope_table_inplace, gptj, true);
IRON_GEOMETRY(iron_rope_table_inplace_neox) { return rope_geometry(q, false); }
IRON_GEOMETRY(iron_rope_table_inplace_gptj) { return rope_geometry(q, false); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// One test problem: shape, layout and where cos/sin come from.
struct RopeCase {
  std::size_t tokens, heads, head_dim, rot_dim;
  std::uint32_t max_pos;  ///< positions are drawn from [0, max_pos)
  bool interleaved = false;
  bool table = false;
  bool in_place = false;
};

constexpr double kBase = 10000.0;

/// The angle of pair p at position pos, in double.
double rope_angle(std::uint32_t pos, std::size_t p, std::size_t rot_dim) {
  return pos * std::pow(kBase, -2.0 * static_cast<double>(p) / static_cast<double>(rot_dim));
}

/// The definition, in double: each pair rotated by its angle, the other dims unchanged.
std::vector<float> rope_oracle(const std::vector<float>& x, const std::vector<std::uint32_t>& pos,
                               const RopeCase& c) {
  std::vector<float> y = x;
  const std::size_t half = c.rot_dim / 2;
  for (std::size_t t = 0; t < c.tokens; ++t) {
    for (std::size_t h = 0; h < c.heads; ++h) {
      const std::size_t head = (t * c.heads + h) * c.head_dim;
      for (std::size_t p = 0; p < half; ++p) {
        const std::size_t lo = head + (c.interleaved ? 2 * p : p);
        const std::size_t hi = head + (c.interleaved ? 2 * p + 1 : p + half);
        const double angle = rope_angle(pos[t], p, c.rot_dim);
        y[lo] = static_cast<float>(x[lo] * std::cos(angle) - x[hi] * std::sin(angle));
        y[hi] = static_cast<float>(x[hi] * std::cos(angle) + x[lo] * std::sin(angle));
      }
    }
  }
  return y;
}

/// The cos/sin table for positions [0, max_pos), computed in double and stored as f32.
std::vector<float> rope_table(const RopeCase& c) {
  const std::size_t half = c.rot_dim / 2;
  std::vector<float> table(c.max_pos * c.rot_dim);
  for (std::uint32_t pos = 0; pos < c.max_pos; ++pos) {
    for (std::size_t p = 0; p < half; ++p) {
      table[pos * c.rot_dim + p] = static_cast<float>(std::cos(rope_angle(pos, p, c.rot_dim)));
      table[pos * c.rot_dim + half + p] =
          static_cast<float>(std::sin(rope_angle(pos, p, c.rot_dim)));
    }
  }
  return table;
}

std::string rope_kernel(const RopeCase& c) {
  return std::string("iron_rope") + (c.table ? "_table" : "") + (c.in_place ? "_inplace" : "") +
         (c.interleaved ? "_gptj" : "_neox");
}

/// The tolerance of the doc comment's bound for inputs `x` at positions `pos`.
testing::Tolerance rope_tolerance(const RopeCase& c, const std::vector<float>& x,
                                  const std::vector<std::uint32_t>& pos, DType dt) {
  namespace tol = testing::tolerance;
  const double pair = 2 * tol::max_abs(x);  // the largest |x_lo| + |x_hi|
  if (c.table) return tol::stored(dt, pair * tol::gamma(3), 0.0);
  const std::uint32_t farthest = pos.empty() ? 0 : *std::max_element(pos.begin(), pos.end());
  const double angle_error = tol::gamma(19) * farthest;
  return tol::stored(dt, pair * (angle_error + tol::gamma(tol::kSinCosU + 2)), 0.0);
}

/// A test of the kernel `c` names, on `groups` groups of `tpg` threads.
testing::TestSetup rope_setup(const RopeCase& c, std::uint32_t groups, std::uint32_t tpg, DType dt,
                              testing::Rng& rng) {
  const std::size_t count = c.tokens * c.heads * c.head_dim;
  const auto x = testing::round_through(rng.uniform(count, -2.0f, 2.0f), dt);
  const auto pos = rng.integers(c.tokens, 0, c.max_pos);
  auto setup = testing::TestSetup(rope_kernel(c), dt);
  const std::string data = c.in_place ? "x" : "out";
  if (c.in_place) {
    setup.initial("x", x);
  } else {
    setup.input("inp", x);
  }
  if (c.table) {
    setup.input("cos_sin", rope_table(c));
  } else {
    setup.constant("base", kBase);
  }
  return setup.input_u32("positions", pos)
      .output(data, count)
      .constant("tokens", static_cast<double>(c.tokens))
      .constant("heads", static_cast<double>(c.heads))
      .constant("head_dim", static_cast<double>(c.head_dim))
      .constant("rot_dim", static_cast<double>(c.rot_dim))
      .expect(data, rope_oracle(x, pos, c))
      .tolerance(data, rope_tolerance(c, x, pos, dt))
      .grid({{groups}, {tpg}});
}

/// A prefill of `c.tokens` tokens at positions 0 .. tokens - 1 (the table, if any, holds
/// exactly those positions). bytes_moved counts x once each way, the positions and the table.
bench::BenchSetup rope_bench(const RopeCase& c, DType dt) {
  const std::size_t count = c.tokens * c.heads * c.head_dim;
  std::vector<std::uint32_t> positions(c.tokens);
  std::iota(positions.begin(), positions.end(), 0u);
  auto bench = bench::BenchSetup(rope_kernel(c), dt);
  std::size_t bytes = 2 * count * dtype_size(dt) + c.tokens * sizeof(std::uint32_t);
  if (c.in_place) {
    bench.output("x", count);
  } else {
    bench.random("inp", count).output("out", count);
  }
  if (c.table) {
    bench.random("cos_sin", c.max_pos * c.rot_dim);
    bytes += c.max_pos * c.rot_dim * sizeof(float);
  } else {
    bench.constant("base", kBase);
  }
  bench.input_u32("positions", positions)
      .constant("tokens", static_cast<double>(c.tokens))
      .constant("heads", static_cast<double>(c.heads))
      .constant("head_dim", static_cast<double>(c.head_dim))
      .constant("rot_dim", static_cast<double>(c.rot_dim));
  return bench.grid(bench::geometry_grid(bench))
      .bytes_moved(bytes)
      .peer(c.interleaved ? "rope_gptj" : "rope_neox",
            {{"tokens", static_cast<double>(c.tokens)},
             {"heads", static_cast<double>(c.heads)},
             {"head_dim", static_cast<double>(c.head_dim)},
             {"rot_dim", static_cast<double>(c.rot_dim)},
             {"base", kBase},
             {"table", c.table ? 1.0 : 0.0},
             {"in_place", c.in_place ? 1.0 : 0.0}});
}

/// The anchor shape: 8192 tokens × 32 heads × 128 dims, full rotary.
RopeCase anchor(bool interleaved, bool table, bool in_place) {
  return {8192, 32, 128, 128, 8192, interleaved, table, in_place};
}

}  // namespace

// Tolerances. The theta kernels compute the angle in f32: up to about pos · 2^-22 rad of error
// for the fastest pair (pow and the product), times |x| ≤ 2, so f32 atol 1e-3 for positions
// < 2048 and 4e-3 for positions < 8192 (the simulator stays under a third of that). The table
// kernels are exact up to the table's f32 rounding. f16/bf16 add half a unit in the last place
// of the result: rtol 5e-4 (2^-11) and 4e-3 (2^-8).

// Llama-like heads (head_dim = rot_dim = 128): 56 items of 8 pairs on 32 threads, so the
// grid-stride loop wraps.
IRON_TEST(iron_rope_neox, full_rotary, F32, F16, BF16) {
  return rope_setup({7, 4, 128, 128, 2048}, 1, 32, dt, rng);
}

// rot_dim < head_dim (dims 32 .. 80 copied), 3 heads, a grid far smaller than the work: both
// grid-stride loops wrap many times.
IRON_TEST(iron_rope_neox, partial_rotary, F32, F16, BF16) {
  return rope_setup({5, 3, 80, 32, 2048}, 1, 32, dt, rng);
}

// Positions up to 8191: the f32 angle's error grows with the position.
IRON_TEST(iron_rope_neox, long_context, F32, F16, BF16) {
  return rope_setup({33, 2, 64, 64, 8192}, 2, 64, dt, rng);
}

// 11 heads: a full block of 8 and a block of 3 per token.
IRON_TEST(iron_rope_neox, partial_head_block, F32, F16, BF16) {
  return rope_setup({3, 11, 64, 64, 2048}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_gptj, full_rotary, F32, F16, BF16) {
  return rope_setup({7, 4, 128, 128, 2048, true}, 1, 32, dt, rng);
}

// GPT-J's own shape in small: rot_dim 16 of head_dim 64, odd head count.
IRON_TEST(iron_rope_gptj, partial_rotary, F32, F16, BF16) {
  return rope_setup({9, 5, 64, 16, 2048, true}, 2, 32, dt, rng);
}

// One token, one head of one chunk of 8 pairs: the smallest problem the rules allow.
IRON_TEST(iron_rope_gptj, single_chunk, F32, F16, BF16) {
  return rope_setup({1, 1, 16, 16, 2048, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_gptj, partial_head_block, F32, F16, BF16) {
  return rope_setup({2, 9, 32, 32, 2048, true}, 1, 32, dt, rng);
}

// In place: the elements past rot_dim must keep their values (initial() gives them).
IRON_TEST(iron_rope_inplace_neox, partial_rotary, F32, F16, BF16) {
  return rope_setup({5, 3, 80, 32, 2048, false, false, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_inplace_neox, full_rotary, F32, F16, BF16) {
  return rope_setup({7, 4, 128, 128, 2048, false, false, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_inplace_gptj, partial_rotary, F32, F16, BF16) {
  return rope_setup({9, 5, 64, 16, 2048, true, false, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_inplace_gptj, single_chunk, F32, F16, BF16) {
  return rope_setup({1, 1, 16, 16, 2048, true, false, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_table_neox, full_rotary, F32, F16, BF16) {
  return rope_setup({7, 4, 128, 128, 512, false, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_table_neox, partial_rotary, F32, F16, BF16) {
  return rope_setup({5, 3, 80, 32, 300, false, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_table_gptj, full_rotary, F32, F16, BF16) {
  return rope_setup({7, 4, 128, 128, 512, true, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_table_gptj, partial_rotary, F32, F16, BF16) {
  return rope_setup({9, 5, 64, 16, 300, true, true}, 2, 32, dt, rng);
}

IRON_TEST(iron_rope_table_inplace_neox, partial_rotary, F32, F16, BF16) {
  return rope_setup({5, 3, 80, 32, 300, false, true, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_table_inplace_neox, single_chunk, F32, F16, BF16) {
  return rope_setup({1, 1, 16, 16, 1, false, true, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_table_inplace_gptj, partial_rotary, F32, F16, BF16) {
  return rope_setup({9, 5, 64, 16, 300, true, true, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_table_inplace_gptj, full_rotary, F32, F16, BF16) {
  return rope_setup({7, 4, 128, 128, 512, true, true, true}, 1, 32, dt, rng);
}

IRON_BENCH(iron_rope_neox, tokens8k_heads32_dim128, F32, F16, BF16) {
  return rope_bench(anchor(false, false, false), dt);
}
IRON_BENCH(iron_rope_gptj, tokens8k_heads32_dim128, BF16) {
  return rope_bench(anchor(true, false, false), dt);
}
IRON_BENCH(iron_rope_inplace_neox, tokens8k_heads32_dim128, BF16) {
  return rope_bench(anchor(false, false, true), dt);
}
IRON_BENCH(iron_rope_inplace_gptj, tokens8k_heads32_dim128, BF16) {
  return rope_bench(anchor(true, false, true), dt);
}
IRON_BENCH(iron_rope_table_neox, tokens8k_heads32_dim128, BF16) {
  return rope_bench(anchor(false, true, false), dt);
}
IRON_BENCH(iron_rope_table_gptj, tokens8k_heads32_dim128, BF16) {
  return rope_bench(anchor(true, true, false), dt);
}
IRON_BENCH(iron_rope_table_inplace_neox, tokens8k_heads32_dim128, BF16) {
  return rope_bench(anchor(false, true, true), dt);
}
IRON_BENCH(iron_rope_table_inplace_gptj, tokens8k_heads32_dim128, BF16) {
  return rope_bench(anchor(true, true, true), dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
