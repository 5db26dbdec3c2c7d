/// iron_sdpa_decode, iron_sdpa_decode_paged, iron_sdpa_decode_combine[_lse]: attention of one or
/// a few new query tokens per sequence against a long KV cache, split along the keys
/// (flash-decoding), then combined:
///
///   out[b, t, h] = Σ_j p_j · v[b, h_kv, j] / (Σ_j p_j + e^{sinks[h]}),
///   p_j = e^{scale · q[b, t, h] · k[b, h_kv, j]},   h_kv = h / (heads_q / heads_kv),
///
/// over the keys j that query token t sees. Token t of sequence b sits at position
/// pos = seq_lens[b] − q_tokens + t (the new tokens are already in the cache) and sees keys
/// j ≤ pos (causal among the new tokens) and, with window w > 0, only j > pos − w. `sinks[h]` is
/// a logit that joins the denominator only (−inf: none). `lse` (the _lse form) is
/// ln(Σ_j p_j + e^{sinks[h]}), natural-log units of the scaled logits.
///
/// Two launches. iron_sdpa_decode (or _paged) cuts the keys [lo, len) that some new token sees
/// (lo = max(0, len − q_tokens + 1 − w) with a window, else 0) into `splits` runs of
/// c = 16·⌈(len − lo) / (16·splits)⌉ keys: split s holds [lo + s·c, lo + (s + 1)·c) ∩ [lo, len)
/// (empty when past len). For every (b, t, h) and split s it writes the split's own attention,
/// partial_out = Σ_{j∈s} p_j·v_j / Σ_{j∈s} p_j (0 for no key) and
/// partial_lse = ln Σ_{j∈s} p_j (−inf for no key). iron_sdpa_decode_combine merges the splits
/// and the sink: M = max(sink, max_s lse_s), out = Σ_s e^{lse_s − M}·o_s / (e^{sink − M} +
/// Σ_s e^{lse_s − M}); _lse also writes M + ln(that denominator).
///
/// `splits` is a constexpr of both launches and sizes the partial tensors, so the combine merges
/// exactly what the decode wrote. Pick it with sdpa_decode::splits() (decode_splits.hpp), from
/// batch, heads_kv, the row blocks, the cache length and the device's multiprocessors: the count
/// whose rounds of resident groups waste the least (a partial last round, a group's fixed cost),
/// no split under 256 keys of the longest sequence, at most 64. The tests and benches call it (or
/// pin a count to cover a case); the geometries take the count from the constexpr.
///
/// ## How it runs
/// iron_sdpa_decode: one group of 128 threads per (split, block of 4 query rows, KV head,
/// sequence). A row is a (token, query head) pair of the KV head's q_tokens · heads_q / heads_kv:
/// every query head of the KV group and every new token share the group, so K and V are read
/// once for all of them (a KV head with more than 4 rows takes several blocks, adjacent in the
/// grid, which read the same keys at about the same time, from L2). Two bodies compute a group:
/// the tile body for f16 and bf16 at head_dim 64 and 128 (decode_tiles.hpp), the lane body for
/// the rest. Tile body: the block's rows are the top of a 16-row A fragment of queries (zeros
/// below), kept in registers; a ring of 64-key stages (two, for the default knob) receives the
/// K and V rows, and each simdgroup takes 16 keys a stage: its scores s = q · kᵀ are D / 16
/// tensor-core fragment products, masked (−inf) only where a window, the causal diagonal or the
/// split's end cuts its keys, the online softmax runs on fragment rows in log2 units (the scale
/// folded into the exponent when positive), and o += p · v with the weights rounded to T; at the
/// end the four simdgroups' rows merge through shared memory placed over the spent ring, a thread
/// for four elements of a row. Lane body: a three-stage `pipelined` ring receives each step's K and
/// V rows (512 vectors of 8 elements of each, 16 bytes in f16/bf16: 32 keys of 128) by asynchronous
/// copies while the step before is computed; the paged form looks each key's page up in block_table
/// there, and nothing else differs (decode_kv.hpp). A key belongs to lk lanes (lk = head_dim / 8
/// rounded up to a power of two), each holding 8 of its elements and of each row's query, so a
/// simdgroup takes 32 / lk keys side by side, 4 keys per lane a step. Scores are dot products in
/// f32 summed across the key's lanes by shuffles, in log2 units (the query is scaled by scale ·
/// log2 e once); masks apply only to steps a window, the causal diagonal or the split's end cuts. A
/// block of several rows at lk = 16 (head_dim 72 … 128) sums its 16 scores a lane (4 keys × 4 rows)
/// by a reduce-scatter instead (15 shuffles, not 64: each lane holds its keys and rows in a
/// lane-dependent order, so every round keeps and sends fixed slots), takes one exp2 for the one
/// score it ends with and gathers the 16 weights back by shuffles; the same tree of 16 partial sums
/// and the same weights. Each lane keeps an online softmax (running max, weight sum, 8 weighted
/// value elements per row); a single-row block (multi-head attention, heads_q = heads_kv, and
/// q_tokens = 1) computes one row instead of 4. At the end the states merge across lanes (shuffles)
/// and simdgroups (shared memory, into simdgroup 0), whose lanes write the rows, 8 elements a lane.
/// iron_sdpa_decode_combine: one group per (b, t, h) row, four elements of the row a thread.
///
/// ## Error bound
/// u = 2^-24. Let, for one row and split, s_j be the scaled logits in log2 units, A =
/// max_j |scale|·log2 e·Σ_d |q_d·k_jd|, Y = max_j s_j − min_j s_j, n the split's keys and
/// V = max_j |v_j| over them. Each s_j errs by γ·A with γ = γ_16 on the lane body (q rounded
/// once after scaling by fl(scale·log2 e), 8 fused products per lane, at most 5 shuffle
/// additions) and γ = γ_{D+2} on the tile body (D exact products summed in f32, the scale's
/// rounding and the fused shift); each weight 2^{s_j − m} then errs relatively by
/// ε = ln 2·(2γ·A + u·Y) + 5u (the subtraction, exp2's 2 ulp or exp2.approx's 5u; flushed
/// subnormal weights add under 2^-126 each), and on the tile body by u_T more in the numerator
/// only (the weight rounded to T before its product with v: u_T·V more below). The running max
/// cancels between numerator and denominator: every rescaling multiplies both by the same
/// factor. Each sum passes through at most n + 16 roundings. So
/// |partial_out − exact| ≤ (2ε + 2γ_(n+16) + u_T)·V (u_T on the tile body only) and
/// |partial_lse − exact| ≤ γ·A·ln 2 + γ_(n+18) + 4u·|partial_lse|.
/// iron_sdpa_decode_combine, from its f32 inputs: with Z = max_s |lse_s − M| over the splits
/// with keys, the weights err by ε_c = u·Z + 4u (expf's 2 ulp, the subtraction) and the sums by
/// γ_(S+2), so |out − exact| ≤ (2ε_c + 2γ_(S+2))·max_s |o_s|, then the rounding to T; lse errs
/// by γ_(S+2) + 2u + u·|lse|.
///
/// ## Layout
/// - `q [batch, q_tokens, heads_q, head_dim]` T, `out [batch, q_tokens, heads_q, head_dim]` T
/// - `k_cache, v_cache [batch, heads_kv, max_seq, head_dim]` T
/// - `_paged`: `k_pages, v_pages [num_pages, heads_kv, page_size, head_dim]` T and
///   `block_table [batch, pages_per_seq]` u32: logical page j of sequence b is physical page
///   block_table[b, j] (< num_pages); only the pages of keys below seq_lens[b] are read.
///   page_size a power of two ≤ 256 (16 … 256 in use)
/// - `seq_lens [batch]` u32: the sequence's keys including its q_tokens new ones,
///   q_tokens ≤ seq_lens[b] ≤ max_seq (pages_per_seq · page_size)
/// - `partial_out [batch, q_tokens, heads_q, splits, head_dim]` f32,
///   `partial_lse [batch, q_tokens, heads_q, splits]` f32
/// - `sinks [heads_q]` f32 (−inf: no sink), `lse [batch, q_tokens, heads_q]` f32 (_lse)
/// - head_dim a multiple of 8, at most 256; heads_q a multiple of heads_kv (GQA; 1 is MQA);
///   `scale` the softmax scale; `window` 0 (none) or the window in keys
///
/// ## Dispatch
/// iron_sdpa_decode[_paged]: tiled, exactly 128 threads, a grid of splits · row_blocks ×
/// heads_kv × batch groups with row_blocks = ⌈q_tokens · heads_q / heads_kv / 4⌉. The contract
/// requires 8 ≤ head_dim ≤ 256; the grid's rules also refuse a heads_q that is no multiple of
/// heads_kv and (paged) a page_size that does not divide 256: each multiplies an extent by a
/// factor that is 1 when the rule holds and 0 otherwise. iron_sdpa_decode_combine[_lse]: reduction,
/// one group per (b, t, h) row (batch · q_tokens · heads_q groups), any tpg ≤ 1024 (head_dim / 4 is
/// best).
#include <algorithm>
#include <array>
#include <iron/iron.hpp>
#include <limits>
#include <string>

