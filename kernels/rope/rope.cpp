/// iron_rope_*: rotary position embedding. For each token t, head h and pair p < rot_dim / 2,
/// with angle = positions[t] * inv_freq_p:
///   out[lo] = x[lo] * cos(angle) - x[hi] * sin(angle)
///   out[hi] = x[hi] * cos(angle) + x[lo] * sin(angle)
/// where (lo, hi) = (p, p + rot_dim / 2) in the NeoX layout (rotate halves) and (2p, 2p + 1) in
/// the GPT-J layout (interleaved). Dims from rot_dim to head_dim are not rotated.
///
/// Ten kernels, named iron_rope[_table][_inplace]_{neox,gptj} and
/// iron_rope_qk_inplace_{neox,gptj}:
/// - iron_rope_{neox,gptj}: cos/sin computed from theta, inv_freq_p = base^(-2p / rot_dim),
///   out of place (the dims past rot_dim are copied to `out`).
/// - iron_rope_inplace_{neox,gptj}: the same, rotating `x` in place (dims past rot_dim untouched).
/// - iron_rope_table_{neox,gptj}, iron_rope_table_inplace_{neox,gptj}: cos/sin read from a table.
/// - iron_rope_qk_inplace_{neox,gptj}: the queries `q` and the keys `k` of an attention layer
///   (their own head counts, the same positions) rotated in place by one launch, as
///   iron_rope_inplace does each: what a layer would otherwise launch twice.
///
/// Precision: the angle is computed in f32 (as PyTorch's f32 composite does), so it carries a
/// relative error of a few 2^-24 of the position. The table variants are exact up to the
/// table's own f32 rounding. Rotation arithmetic is f32; each output is rounded once to T. One
/// thread owns both elements of a pair in every head it rotates, so the in-place kernels read
/// both before writing either, and cos/sin are computed once per (token, pair) for a block of
/// up to 4 heads.
///
/// ## Error bound
/// Absolute, before the rounding to T (2^-11 f16, 2^-8 bf16 relative), u = 2^-24, for a pair
/// (x_lo, x_hi): (|x_lo| + |x_hi|)·(Δ + γ_6), where γ_6 covers cos and sin (within 3u absolute,
/// budgeted 4u; positions below 2^24) and the two products and the sum; Δ is the angle's
/// error: γ_8·positions[t] for the theta variants and 0 for the table variants, whose f32
/// entries add their own rounding (γ_1 instead of cos and sin's 4u). Dims past rot_dim are
/// exact. The theta variants compute inv_freq_p = 2^(-e) with e = p · (log2(base) · 2 /
/// rot_dim): e is within 5u relative (log2f's 1 ulp, the division, the two products), so
/// 2^(-e) is within ln 2 · e · 5u + 4u relative (exp2f's 2 ulp), and the product by the position
/// adds u. As ln 2 · e · 2^(-e) ≤ 1/e_0 (e_0 = 2.718…) for every e ≥ 0, the angle is within
/// positions[t] · (5u / e_0 + 5u) < 7u · positions[t], for any base.
///
/// ## Layout
/// - `inp [tokens, heads, head_dim]` T, `out` the same (out of place); or `x` (in place, InOut);
///   or `q [tokens, heads_q, head_dim]` and `k [tokens, heads_kv, head_dim]` (qk, both InOut)
/// - `positions [tokens]` u32, each < max_pos for the table variants
/// - `cos_sin [max_pos, rot_dim]` f32 (table variants): cos of pair p at [pos, p], sin at
///   [pos, rot_dim / 2 + p]
/// - constexprs: tokens, heads (heads_q and heads_kv for qk), head_dim (a multiple of 8),
///   rot_dim (a multiple of 16, 16 ≤ rot_dim ≤ head_dim), base (theta variants). The guard
///   checks both multiples: every model's head and rotary dims are, and they make each half of
///   the rotated dims and the copied dims whole 16-byte vectors.
///
/// ## Dispatch
/// Elementwise, grid-stride: any grid. With L elements in a 16-byte vector (8 f16/bf16, 4 f32)
/// and W = rot_dim / (2L) vectors in each half of the rotated dims, work item i is (token, a
/// block of up to 4 heads, column c = i mod W), columns fastest: in each head of its block a
/// thread rotates the vectors at c·L and rot_dim / 2 + c·L, so consecutive threads touch
/// consecutive vectors and every load and store instruction of a simdgroup is contiguous. Those
/// two vectors hold L pairs in both layouts: NeoX pairs c·L + e (lo in the first vector, hi in
/// the second), GPT-J the L / 2 interleaved pairs of each. A thread loads its position, then the
/// 2 · 4 vectors of its block (128 bytes in flight), computes (theta) or reads (table: 16-byte
/// loads of runs of consecutive pairs) the L pairs' cos/sin once, then rotates and stores each
/// head. A partial block takes the last head in place of the missing ones: the same thread
/// loads and stores those elements again with the same values. The out-of-place kernels then
/// copy the unrotated dims a vector at a time over tokens · heads · (head_dim - rot_dim) / L
/// items the same way. Best: tokens · ceil(heads / 4) · W threads (one item each). The in-place
/// kernels and the out-of-place theta ones take at most 256 threads a group, which leaves ptxas
/// the registers to hold a block's 8 vectors (48–80); the out-of-place table ones fit 64 with
/// the next head's loads issued before the current head's stores. The qk kernels run the in-place
/// loop over q's items, then over k's: best with the larger of the two counts of threads.
#include <algorithm>
#include <array>
#include <cmath>
#include <iron/iron.hpp>
#include <numeric>
#include <string>