#include "decode_kv.hpp"
#include "decode_splits.hpp"
#include "decode_tiles.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {

/// The grid and the layouts both split kernels share; `paged_rule` multiplies the z extent.
template <class T>
void declare_decode(const Tensor<T>& q, const Tensor<u32>& seq_lens, const Out<f32>& partial_out,
                    const Out<f32>& partial_lse, const std::string& z_rule) {
  dispatch(tiled, {exactly(sdpa_decode::kThreads)});
  grid("[splits * ceil_div(q_tokens * (heads_q / heads_kv), " + std::to_string(sdpa_decode::kRows) +
       "), heads_kv * (heads_q / heads_kv * heads_kv / heads_q), " + z_rule + "]");
  layout(q, "[batch, q_tokens, heads_q, head_dim]");
  layout(seq_lens, "[batch]");
  layout(partial_out, "[batch, q_tokens, heads_q, splits, head_dim]");
  layout(partial_lse, "[batch, q_tokens, heads_q, splits]");
}

sdpa_decode::Problem problem(const Expr<u32>& q_tokens, const Expr<u32>& heads_q,
                             const Expr<u32>& heads_kv, const Expr<u32>& head_dim,
                             const Expr<u32>& splits, const Expr<u32>& window,
                             const Expr<f32>& scale) {
  return {q_tokens, heads_q, heads_kv, head_dim, splits, window, scale};
}

}  // namespace

IRON_KERNEL(iron_sdpa_decode,
            (Tensor<T> q, Tensor<T> k_cache, Tensor<T> v_cache, Tensor<u32> seq_lens,
             Out<f32> partial_out, Out<f32> partial_lse, Constexpr<u32> batch,
             Constexpr<u32> q_tokens, Constexpr<u32> heads_q, Constexpr<u32> heads_kv,
             Constexpr<u32> head_dim, Constexpr<u32> max_seq, Constexpr<u32> splits,
             Constexpr<u32> window, Constexpr<f32> scale)) {
  declare_decode(q, seq_lens, partial_out, partial_lse, "batch");
  layout(k_cache, "[batch, heads_kv, max_seq, head_dim]");
  layout(v_cache, "[batch, heads_kv, max_seq, head_dim]");
  require_multiple_of(head_dim, 8);
  require_at_least(head_dim, "8");
  require_at_most(head_dim, std::to_string(sdpa_decode::kMaxHeadDim));  // part_acc's rows
  const sdpa_decode::ContiguousKv<T> kv{
      k_cache, v_cache, (group_id<2>() * heads_kv + group_id<1>()) * max_seq, head_dim};
  sdpa_decode::attend<T>(q, kv, seq_lens,
                         problem(q_tokens, heads_q, heads_kv, head_dim, splits, window, scale),
                         partial_out, partial_lse, tuned("stages"));
  static_cast<void>(batch);
}

IRON_KERNEL(iron_sdpa_decode_paged,
            (Tensor<T> q, Tensor<T> k_pages, Tensor<T> v_pages, Tensor<u32> block_table,
             Tensor<u32> seq_lens, Out<f32> partial_out, Out<f32> partial_lse, Constexpr<u32> batch,
             Constexpr<u32> q_tokens, Constexpr<u32> heads_q, Constexpr<u32> heads_kv,
             Constexpr<u32> head_dim, Constexpr<u32> num_pages, Constexpr<u32> page_size,
             Constexpr<u32> pages_per_seq, Constexpr<u32> splits, Constexpr<u32> window,
             Constexpr<f32> scale)) {
  // page_size must divide 256: a power of two up to 256 (the factor is 0 otherwise).
  declare_decode(q, seq_lens, partial_out, partial_lse,
                 "batch * (256 / page_size * page_size / 256)");
  layout(k_pages, "[num_pages, heads_kv, page_size, head_dim]");
  layout(v_pages, "[num_pages, heads_kv, page_size, head_dim]");
  layout(block_table, "[batch, pages_per_seq]");
  require_multiple_of(head_dim, 8);
  require_at_least(head_dim, "8");
  require_at_most(head_dim, std::to_string(sdpa_decode::kMaxHeadDim));  // part_acc's rows
  const sdpa_decode::PagedKv<T> kv{
      k_pages,       v_pages,  block_table, group_id<2>() * pages_per_seq,
      group_id<1>(), heads_kv, page_size,   sdpa_decode::page_shift_of(page_size),
      head_dim};
  sdpa_decode::attend<T>(q, kv, seq_lens,
                         problem(q_tokens, heads_q, heads_kv, head_dim, splits, window, scale),
                         partial_out, partial_lse, tuned("stages"));
  static_cast<void>(batch);
  static_cast<void>(num_pages);
}

namespace {

/// out (and lse) of one (b, t, h) row from its splits' partials and the head's sink.
template <class T, bool WITH_LSE>
void combine(const Tensor<f32>& partial_out, const Tensor<f32>& partial_lse,
             const Tensor<f32>& sinks, const Out<T>& out, const Out<f32>* lse,
             const Expr<u32>& heads_q, const Expr<u32>& head_dim, const Expr<u32>& splits) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  auto row = program_id<0>();
  auto sink = load(sinks[row % heads_q]);
  Var<f32> top = sink;
  for (auto s : range(0u, splits)) top = max(top, load(partial_lse[row * splits + s]));
  auto shift = select(top == kNegInf, 0.0f, top.get());
  Var<f32> total = exp(sink - shift);
  for (auto s : range(0u, splits)) total += exp(load(partial_lse[row * splits + s]) - shift);
  auto inv = 1.0f / select(total > 0.0f, total.get(), 1.0f);
  for (auto d : range(thread_id<0>() * 4u, head_dim, group_size<0>() * 4u)) {
    Regs<f32, 4> o(0.0f);
    for (auto s : range(0u, splits)) {
      auto weight = exp(load(partial_lse[row * splits + s]) - shift);
      const auto part = load_lanes<4>(partial_out[(row * splits + s) * head_dim + d]);
      for (u32 e = 0; e < 4; ++e) o[e] = fma(part[e], weight, o[e].get());
    }
    std::array<Expr<T>, 4> y;
    for (u32 e = 0; e < 4; ++e) y[e] = cast<T>(o[e].get() * inv);
    store_lanes(out[row * head_dim + d], y);
  }
  if constexpr (WITH_LSE) {
    IRON_IF(thread_id<0>() == 0u) { store((*lse)[row], shift + log(total.get())); }
  }
}

void declare_combine(const Tensor<f32>& partial_out, const Tensor<f32>& partial_lse,
                     const Tensor<f32>& sinks) {
  dispatch(reduction, {at_most(1024)});
  grid("[batch * q_tokens * heads_q, 1, 1]");
  layout(partial_out, "[batch, q_tokens, heads_q, splits, head_dim]");
  layout(partial_lse, "[batch, q_tokens, heads_q, splits]");
  layout(sinks, "[heads_q]");
}

}  // namespace

IRON_KERNEL(iron_sdpa_decode_combine,
            (Tensor<f32> partial_out, Tensor<f32> partial_lse, Tensor<f32> sinks, Out<T> out,
             Constexpr<u32> batch, Constexpr<u32> q_tokens, Constexpr<u32> heads_q,
             Constexpr<u32> head_dim, Constexpr<u32> splits)) {
  declare_combine(partial_out, partial_lse, sinks);
  layout(out, "[batch, q_tokens, heads_q, head_dim]");
  require_multiple_of(head_dim, 8);
  combine<T, false>(partial_out, partial_lse, sinks, out, nullptr, heads_q, head_dim, splits);
  static_cast<void>(batch);
  static_cast<void>(q_tokens);
}

IRON_KERNEL(iron_sdpa_decode_combine_lse,
            (Tensor<f32> partial_out, Tensor<f32> partial_lse, Tensor<f32> sinks, Out<T> out,
             Out<f32> lse, Constexpr<u32> batch, Constexpr<u32> q_tokens, Constexpr<u32> heads_q,
             Constexpr<u32> head_dim, Constexpr<u32> splits)) {
  declare_combine(partial_out, partial_lse, sinks);
  layout(out, "[batch, q_tokens, heads_q, head_dim]");
  layout(lse, "[batch, q_tokens, heads_q]");
  require_multiple_of(head_dim, 8);
  combine<T, true>(partial_out, partial_lse, sinks, out, &lse, heads_q, head_dim, splits);
  static_cast<void>(batch);
  static_cast<void>(q_tokens);
}