namespace iron::kernels {
using namespace iron::dsl;

namespace {

constexpr std::uint32_t kHeads = 4;  // heads an item rotates: all loaded before any is stored

/// Elements of T in one 16-byte vector (8 of f16/bf16, 4 of f32): the pairs a thread rotates in
/// each head of its item.
template <class T>
constexpr std::uint32_t kLanes = static_cast<std::uint32_t>(16 / lane_bytes<T>());

/// The sizes every variant takes.
struct RopeShape {
  Expr<u32> tokens, heads, head_dim, rot_dim;
};

struct CosSin {
  Expr<f32> cos, sin;
};
template <class T>
using PairCosSin = std::array<CosSin, kLanes<T>>;  // of a thread's pairs
template <class T>
using Vector = std::array<Expr<T>, kLanes<T>>;

/// The rules every variant declares: whole 16-byte vectors in both halves of the rotated dims
/// and in the copied ones.
void require_whole_vectors(const Constexpr<u32>& head_dim, const Constexpr<u32>& rot_dim) {
  require_multiple_of(head_dim, 8);
  require_multiple_of(rot_dim, 16);
}

/// The grid rule: at most one group per tpg items (the copy's vectors, when `copies` and there
/// are more of them).
template <class T>
std::string rope_grid(bool copies) {
  std::string items = "tokens * ceil_div(heads, " + std::to_string(kHeads) + ") * rot_dim / " +
                      std::to_string(2 * kLanes<T>);
  if (copies) {
    items = "max(" + items + ", tokens * heads * (head_dim - rot_dim) / " +
            std::to_string(kLanes<T>) + ")";
  }
  return "[<= ceil_div(" + items + ", tpg), 1, 1]";
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

/// The pair whose elements are lane c of the thread's vectors at `col` and half + col of a head
/// (half = rot_dim / 2, col a multiple of L = kLanes<T>). NeoX: pair col + c, lo in the first
/// vector and hi in the second. GPT-J: each vector holds L / 2 whole pairs, (2q, 2q + 1) is
/// pair q, so lane c < L / 2 stands for pair col / 2 + c of the first vector and lane
/// c >= L / 2 for pair (half + col) / 2 + c - L / 2 of the second.
template <class T, bool Interleaved>
Expr<u32> pair_of(const Expr<u32>& col, const Expr<u32>& half, std::uint32_t c) {
  constexpr std::uint32_t kHalfLanes = kLanes<T> / 2;
  if constexpr (!Interleaved) {
    return col + c;
  } else if (c < kHalfLanes) {
    return col / 2u + c;
  } else {
    return (half + col) / 2u + (c - kHalfLanes);
  }
}

/// log2(base) · 2 / rot_dim: inv_freq_p = 2^(-p · step) = base^(-2p / rot_dim). Computed once a
/// thread, so that each pair's frequency is a product and one exp2.
Expr<f32> theta_step(const Expr<f32>& base, const Expr<u32>& rot_dim) {
  return log2(base) * (2.0f / cast<f32>(rot_dim));
}

/// cos/sin of the thread's pairs (pair_of) at position pos from theta:
/// angle = pos · 2^(-p · step).
template <class T, bool Interleaved>
PairCosSin<T> theta_cos_sin(const Expr<u32>& pos, const Expr<u32>& col, const RopeShape& s,
                            const Expr<f32>& step) {
  PairCosSin<T> cs;
  for (std::uint32_t c = 0; c < kLanes<T>; ++c) {
    auto p = pair_of<T, Interleaved>(col, s.rot_dim / 2u, c);
    auto inv_freq = exp2(-(cast<f32>(p) * step));
    cs[c] = cos_sin_of_angle(cast<f32>(pos) * inv_freq);
  }
  return cs;
}

/// cos/sin of the thread's pairs (pair_of) at position pos from the table (row pos: cos values,
/// then sin values), with the widest loads their runs of consecutive pairs allow.
template <class T, bool Interleaved, class Table>
PairCosSin<T> table_cos_sin(const Table& cos_sin, const Expr<u32>& pos, const Expr<u32>& col,
                            const RopeShape& s) {
  constexpr std::uint32_t kRun = Interleaved ? kLanes<T> / 2 : kLanes<T>;  // consecutive pairs
  constexpr std::uint32_t kWide = std::min<std::uint32_t>(kRun, 4);        // f32s in 16 bytes
  auto half = s.rot_dim / 2u;
  auto row = pos * s.rot_dim;
  PairCosSin<T> cs;
  for (std::uint32_t c = 0; c < kLanes<T>; c += kWide) {
    auto p = row + pair_of<T, Interleaved>(col, half, c);
    const auto cos_run = load_lanes<kWide>(cos_sin[p]);
    const auto sin_run = load_lanes<kWide>(cos_sin[p + half]);
    for (std::uint32_t e = 0; e < kWide; ++e) cs[c + e] = {cos_run[e], sin_run[e]};
  }
  return cs;
}

/// The rotation of one head's two vectors `a` (at col) and `b` (at half + col), as stored.
template <class T, bool Interleaved>
std::array<Vector<T>, 2> rotated(const Vector<T>& a, const Vector<T>& b, const PairCosSin<T>& cs) {
  std::array<Vector<T>, 2> out;
  // out_lo = lo · cos - hi · sin, out_hi = hi · cos + lo · sin, in f32.
  const auto rotate = [](const Expr<T>& lo, const Expr<T>& hi, const CosSin& angle, Expr<T>& to_lo,
                         Expr<T>& to_hi) {
    auto x = cast<f32>(lo);
    auto y = cast<f32>(hi);
    to_lo = cast<T>(x * angle.cos - y * angle.sin);
    to_hi = cast<T>(y * angle.cos + x * angle.sin);
  };
  constexpr std::uint32_t kHalfLanes = kLanes<T> / 2;
  for (std::uint32_t c = 0; c < kLanes<T>; ++c) {
    if constexpr (Interleaved) {
      const std::uint32_t q = c % kHalfLanes;  // pair q of its vector
      const auto& v = c < kHalfLanes ? a : b;
      auto& w = c < kHalfLanes ? out[0] : out[1];
      rotate(v[2 * q], v[2 * q + 1], cs[c], w[2 * q], w[2 * q + 1]);
    } else {
      rotate(a[c], b[c], cs[c], out[0][c], out[1][c]);
    }
  }
  return out;
}

/// Rotates every pair of every head: `src` and `dst` may be the same tensor (in place).
/// `cos_sin_of(pos, col)` gives the PairCosSin of the thread's pairs at position pos. An item
/// loads its kHeads heads' vectors first, then stores them; heads past the last (a partial
/// block) are the last head again, loaded and stored by the same thread with the same values.
template <class T, bool Interleaved, class Src, class Positions, class Dst, class CosSinOf>
void rotate_pairs(const Src& src, const Positions& positions, const Dst& dst, const RopeShape& s,
                  CosSinOf cos_sin_of) {
  constexpr std::uint32_t L = kLanes<T>;
  auto half = s.rot_dim / 2u;
  auto width = half / L;  // threads a head: the vectors of each half
  auto head_blocks = (s.heads + (kHeads - 1u)) / kHeads;
  auto token_stride = s.heads * s.head_dim;
  auto last_head = s.heads - 1u;
  for (auto i : range(global_id<0>(), s.tokens * head_blocks * width, grid_threads<0>())) {
    auto col = i % width * L;
    auto item = i / width;
    auto t = item / head_blocks;
    auto h0 = item % head_blocks * kHeads;
    auto pos = load(positions[t]);
    std::array<Expr<u32>, kHeads> at;
    std::array<Vector<T>, kHeads> a;
    std::array<Vector<T>, kHeads> b;
    for (std::uint32_t k = 0; k < kHeads; ++k) {
      Expr<u32> head = h0;
      if (k > 0) head = min(h0 + k, last_head);
      at[k] = t * token_stride + head * s.head_dim + col;
      a[k] = load_lanes<L>(src[at[k]]);
      b[k] = load_lanes<L>(src[at[k] + half]);
    }
    const PairCosSin<T> cs = cos_sin_of(pos, col);
    for (std::uint32_t k = 0; k < kHeads; ++k) {
      const auto out = rotated<T, Interleaved>(a[k], b[k], cs);
      store_lanes(dst[at[k]], out[0]);
      store_lanes(dst[at[k] + half], out[1]);
    }
  }
}

/// Copies dims rot_dim .. head_dim of every head (out-of-place kernels), a 16-byte vector at a
/// time.
template <class T, class Src, class Dst>
void copy_unrotated(const Src& src, const Dst& dst, const RopeShape& s) {
  constexpr std::uint32_t L = kLanes<T>;
  auto kept = (s.head_dim - s.rot_dim) / L;  // vectors per head
  for (auto i : range(global_id<0>(), s.tokens * s.heads * kept, grid_threads<0>())) {
    auto at = i / kept * s.head_dim + s.rot_dim + i % kept * L;
    store_lanes(dst[at], load_lanes<L>(src[at]));
  }
}

/// One work item per thread in groups of 256: the (token, head block, vector column) items, or
/// for the out-of-place kernels the copy's vectors when there are more of them.
Geometry rope_geometry(const GeometryQuery& q, bool copies) {
  const std::uint64_t lanes = 16 / dtype_size(q.dtype);
  const std::uint64_t tokens = q.constant("tokens");
  const std::uint64_t heads = q.constant("heads");
  const std::uint64_t head_dim = q.constant("head_dim");
  const std::uint64_t rot_dim = q.constant("rot_dim");
  std::uint64_t items = tokens * ((heads + kHeads - 1) / kHeads) * (rot_dim / (2 * lanes));
  if (copies && head_dim > rot_dim) {
    items = std::max(items, tokens * heads * ((head_dim - rot_dim) / lanes));
  }
  return Geometry::elementwise(std::max<std::uint64_t>(items, 1), q.threads_per_group(256));
}

/// The qk kernels' grid rule: at most one group per tpg items of the larger of q's and k's
/// rotations.
template <class T>
std::string rope_qk_grid() {
  const std::string per_head_block = "ceil_div(heads_q, " + std::to_string(kHeads) +
                                     "), ceil_div(heads_kv, " + std::to_string(kHeads) + ")";
  return "[<= ceil_div(tokens * max(" + per_head_block + ") * rot_dim / " +
         std::to_string(2 * kLanes<T>) + ", tpg), 1, 1]";
}

/// One work item per thread of the larger rotation (q's, unless k has more heads), in groups of
/// 256.
Geometry rope_qk_geometry(const GeometryQuery& q) {
  const std::uint64_t lanes = 16 / dtype_size(q.dtype);
  const std::uint64_t heads = std::max(q.constant("heads_q"), q.constant("heads_kv"));
  const std::uint64_t items = q.constant("tokens") * ((heads + kHeads - 1) / kHeads) *
                              (q.constant("rot_dim") / (2 * lanes));
  return Geometry::elementwise(std::max<std::uint64_t>(items, 1), q.threads_per_group(256));
}

}  // namespace

IRON_KERNEL_TEMPLATE(iron_rope, (bool Interleaved),
                     (Tensor<T> inp, Tensor<u32> positions, Out<T> out, Constexpr<u32> tokens,
                      Constexpr<u32> heads, Constexpr<u32> head_dim, Constexpr<u32> rot_dim,
                      Constexpr<f32> base)) {
  dispatch(elementwise, {at_most(256)});
  occupancy(3);  // 85 registers: ptxas keeps a block's loads ahead of its stores (NOTES §31)
  grid(rope_grid<T>(true));
  layout(inp, "[tokens, heads, head_dim]");
  layout(positions, "[tokens]");
  layout(out, "[tokens, heads, head_dim]");
  require_whole_vectors(head_dim, rot_dim);
  const RopeShape s{tokens, heads, head_dim, rot_dim};
  const auto step = theta_step(base, rot_dim);
  rotate_pairs<T, Interleaved>(inp, positions, out, s, [&](auto pos, auto col) {
    return theta_cos_sin<T, Interleaved>(pos, col, s, step);
  });
  copy_unrotated<T>(inp, out, s);
}
IRON_KERNEL_VARIANT(iron_rope, neox, false);
IRON_KERNEL_VARIANT(iron_rope, gptj, true);
IRON_GEOMETRY(iron_rope_neox) { return rope_geometry(q, true); }
IRON_GEOMETRY(iron_rope_gptj) { return rope_geometry(q, true); }

IRON_KERNEL_TEMPLATE(iron_rope_inplace, (bool Interleaved),
                     (InOut<T> x, Tensor<u32> positions, Constexpr<u32> tokens,
                      Constexpr<u32> heads, Constexpr<u32> head_dim, Constexpr<u32> rot_dim,
                      Constexpr<f32> base)) {
  dispatch(elementwise, {at_most(256)});
  grid(rope_grid<T>(false));
  layout(x, "[tokens, heads, head_dim]");
  layout(positions, "[tokens]");
  require_whole_vectors(head_dim, rot_dim);
  const RopeShape s{tokens, heads, head_dim, rot_dim};
  const auto step = theta_step(base, rot_dim);
  rotate_pairs<T, Interleaved>(x, positions, x, s, [&](auto pos, auto col) {
    return theta_cos_sin<T, Interleaved>(pos, col, s, step);
  });
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
  grid(rope_grid<T>(true));
  layout(inp, "[tokens, heads, head_dim]");
  layout(positions, "[tokens]");
  layout_at_least(cos_sin, "[1, rot_dim]");  // a row per position: up to the largest one
  layout(out, "[tokens, heads, head_dim]");
  require_whole_vectors(head_dim, rot_dim);
  const RopeShape s{tokens, heads, head_dim, rot_dim};
  rotate_pairs<T, Interleaved>(inp, positions, out, s, [&](auto pos, auto col) {
    return table_cos_sin<T, Interleaved>(cos_sin, pos, col, s);
  });
  copy_unrotated<T>(inp, out, s);
}
IRON_KERNEL_VARIANT(iron_rope_table, neox, false);
IRON_KERNEL_VARIANT(iron_rope_table, gptj, true);
IRON_GEOMETRY(iron_rope_table_neox) { return rope_geometry(q, true); }
IRON_GEOMETRY(iron_rope_table_gptj) { return rope_geometry(q, true); }

IRON_KERNEL_TEMPLATE(iron_rope_table_inplace, (bool Interleaved),
                     (InOut<T> x, Tensor<u32> positions, Tensor<f32> cos_sin, Constexpr<u32> tokens,
                      Constexpr<u32> heads, Constexpr<u32> head_dim, Constexpr<u32> rot_dim)) {
  dispatch(elementwise, {at_most(256)});
  grid(rope_grid<T>(false));
  layout(x, "[tokens, heads, head_dim]");
  layout(positions, "[tokens]");
  layout_at_least(cos_sin, "[1, rot_dim]");  // a row per position: up to the largest one
  require_whole_vectors(head_dim, rot_dim);
  const RopeShape s{tokens, heads, head_dim, rot_dim};
  rotate_pairs<T, Interleaved>(x, positions, x, s, [&](auto pos, auto col) {
    return table_cos_sin<T, Interleaved>(cos_sin, pos, col, s);
  });
}
IRON_KERNEL_VARIANT(iron_rope_table_inplace, neox, false);
IRON_KERNEL_VARIANT(iron_rope_table_inplace, gptj, true);
IRON_GEOMETRY(iron_rope_table_inplace_neox) { return rope_geometry(q, false); }
IRON_GEOMETRY(iron_rope_table_inplace_gptj) { return rope_geometry(q, false); }

IRON_KERNEL_TEMPLATE(iron_rope_qk_inplace, (bool Interleaved),
                     (InOut<T> q, InOut<T> k, Tensor<u32> positions, Constexpr<u32> tokens,
                      Constexpr<u32> heads_q, Constexpr<u32> heads_kv, Constexpr<u32> head_dim,
                      Constexpr<u32> rot_dim, Constexpr<f32> base)) {
  dispatch(elementwise, {at_most(256)});
  grid(rope_qk_grid<T>());
  layout(q, "[tokens, heads_q, head_dim]");
  layout(k, "[tokens, heads_kv, head_dim]");
  layout(positions, "[tokens]");
  require_whole_vectors(head_dim, rot_dim);
  const auto step = theta_step(base, rot_dim);
  const auto rotate = [&](const auto& x, const Expr<u32>& heads) {
    const RopeShape s{tokens, heads, head_dim, rot_dim};
    rotate_pairs<T, Interleaved>(x, positions, x, s, [&](auto pos, auto col) {
      return theta_cos_sin<T, Interleaved>(pos, col, s, step);
    });
  };
  rotate(q, heads_q);
  rotate(k, heads_kv);
}
IRON_KERNEL_VARIANT(iron_rope_qk_inplace, neox, false);
IRON_KERNEL_VARIANT(iron_rope_qk_inplace, gptj, true);
IRON_GEOMETRY(iron_rope_qk_inplace_neox) { return rope_qk_geometry(q); }
IRON_GEOMETRY(iron_rope_qk_inplace_gptj) { return rope_qk_geometry(q); }

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
  const double angle_error = tol::gamma(8) * farthest;
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

/// A test of iron_rope_qk_inplace_{neox,gptj} (the layout c.interleaved says): queries of
/// c.heads heads and keys of `heads_kv`, each expected as the definition rotates its own heads.
testing::TestSetup rope_qk_setup(const RopeCase& c, std::size_t heads_kv, std::uint32_t groups,
                                 std::uint32_t tpg, DType dt, testing::Rng& rng) {
  RopeCase keys = c;
  keys.heads = heads_kv;
  const std::size_t q_count = c.tokens * c.heads * c.head_dim;
  const std::size_t k_count = keys.tokens * keys.heads * keys.head_dim;
  const auto q = testing::round_through(rng.uniform(q_count, -2.0f, 2.0f), dt);
  const auto k = testing::round_through(rng.uniform(k_count, -2.0f, 2.0f), dt);
  const auto pos = rng.integers(c.tokens, 0, c.max_pos);
  return testing::TestSetup(
             c.interleaved ? "iron_rope_qk_inplace_gptj" : "iron_rope_qk_inplace_neox", dt)
      .initial("q", q)
      .initial("k", k)
      .input_u32("positions", pos)
      .output("q", q_count)
      .output("k", k_count)
      .constant("tokens", static_cast<double>(c.tokens))
      .constant("heads_q", static_cast<double>(c.heads))
      .constant("heads_kv", static_cast<double>(heads_kv))
      .constant("head_dim", static_cast<double>(c.head_dim))
      .constant("rot_dim", static_cast<double>(c.rot_dim))
      .constant("base", kBase)
      .expect("q", rope_oracle(q, pos, c))
      .expect("k", rope_oracle(k, pos, keys))
      .tolerance("q", rope_tolerance(c, q, pos, dt))
      .tolerance("k", rope_tolerance(keys, k, pos, dt))
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

// Tolerances: rope_tolerance, the doc comment's bound for each case's data and positions.

// Llama-like heads (head_dim = rot_dim = 128): 56 items (f16/bf16: 8 vector columns a head)
// or 112 (f32: 16) on 32 threads, so the grid-stride loop wraps.
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

// 11 heads: two full blocks of 4 and a block of 3 per token.
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

// One token, one head of 16 dims (fewer heads than a block): the smallest problem the rules
// allow.
IRON_TEST(iron_rope_gptj, single_chunk, F32, F16, BF16) {
  return rope_setup({1, 1, 16, 16, 2048, true}, 1, 32, dt, rng);
}

IRON_TEST(iron_rope_gptj, partial_head_block, F32, F16, BF16) {
  return rope_setup({2, 9, 32, 32, 2048, true}, 1, 32, dt, rng);
}

// rot_dim 16 of head_dim 64 in the NeoX layout: one vector column a head in f16/bf16 (two in
// f32), and 6 heads: a block of 4 and one of 2.
IRON_TEST(iron_rope_neox, narrow_rotary, F32, F16, BF16) {
  return rope_setup({4, 6, 64, 16, 2048}, 2, 32, dt, rng);
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

// 60 threads, not a multiple of a head's 8 (16) vector columns, so a thread's column changes
// from one item to the next; 6 heads, a block of 4 and one of 2.
IRON_TEST(iron_rope_inplace_gptj, odd_grid, F32, F16, BF16) {
  return rope_setup({5, 6, 128, 128, 2048, true, false, true}, 3, 20, dt, rng);
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

// A partial head block (7 heads: 4 and 3) on a grid whose threads are not a multiple of the
// columns.
IRON_TEST(iron_rope_table_inplace_gptj, partial_head_block, F32, F16, BF16) {
  return rope_setup({3, 7, 64, 64, 300, true, true, true}, 2, 20, dt, rng);
}

// Grouped-query heads (8 query heads on 2 key heads), full rotary: 7 tokens · 2 head blocks · 8
// vector columns = 112 items for q and 56 for k in f16/bf16 (twice that in f32), on 32 threads.
IRON_TEST(iron_rope_qk_inplace_neox, grouped_heads, F32, F16, BF16) {
  return rope_qk_setup({7, 8, 128, 128, 2048}, 2, 1, 32, dt, rng);
}

// Partial rotary (dims 32 .. 80 keep their values) and partial head blocks in both tensors
// (6 query heads: 4 and 2; 3 key heads).
IRON_TEST(iron_rope_qk_inplace_neox, partial_rotary, F32, F16, BF16) {
  return rope_qk_setup({5, 6, 80, 32, 2048}, 3, 1, 32, dt, rng);
}

// More key heads than query heads: k's rotation has the more items.
IRON_TEST(iron_rope_qk_inplace_gptj, more_key_heads, F32, F16, BF16) {
  return rope_qk_setup({9, 1, 64, 16, 2048, true}, 5, 1, 32, dt, rng);
}

// One token, one head of 16 dims in each: the smallest problem the rules allow.
IRON_TEST(iron_rope_qk_inplace_gptj, single_chunk, F32, F16, BF16) {
  return rope_qk_setup({1, 1, 16, 16, 2048, true}, 1, 1, 32, dt, rng);
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

namespace {

/// The Llama-3-8B prefill's q and k for iron_rope_qk_inplace_{neox,gptj}: 8192 tokens, 32 query
/// heads on 8 key heads of 128. bytes_moved counts q and k once each way and the positions.
bench::BenchSetup rope_qk_bench(bool interleaved, DType dt) {
  constexpr std::size_t kTokens = 8192;
  constexpr std::size_t kHeadsQ = 32;
  constexpr std::size_t kHeadsKv = 8;
  constexpr std::size_t kDim = 128;
  std::vector<std::uint32_t> positions(kTokens);
  std::iota(positions.begin(), positions.end(), 0u);
  auto bench = bench::BenchSetup(
      interleaved ? "iron_rope_qk_inplace_gptj" : "iron_rope_qk_inplace_neox", dt);
  bench.output("q", kTokens * kHeadsQ * kDim)
      .output("k", kTokens * kHeadsKv * kDim)
      .input_u32("positions", positions)
      .constant("tokens", kTokens)
      .constant("heads_q", kHeadsQ)
      .constant("heads_kv", kHeadsKv)
      .constant("head_dim", kDim)
      .constant("rot_dim", kDim)
      .constant("base", kBase);
  return bench.grid(bench::geometry_grid(bench))
      .bytes_moved(2 * kTokens * (kHeadsQ + kHeadsKv) * kDim * dtype_size(dt) +
                   kTokens * sizeof(std::uint32_t))
      .peer(interleaved ? "rope_qk_gptj" : "rope_qk_neox", {{"tokens", kTokens},
                                                            {"heads_q", kHeadsQ},
                                                            {"heads_kv", kHeadsKv},
                                                            {"head_dim", kDim},
                                                            {"rot_dim", kDim},
                                                            {"base", kBase}});
}

}  // namespace

IRON_BENCH(iron_rope_qk_inplace_neox, tokens8k_heads32_kv8_dim128, BF16) {
  return rope_qk_bench(false, dt);
}
IRON_BENCH(iron_rope_qk_inplace_gptj, tokens8k_heads32_kv8_dim128, BF16) {
  return rope_qk_bench(true, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