namespace {

dsl::Geometry decode_geometry(const dsl::GeometryQuery& q) {
  const std::uint64_t blocks = sdpa_decode::row_blocks(
      q.constant("q_tokens"), q.constant("heads_q"), q.constant("heads_kv"));
  const std::uint64_t x = q.constant("splits") * blocks;
  return {{static_cast<std::uint32_t>(std::min<std::uint64_t>(x, 0xFFFFFFFFu)),
           static_cast<std::uint32_t>(q.constant("heads_kv")),
           static_cast<std::uint32_t>(q.constant("batch"))},
          {sdpa_decode::kThreads, 1, 1}};
}

dsl::Geometry combine_geometry(const dsl::GeometryQuery& q) {
  const std::uint64_t rows = q.constant("batch") * q.constant("q_tokens") * q.constant("heads_q");
  return Geometry::per_row(rows,
                           q.threads_per_group(whole_simdgroups(q.constant("head_dim") / 4, 1024)));
}

}  // namespace

// The grid is fixed by the constexprs: splits (chosen by sdpa_decode::splits) × row blocks ×
// heads_kv × batch, 128 threads.
IRON_GEOMETRY(iron_sdpa_decode) { return decode_geometry(q); }
IRON_GEOMETRY(iron_sdpa_decode_paged) { return decode_geometry(q); }
namespace {
/// The ring's depth: three stages by default (three groups a multiprocessor, sdpa_decode::splits
/// counts on it); deeper rings keep more of a group's keys in flight, fewer groups resident.
TuningSpace decode_tuning_space() {
  return TuningSpace{}.knob("stages", {sdpa_decode::kStages, 2, 4, 6});
}
}  // namespace
IRON_TUNING(iron_sdpa_decode) { return decode_tuning_space(); }
IRON_TUNING(iron_sdpa_decode_paged) { return decode_tuning_space(); }
// One group per row, a thread per four elements of the head.
IRON_GEOMETRY(iron_sdpa_decode_combine) { return combine_geometry(q); }
IRON_GEOMETRY(iron_sdpa_decode_combine_lse) { return combine_geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <cmath>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <numeric>
#include <random>

namespace iron::kernels {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A decode problem: the shape, the sequences' lengths and the data (already rounded to T).
struct Decode {
  std::size_t batch, q_tokens, heads_q, heads_kv, head_dim, max_seq;
  std::vector<std::uint32_t> lens;
  std::uint32_t window = 0;
  std::uint32_t splits = 1;
  float scale = 0.0f;
  std::vector<float> q, k, v;  ///< q [b, t, hq, d]; k, v [b, hkv, max_seq, d]
  std::vector<float> sinks;    ///< [heads_q]

  std::size_t rows() const { return batch * q_tokens * heads_q; }
  std::size_t q_at(std::size_t b, std::size_t t, std::size_t h) const {
    return ((b * q_tokens + t) * heads_q + h) * head_dim;
  }
  std::size_t kv_at(std::size_t b, std::size_t h, std::size_t j) const {
    return ((b * heads_kv + h) * max_seq + j) * head_dim;
  }
  /// The keys token t of sequence b sees: [lo, hi).
  std::pair<std::size_t, std::size_t> seen(std::size_t b, std::size_t t) const {
    const std::size_t pos = lens[b] - q_tokens + t;
    const std::size_t lo = window == 0 || pos + 1 < window ? 0 : pos + 1 - window;
    return {lo, pos + 1};
  }
  /// Split s of sequence b's keys, by the kernel's definition (the doc comment).
  std::pair<std::size_t, std::size_t> split_keys(std::size_t b, std::size_t s) const {
    const std::size_t lo = seen(b, 0).first, len = lens[b];
    const std::size_t align = sdpa_decode::kSplitAlign;
    const std::size_t chunk = (len - lo + splits * align - 1) / (splits * align) * align;
    const std::size_t start = std::min(lo + s * chunk, len);
    return {start, std::min(start + chunk, len)};
  }
  /// scale · q · k of row (b, t, h) and key j, and Σ|scale · q_d · k_d|.
  std::pair<double, double> logit(std::size_t b, std::size_t t, std::size_t h,
                                  std::size_t j) const {
    const std::size_t hk = h / (heads_q / heads_kv);
    double dot = 0.0, mag = 0.0;
    for (std::size_t d = 0; d < head_dim; ++d) {
      const double x = double{q[q_at(b, t, h) + d]} * k[kv_at(b, hk, j) + d];
      dot += x;
      mag += std::fabs(x);
    }
    return {scale * dot, std::fabs(scale) * mag};
  }
};

/// Random data for `d`'s shape: q, k, v uniform in [-2, 2) rounded through dt; the cache rows
/// past each sequence's length are NaN (a kernel that reads them fails); with `sinks`, sinks in
/// [-1, 3) on even heads and −inf (none) on odd ones, else −inf everywhere.
void fill(Decode& d, bool sinks, DType dt, testing::Rng& rng) {
  d.q = testing::round_through(rng.uniform(d.rows() * d.head_dim, -2.0f, 2.0f), dt);
  const std::size_t cached = d.batch * d.heads_kv * d.max_seq * d.head_dim;
  d.k = testing::round_through(rng.uniform(cached, -2.0f, 2.0f), dt);
  d.v = testing::round_through(rng.uniform(cached, -2.0f, 2.0f), dt);
  for (std::size_t b = 0; b < d.batch; ++b) {
    for (std::size_t h = 0; h < d.heads_kv; ++h) {
      for (std::size_t j = d.lens[b]; j < d.max_seq; ++j) {
        for (std::size_t e = 0; e < d.head_dim; ++e) {
          d.k[d.kv_at(b, h, j) + e] = std::numeric_limits<float>::quiet_NaN();
          d.v[d.kv_at(b, h, j) + e] = std::numeric_limits<float>::quiet_NaN();
        }
      }
    }
  }
  d.sinks = rng.uniform(d.heads_q, -1.0f, 3.0f);
  for (std::size_t h = 0; h < d.heads_q; ++h) {
    if (!sinks || h % 2 == 1) d.sinks[h] = -std::numeric_limits<float>::infinity();
  }
}

/// Attention of row (b, t, h) over the keys it sees within [from, to), with `sink` in the
/// denominator, from the definition in double: the output row and ln(Σ e^x + e^sink). No key
/// and no sink: zeros and −inf.
std::pair<std::vector<double>, double> attention(const Decode& d, std::size_t b, std::size_t t,
                                                 std::size_t h, std::size_t from, std::size_t to,
                                                 double sink) {
  const auto [lo, hi] = d.seen(b, t);
  const std::size_t first = std::max(lo, from), last = std::min(hi, to);
  std::vector<double> x;
  for (std::size_t j = first; j < last; ++j) x.push_back(d.logit(b, t, h, j).first);
  double top = sink;
  for (double xi : x) top = std::max(top, xi);
  std::vector<double> out(d.head_dim, 0.0);
  if (top == -kInf) return {out, -kInf};
  double total = std::exp(sink - top);
  const std::size_t hk = h / (d.heads_q / d.heads_kv);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double p = std::exp(x[i] - top);
    total += p;
    for (std::size_t e = 0; e < d.head_dim; ++e) out[e] += p * d.v[d.kv_at(b, hk, first + i) + e];
  }
  for (double& o : out) o /= total;
  return {out, top + std::log(total)};
}

/// What iron_sdpa_decode writes (each split's attention), and the largest A (in log2 units), Y
/// (log2 units), |v| and split length over every row and split: the error bound's terms.
struct Partials {
  std::vector<float> out, lse;
  double a = 0.0, y = 0.0, v = 0.0, lse_max = 0.0;
  std::size_t n = 0;
};

Partials partials(const Decode& d) {
  Partials p;
  p.out.assign(d.rows() * d.splits * d.head_dim, 0.0f);
  p.lse.assign(d.rows() * d.splits, 0.0f);
  for (float x : d.v) {
    if (!std::isnan(x)) p.v = std::max(p.v, double{std::fabs(x)});
  }
  const double log2e = 1.0 / std::log(2.0);
  for (std::size_t b = 0; b < d.batch; ++b) {
    for (std::size_t t = 0; t < d.q_tokens; ++t) {
      for (std::size_t h = 0; h < d.heads_q; ++h) {
        const std::size_t row = (b * d.q_tokens + t) * d.heads_q + h;
        for (std::size_t s = 0; s < d.splits; ++s) {
          const auto [from, to] = d.split_keys(b, s);
          p.n = std::max(p.n, to - from);
          const auto [o, lse] = attention(d, b, t, h, from, to, -kInf);
          for (std::size_t e = 0; e < d.head_dim; ++e) {
            p.out[(row * d.splits + s) * d.head_dim + e] = static_cast<float>(o[e]);
          }
          p.lse[row * d.splits + s] = static_cast<float>(lse);
          if (lse != -kInf) p.lse_max = std::max(p.lse_max, std::fabs(lse));
          const auto [lo, hi] = d.seen(b, t);
          double top = -kInf, bottom = kInf;
          for (std::size_t j = std::max(lo, from); j < std::min(hi, to); ++j) {
            const auto [x, mag] = d.logit(b, t, h, j);
            p.a = std::max(p.a, mag * log2e);
            top = std::max(top, x * log2e);
            bottom = std::min(bottom, x * log2e);
          }
          if (top > bottom) p.y = std::max(p.y, top - bottom);
        }
      }
    }
  }
  return p;
}

/// The whole attention with the sinks: out [rows, head_dim] and lse [rows].
std::pair<std::vector<float>, std::vector<float>> full(const Decode& d) {
  std::vector<float> out(d.rows() * d.head_dim), lse(d.rows());
  for (std::size_t b = 0; b < d.batch; ++b) {
    for (std::size_t t = 0; t < d.q_tokens; ++t) {
      for (std::size_t h = 0; h < d.heads_q; ++h) {
        const std::size_t row = (b * d.q_tokens + t) * d.heads_q + h;
        const auto [o, l] = attention(d, b, t, h, 0, d.lens[b], d.sinks[h]);
        for (std::size_t e = 0; e < d.head_dim; ++e)
          out[row * d.head_dim + e] = static_cast<float>(o[e]);
        lse[row] = static_cast<float>(l);
      }
    }
  }
  return {out, lse};
}

/// The split kernels' bound (the doc comment) for these partials, of the body that runs d in dt:
/// the tile body's scores sum head_dim products, and it rounds the weights to T.
void decode_tolerances(testing::TestSetup& setup, const Partials& p, const Decode& d, DType dt) {
  namespace tol = testing::tolerance;
  const double u = tol::unit_roundoff(DType::F32);
  const bool tiles = sdpa_decode::takes_tiles(dt != DType::F32, d.head_dim);
  const double dot = tiles ? tol::gamma(d.head_dim + 2) : tol::gamma(16);
  const double rounded = tiles ? tol::unit_roundoff(dt) : 0.0;
  const double eps = std::log(2.0) * (2 * dot * p.a + u * p.y) + 5 * u;
  setup.tolerance(
      "partial_out",
      tol::stored(DType::F32, (2 * eps + 2 * tol::gamma(p.n + 16) + rounded) * p.v, 0.0));
  setup.tolerance("partial_lse",
                  tol::stored(DType::F32, dot * p.a * std::log(2.0) + tol::gamma(p.n + 18), 4 * u));
}

/// Constexprs both split kernels take.
template <class Setup>
void decode_constants(Setup& setup, const Decode& d) {
  setup.constant("batch", static_cast<double>(d.batch))
      .constant("q_tokens", static_cast<double>(d.q_tokens))
      .constant("heads_q", static_cast<double>(d.heads_q))
      .constant("heads_kv", static_cast<double>(d.heads_kv))
      .constant("head_dim", static_cast<double>(d.head_dim))
      .constant("splits", static_cast<double>(d.splits))
      .constant("window", static_cast<double>(d.window))
      .constant("scale", static_cast<double>(d.scale));
}

Decode shape(std::size_t batch, std::size_t q_tokens, std::size_t heads_q, std::size_t heads_kv,
             std::size_t head_dim, std::size_t max_seq, std::vector<std::uint32_t> lens,
             std::uint32_t splits, std::uint32_t window = 0) {
  Decode d{};
  d.batch = batch;
  d.q_tokens = q_tokens;
  d.heads_q = heads_q;
  d.heads_kv = heads_kv;
  d.head_dim = head_dim;
  d.max_seq = max_seq;
  d.lens = std::move(lens);
  d.window = window;
  d.splits = splits;
  d.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  return d;
}

testing::TestSetup decode_setup(Decode d, DType dt, testing::Rng& rng,
                                const dsl::TuningConfig& config = {}) {
  fill(d, false, dt, rng);
  const Partials p = partials(d);
  testing::TestSetup setup("iron_sdpa_decode", dt, config);
  setup.input("q", d.q)
      .input("k_cache", d.k)
      .input("v_cache", d.v)
      .input_u32("seq_lens", d.lens)
      .output("partial_out", p.out.size())
      .output("partial_lse", p.lse.size())
      .constant("max_seq", static_cast<double>(d.max_seq))
      .expect("partial_out", p.out)
      .expect("partial_lse", p.lse);
  decode_constants(setup, d);
  decode_tolerances(setup, p, d, dt);
  return setup.grid(testing::geometry_grid(setup));
}

/// The same problem in a paged cache: every sequence's pages at shuffled physical pages, the
/// block table's entries past a sequence's length and two spare pages pointing at NaN pages.
/// The expected partials are the contiguous cache's.
testing::TestSetup paged_setup(Decode d, std::size_t page_size, DType dt, testing::Rng& rng) {
  fill(d, false, dt, rng);
  const Partials p = partials(d);
  const std::size_t per_seq = (d.max_seq + page_size - 1) / page_size;
  const std::size_t pages = d.batch * per_seq + 2;
  std::vector<std::uint32_t> order(pages);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937 engine(rng.integers(1, 0, ~0u)[0]);
  std::shuffle(order.begin(), order.end(), engine);
  const std::size_t page_elems = d.heads_kv * page_size * d.head_dim;
  std::vector<float> kp(pages * page_elems, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> vp(kp);
  std::vector<std::uint32_t> table(d.batch * per_seq);
  const std::uint32_t nan_page = order[pages - 1];
  for (std::size_t b = 0; b < d.batch; ++b) {
    for (std::size_t j = 0; j < per_seq; ++j) {
      const bool used = j * page_size < d.lens[b];
      const std::uint32_t page = used ? order[b * per_seq + j] : nan_page;
      table[b * per_seq + j] = page;
      if (!used) continue;
      for (std::size_t h = 0; h < d.heads_kv; ++h) {
        for (std::size_t o = 0; o < page_size && j * page_size + o < d.max_seq; ++o) {
          for (std::size_t e = 0; e < d.head_dim; ++e) {
            const std::size_t at = ((page * d.heads_kv + h) * page_size + o) * d.head_dim + e;
            kp[at] = d.k[d.kv_at(b, h, j * page_size + o) + e];
            vp[at] = d.v[d.kv_at(b, h, j * page_size + o) + e];
          }
        }
      }
    }
  }
  testing::TestSetup setup("iron_sdpa_decode_paged", dt);
  setup.input("q", d.q)
      .input("k_pages", kp)
      .input("v_pages", vp)
      .input_u32("block_table", table)
      .input_u32("seq_lens", d.lens)
      .output("partial_out", p.out.size())
      .output("partial_lse", p.lse.size())
      .constant("num_pages", static_cast<double>(pages))
      .constant("page_size", static_cast<double>(page_size))
      .constant("pages_per_seq", static_cast<double>(per_seq))
      .expect("partial_out", p.out)
      .expect("partial_lse", p.lse);
  decode_constants(setup, d);
  decode_tolerances(setup, p, d, dt);
  return setup.grid(testing::geometry_grid(setup));
}

/// The combine from the partials of a real problem (the oracle's, rounded to f32) against the
/// whole attention computed directly; the bound adds the inputs' rounding (u·|lse_s| to each
/// weight, u·|o_s| to each output).
testing::TestSetup combine_setup(Decode d, bool sinks, bool with_lse, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  fill(d, sinks, dt, rng);
  const Partials p = partials(d);
  const auto [out, lse] = full(d);
  double z = 0.0, top = 0.0;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    double m = d.sinks[r % d.heads_q];
    for (std::size_t s = 0; s < d.splits; ++s) m = std::max(m, double{p.lse[r * d.splits + s]});
    for (std::size_t s = 0; s < d.splits; ++s) {
      if (p.lse[r * d.splits + s] != -kInf) z = std::max(z, m - p.lse[r * d.splits + s]);
    }
    top = std::max(top, std::fabs(m));
  }
  const double u = tol::unit_roundoff(DType::F32);
  const double eps = u * z + 4 * u + u * p.lse_max;
  const std::string kernel = with_lse ? "iron_sdpa_decode_combine_lse" : "iron_sdpa_decode_combine";
  testing::TestSetup setup(kernel, dt);
  setup.input("partial_out", p.out)
      .input("partial_lse", p.lse)
      .input("sinks", d.sinks)
      .output("out", out.size())
      .constant("batch", static_cast<double>(d.batch))
      .constant("q_tokens", static_cast<double>(d.q_tokens))
      .constant("heads_q", static_cast<double>(d.heads_q))
      .constant("head_dim", static_cast<double>(d.head_dim))
      .constant("splits", static_cast<double>(d.splits))
      .expect("out", out)
      .tolerance("out", tol::stored(dt, (2 * eps + 2 * tol::gamma(d.splits + 2) + u) * p.v,
                                    tol::gamma(1)));
  if (with_lse) {
    setup.output("lse", lse.size())
        .expect("lse", lse)
        .tolerance("lse", tol::stored(DType::F32, tol::gamma(d.splits + 2) + 2 * u + u * p.lse_max,
                                      2 * u));
  }
  return setup.grid(testing::geometry_grid(setup));
}

/// The decode bench: 32 sequences of 8192 keys, 32 query heads of 128, one new token each, bf16;
/// contiguous, or paged (page_size > 0) with each sequence's pages shuffled through the pool.
/// The split count is the library's choice for the device the bench runs on.
bench::BenchSetup decode_bench(std::size_t heads_kv, std::size_t page_size, DType dt) {
  const std::size_t batch = 32, heads_q = 32, head_dim = 128, keys = 8192, q_tokens = 1;
  const std::uint32_t splits =
      sdpa_decode::splits(batch, heads_kv, sdpa_decode::row_blocks(q_tokens, heads_q, heads_kv),
                          keys, testing::device_shape("cuda").multiprocessors);
  const std::size_t rows = batch * q_tokens * heads_q;
  const std::size_t cached = batch * heads_kv * keys * head_dim;
  const std::string kernel = page_size == 0 ? "iron_sdpa_decode" : "iron_sdpa_decode_paged";
  bench::BenchSetup setup(kernel, dt);
  setup.random("q", rows * head_dim)
      .input_u32("seq_lens", std::vector<std::uint32_t>(batch, keys))
      .output("partial_out", rows * splits * head_dim)
      .output("partial_lse", rows * splits)
      .constant("batch", static_cast<double>(batch))
      .constant("q_tokens", static_cast<double>(q_tokens))
      .constant("heads_q", static_cast<double>(heads_q))
      .constant("heads_kv", static_cast<double>(heads_kv))
      .constant("head_dim", static_cast<double>(head_dim))
      .constant("splits", splits)
      .constant("window", 0.0)
      .constant("scale", 1.0 / std::sqrt(static_cast<double>(head_dim)));
  std::uint64_t table_bytes = 0;
  if (page_size == 0) {
    setup.random("k_cache", cached).random("v_cache", cached).constant("max_seq", keys);
  } else {
    const std::size_t per_seq = keys / page_size, pages = batch * per_seq;
    std::vector<std::uint32_t> table(pages);
    std::iota(table.begin(), table.end(), 0u);
    std::mt19937 engine(15);
    std::shuffle(table.begin(), table.end(), engine);
    setup.random("k_pages", cached)
        .random("v_pages", cached)
        .input_u32("block_table", table)
        .constant("num_pages", static_cast<double>(pages))
        .constant("page_size", static_cast<double>(page_size))
        .constant("pages_per_seq", static_cast<double>(per_seq));
    table_bytes = pages * sizeof(std::uint32_t);
  }
  // q, K and V read once, the partials written once.
  const std::uint64_t bytes = (rows * head_dim + 2 * cached) * dtype_size(dt) +
                              rows * splits * (head_dim + 1) * sizeof(float) + table_bytes +
                              batch * sizeof(std::uint32_t);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(bytes)
      .flops(4 * rows * keys * head_dim)
      .peer("sdpa_decode", {{"batch", static_cast<double>(batch)},
                            {"q_tokens", static_cast<double>(q_tokens)},
                            {"heads_q", static_cast<double>(heads_q)},
                            {"heads_kv", static_cast<double>(heads_kv)},
                            {"seq", static_cast<double>(keys)},
                            {"head_dim", static_cast<double>(head_dim)}});
}

/// The combine after decode_bench's GQA 4 case: 1024 rows of 128 over the splits chosen there.
bench::BenchSetup combine_bench(bool with_lse, DType dt) {
  const std::size_t batch = 32, heads_q = 32, heads_kv = 8, head_dim = 128, q_tokens = 1;
  const std::uint32_t splits =
      sdpa_decode::splits(batch, heads_kv, sdpa_decode::row_blocks(q_tokens, heads_q, heads_kv),
                          8192, testing::device_shape("cuda").multiprocessors);
  const std::size_t rows = batch * q_tokens * heads_q;
  bench::BenchSetup setup(with_lse ? "iron_sdpa_decode_combine_lse" : "iron_sdpa_decode_combine",
                          dt);
  setup.random("partial_out", rows * splits * head_dim)
      .random("partial_lse", rows * splits, 2.0f, 6.0f)
      .random("sinks", heads_q, 0.0f, 4.0f)
      .output("out", rows * head_dim)
      .constant("batch", static_cast<double>(batch))
      .constant("q_tokens", static_cast<double>(q_tokens))
      .constant("heads_q", static_cast<double>(heads_q))
      .constant("head_dim", static_cast<double>(head_dim))
      .constant("splits", splits);
  std::uint64_t bytes = rows * splits * (head_dim + 1) * sizeof(float) + heads_q * sizeof(float) +
                        rows * head_dim * dtype_size(dt);
  if (with_lse) {
    setup.output("lse", rows);
    bytes += rows * sizeof(float);
  }
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(bytes)
      .flops(2 * rows * splits * head_dim)
      .peer("sdpa_decode_combine", {{"rows", static_cast<double>(rows)},
                                    {"heads_q", static_cast<double>(heads_q)},
                                    {"head_dim", static_cast<double>(head_dim)},
                                    {"splits", static_cast<double>(splits)}});
}

}  // namespace

// GQA 4 at head_dim 128: a ragged sequence over two splits of 112 keys (four pipeline steps of
// 32, more than the ring's stages) and a sequence of a single key.
IRON_TEST(iron_sdpa_decode, gqa4_ragged_and_length_1, F32, F16, BF16) {
  return decode_setup(shape(2, 1, 8, 2, 128, 208, {203, 1}, 2), dt, rng);
}

// GQA 1 (multi-head) at head_dim 64, lengths that are no multiple of a stage or a split.
IRON_TEST(iron_sdpa_decode, mha_ragged, F32, F16, BF16) {
  return decode_setup(shape(2, 1, 3, 3, 64, 160, {150, 33}, 2), dt, rng);
}

// MQA with 8 query heads: two row blocks of one KV head.
IRON_TEST(iron_sdpa_decode, mqa8_two_row_blocks, F32, F16, BF16) {
  return decode_setup(shape(1, 1, 8, 1, 64, 48, {45}, 2), dt, rng);
}

// Three new tokens, causal among them, GQA 4: 12 rows in three blocks; a sequence of just its
// new tokens.
IRON_TEST(iron_sdpa_decode, three_tokens_causal, F32, F16, BF16) {
  return decode_setup(shape(2, 3, 4, 1, 64, 40, {40, 3}, 2), dt, rng);
}

// A sliding window of 16 with two new tokens: the keys before the window are never read.
IRON_TEST(iron_sdpa_decode, sliding_window, F32, F16, BF16) {
  return decode_setup(shape(2, 2, 4, 2, 64, 72, {70, 9}, 2, 16), dt, rng);
}

// head_dim 256: a key takes the whole simdgroup.
IRON_TEST(iron_sdpa_decode, head_dim_256, F32, F16, BF16) {
  return decode_setup(shape(1, 1, 2, 1, 256, 40, {37}, 2), dt, rng);
}

// head_dim 96: 12 vectors a key on 16 lanes, four of them idle.
IRON_TEST(iron_sdpa_decode, head_dim_96, F32, F16, BF16) {
  return decode_setup(shape(1, 1, 4, 4, 96, 24, {21}, 1), dt, rng);
}

// The reduce-scatter step (row blocks at head_dim 128): three new tokens of GQA 4 (three blocks
// whose rows see different keys) under a window of 16, and a sequence of 5 keys.
IRON_TEST(iron_sdpa_decode, d128_three_tokens_window, F32, F16, BF16) {
  return decode_setup(shape(2, 3, 8, 2, 128, 72, {70, 5}, 2, 16), dt, rng);
}

// The reduce-scatter step at head_dim 96 (four idle lanes a key) with GQA 6: a block of 4 rows
// and one of 2 (two rows computed, never stored).
IRON_TEST(iron_sdpa_decode, d96_gqa6_partial_block, F32, F16, BF16) {
  return decode_setup(shape(1, 1, 6, 1, 96, 40, {37}, 2), dt, rng);
}

// A negative scale (the scores are scaled before the softmax, not inside its exponent), GQA 4
// over two splits of several stages.
IRON_TEST(iron_sdpa_decode, negative_scale, F32, BF16) {
  Decode d = shape(1, 1, 8, 2, 128, 300, {290}, 2);
  d.scale = -0.125f;
  return decode_setup(std::move(d), dt, rng);
}

// More splits than 16-key runs: three splits hold no key (out 0, lse −inf).
IRON_TEST(iron_sdpa_decode, empty_splits, F32, F16, BF16) {
  return decode_setup(shape(1, 1, 1, 1, 64, 8, {5}, 4), dt, rng);
}

// Rings of 6 and of 2 stages (knob "stages"): a ragged sequence over 7 steps of 32 keys.
IRON_TEST(iron_sdpa_decode, tuned_six_stages, F32, BF16) {
  return decode_setup(shape(2, 1, 8, 2, 128, 232, {229, 40}, 1), dt, rng, {{"stages", 6}});
}
IRON_TEST(iron_sdpa_decode, tuned_two_stages, BF16) {
  return decode_setup(shape(2, 1, 8, 2, 128, 232, {229, 40}, 1), dt, rng, {{"stages", 2}});
}

// Pages of 16 in shuffled order, GQA 4: the contiguous cache's partials.
IRON_TEST(iron_sdpa_decode_paged, shuffled_pages16, F32, F16, BF16) {
  return paged_setup(shape(2, 1, 8, 2, 128, 208, {203, 20}, 2), 16, dt, rng);
}

// Pages of 64, GQA 8, two new tokens under a window of 40.
IRON_TEST(iron_sdpa_decode_paged, shuffled_pages64_window, F32, F16, BF16) {
  return paged_setup(shape(2, 2, 8, 1, 64, 150, {150, 2}, 3, 40), 64, dt, rng);
}

// Pages of 256: one page holds the whole sequence and more.
IRON_TEST(iron_sdpa_decode_paged, pages256, F32, F16, BF16) {
  return paged_setup(shape(1, 1, 4, 4, 64, 300, {300}, 2), 256, dt, rng);
}

// Three splits of GQA 4 rows, with sinks on every other head.
IRON_TEST(iron_sdpa_decode_combine, gqa4_sinks, F32, F16, BF16) {
  return combine_setup(shape(2, 1, 8, 2, 64, 80, {77, 1}, 3), true, false, dt, rng);
}

// A single split and no sinks: the partial is the answer.
IRON_TEST(iron_sdpa_decode_combine, one_split_no_sinks, F32, F16, BF16) {
  return combine_setup(shape(1, 1, 4, 4, 128, 40, {40}, 1), false, false, dt, rng);
}

// With the lse: two tokens in a window, empty splits, sinks.
IRON_TEST(iron_sdpa_decode_combine_lse, window_empty_splits_sinks, F32, F16, BF16) {
  return combine_setup(shape(2, 2, 4, 2, 64, 72, {70, 9}, 4, 16), true, true, dt, rng);
}

// With the lse and no sinks: MQA 8, three splits.
IRON_TEST(iron_sdpa_decode_combine_lse, mqa8_no_sinks, F32, F16, BF16) {
  return combine_setup(shape(1, 1, 8, 1, 64, 48, {45}, 3), false, true, dt, rng);
}

// Decode at the shape: GQA 4 (8 KV heads), multi-head (32 KV heads), and GQA 4 in pages
// of 16 (the peer is the contiguous SDPA: paged should be within 5% of contiguous).
IRON_BENCH(iron_sdpa_decode, b32_hq32_hkv8_l8192_d128, BF16) { return decode_bench(8, 0, dt); }
IRON_BENCH(iron_sdpa_decode, b32_hq32_hkv32_l8192_d128, BF16) { return decode_bench(32, 0, dt); }
IRON_BENCH(iron_sdpa_decode_paged, b32_hq32_hkv8_l8192_d128_pages16, BF16) {
  return decode_bench(8, 16, dt);
}

// The combine of the GQA 4 decode bench's splits (a few µs beside the decode).
IRON_BENCH(iron_sdpa_decode_combine, b32_hq32_d128, F32, BF16) { return combine_bench(false, dt); }
IRON_BENCH(iron_sdpa_decode_combine_lse, b32_hq32_d128, BF16) { return combine_bench(true, dt); }

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
