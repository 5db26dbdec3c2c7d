/// iron_sdpa_prefill_d{64,128,256}: flash attention over a variable-length batch,
/// out[t, h] = Σ_j p_j · v[j, h / (heads_q / heads_kv)] / (Σ_j p_j + e^{sink_h}) with
/// p_j = e^{scale · q[t, h] · k[j, h_kv]} over the keys query t sees; _lse also writes each
/// row's log-sum-exp, _paged reads the keys and values through a paged cache's block table.
///
/// Sequence b's queries are rows cu_seqlens_q[b] … cu_seqlens_q[b + 1] of q and its keys rows
/// cu_seqlens_k[b] … of k and v (no padding). Query i of a sequence with q_len queries and
/// k_len keys sits at key position i + k_len − q_len (the causal mask's bottom-right diagonal,
/// so a chunk of new queries attends to the cache before it). It sees key j when:
/// - causal ≠ 0: j ≤ i + k_len − q_len;
/// - window w ≠ 0: j > i + k_len − q_len − w (the last w positions, its own included);
/// - always: j < k_len.
/// `sinks[h]` is a logit added to the softmax's denominator only (gpt-oss's attention sinks;
/// −inf for none). A row that sees no key and has no sink is 0 (its lse −inf); with a sink it is
/// 0 too, its lse the sink. The lse is ln(Σ_j p_j + e^{sink}) in natural-log units of the scaled
/// logits, as FlashAttention returns it.
///
/// ## Error bound
/// Per output element, relative to M = max |v| over the keys its row sees: with u = 2^-24, u_T the
/// unit roundoff of T (u for f32) and δ the largest error of a scaled logit,
/// δ = |scale| · γ_D · Σ_d |q_d · k_d| + γ_3 · |logit| (an f32 dot product of D exact products,
/// then the scale by scale · log2 e), each weight p_j errs by (δ + 5u) relative (the hardware's
/// exp2, 2.5 ulp, which flushes a weight below 2^-126 of the row's largest to 0: k_len · 2^-126
/// more) and is rounded to T before its product with v (u_T); the weights' sum and the weighted
/// sum of values pass through at most k_len + 2·steps f32 additions and rescalings. Both share
/// every rescaling, so: |Δ| ≤ M · (2(δ + 5u + k_len · 2^-126) + u_T + 2γ_{k_len + 4·steps + 8})
/// + the rounding of the result to T. The lse errs by δ + 5u + k_len · 2^-126 +
/// γ_{k_len + 4·steps + 8} + 2u · |lse|. (steps: of 16 keys, the fewest any form takes.)
///
/// ## How it runs
/// f16 and bf16 (kernels/sdpa/flash_warpgroup.hpp): two warpgroups take 128 query rows of one
/// head, 16 a simdgroup. Queries, and in steps of 128 keys (64 at head_dim 256 and in the paged
/// form at 64; knob `block_k`) a two-stage ring of K and V rows, land in 128-byte swizzled panels
/// of 64 columns. The packed forms up to head_dim 128 add a third warpgroup, a producer: on
/// sm_90a it copies each step's K and V panels with TMA once both warpgroups of queries are done
/// with the slot, and they wait for nothing else (no group barrier a step); each step starts its
/// scores with the previous step's value product, so a warpgroup's softmax runs beside its own
/// value product, and the two warpgroups take turns at starting them (FlashAttention-3's order,
/// knobs `overlap` and `turns`);
/// each step's scores are one warpgroup product per panel (wgmma on sm_90a), the online softmax
/// runs on the accumulator's rows as below, and the weights, rounded to T, stay in registers as
/// the A operand of the product with V (wgmma's register form, V read row-major). Elsewhere the
/// products are each simdgroup's fragment products, the same sums in the same order.
///
/// f32: a group of 128 threads (4 simdgroups) takes 128 query rows of one head (32 a simdgroup),
/// 64 rows for head_dim 256 (kernels/sdpa/flash_tile.hpp). The tile's queries land in
/// shared memory (and in each simdgroup's A fragments where registers allow). Then, in steps
/// of 64 keys (16-bit, head_dim 64), 32 (16-bit beyond) or 16 (f32) over the keys some row sees
/// (the causal diagonal and the window bound the range), a two-stage `pipelined` ring receives
/// the next step's K and V rows by 16-byte asynchronous copies (swizzled rows for 16-bit types)
/// while this step is computed: s = q·kᵀ on fragments, masked to −inf (only in steps an edge
/// cuts); the online softmax (row maxima, exp2, row sums on fragment rows) works in log2 units,
/// the scale folded into each weight's exponent as exp2(fma(s, scale·log2 e, −max)) when it is
/// positive (a specialization: otherwise the scores are scaled first), and rescales the row
/// sums and the accumulators; p (rounded to T) times v adds to the accumulators. At the end each
/// row's weight gains the sink, and each lane stores its elements, skipping rows past q_len (the
/// 16-bit forms two adjacent columns an access where the lane map pairs a lane's slots, so on
/// every CUDA target: half the stores, bench/NOTES.md §52). Query tiles run last-first along x,
/// so a causal batch starts its longest tiles first.
///
/// ## Layout
/// - `q [total_q, heads_q, D]` T, `out [total_q, heads_q, D]` T
/// - `k, v [total_k, heads_kv, D]` T (`_paged`: `k_pages, v_pages [num_pages, heads_kv,
///   page_size, D]` T and `block_table [batch, pages_per_seq]` u32, the page of each sequence's
///   logical page, each below num_pages; `seq_lens_k [batch]` u32, each sequence's keys, at most
///   pages_per_seq · page_size). Any page size works; a power of two finds a key's page by a
///   shift and a mask instead of a division (kernels/sdpa/kv_sources.hpp)
/// - `cu_seqlens_q [batch + 1]`, `cu_seqlens_k [batch + 1]` u32: ascending offsets from 0, the
///   last total_q (total_k); every sequence at most max_seqlen_q queries
/// - `sinks [heads_q]` f32; `lse [heads_q, total_q]` f32 (`_lse`)
/// - heads_q a multiple of heads_kv (the layout of sinks checks it: heads_kv · (heads_q /
///   heads_kv) elements)
/// - k and v finite: the packed forms copy whole steps of rows, so a sequence's last step also
///   holds rows of the next sequence, which it weighs 0; 0 · inf would make the output NaN
///
/// ## Dispatch
/// Tiled: a grid of ceil(max_seqlen_q / R) × heads_q × batch groups, R the tile's rows (128; 64
/// for f32 at head_dim 256), of exactly 384 threads (f16, bf16 packed up to head_dim 128), 256
/// (f16, bf16 otherwise) or 128 (f32).
#include <array>
#include <iron/iron.hpp>
#include <string>

#include "flash_tile.hpp"
#include "flash_warpgroup.hpp"
#include "kv_sources.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {

/// Threads per group reading keys and values from a source Kv (kv_sources.hpp): two
/// warpgroups, and a producer where it has one, when the warpgroup body runs the form, else four
/// simdgroups.
template <class T, std::uint32_t D, template <class, std::uint32_t> class Kv>
constexpr std::uint32_t prefill_threads() {
  if constexpr (sdpa::warpgroup::runs<T, D>()) {
    return sdpa::warpgroup::threads<D, Kv<T, D>>();
  } else {
    return sdpa::kThreads;
  }
}

/// Query rows per group: 128 where the warpgroup body runs the form, else the fragment body's.
template <class T, std::uint32_t D>
constexpr std::uint32_t prefill_rows() {
  return sdpa::warpgroup::runs<T, D>() ? sdpa::warpgroup::kBlockQ : sdpa::block_q<D>();
}

/// The dispatch, grid and the layouts every prefill form shares.
template <class T, std::uint32_t D, template <class, std::uint32_t> class Kv>
void declare_prefill(const Tensor<T>& q, const Tensor<f32>& sinks, const Out<T>& out,
                     const Tensor<u32>& cu_seqlens_q) {
  dispatch(tiled, {exactly(prefill_threads<T, D, Kv>())});
  grid("[ceil_div(max_seqlen_q, " + std::to_string(prefill_rows<T, D>()) + "), heads_q, batch]");
  const std::string rows = "[total_q, heads_q, " + std::to_string(D) + "]";
  layout(q, rows);
  layout(out, rows);
  layout(cu_seqlens_q, "[batch + 1]");
  layout(sinks, "[heads_kv * (heads_q / heads_kv)]");
}

/// The group's query tile of `rows` (last tiles first) and its sequence's rows of q.
struct QueryTile {
  Expr<u32> first, len, q0, head;
  QueryTile(const Tensor<u32>& cu, const Expr<u32>& total, std::uint32_t rows)
      : first(min(load(cu[program_id<2>()]), total)),
        len(min(max(load(cu[program_id<2>() + 1u]), first), total) - first),
        q0((grid_groups<0>() - 1u - program_id<0>()) * rows),
        head(program_id<1>()) {}
};

/// The tile against `kv`, its rows stored to out (and lse when given).
template <class T, std::uint32_t D, class Kv, class Lse>
void prefill_tile(const Tensor<T>& q, const Out<T>& out, const QueryTile& tile, const Kv& kv,
                  const Expr<u32>& heads_q, const sdpa::Masks& masks, const Expr<f32>& scale,
                  const Tensor<f32>& sinks, Lse&& lse) {
  IRON_IF(tile.q0 < tile.len) {
    const auto q_row = [&](const Expr<u32>& i) {
      return ((tile.first + i) * heads_q + tile.head) * D;
    };
    // One element, or two adjacent ones (c even) in one access.
    const auto store_out = [&](const Expr<u32>& i, const Expr<u32>& c, const auto&... values) {
      static_assert(sizeof...(values) == 1 || sizeof...(values) == 2, "one value or a pair");
      const auto at = ((tile.first + i) * heads_q + tile.head) * D + c;
      if constexpr (sizeof...(values) == 1) {
        store(out[at], cast<T>(values...));
      } else {
        store_lanes(out[at], std::array<Expr<T>, 2>{cast<T>(values)...});
      }
    };
    if constexpr (D <= 128 && sdpa::warpgroup::runs<T, D>()) {
      // The head_dim 64 and 128 forms' knob `block_k`: steps of 128 keys or 64.
      const auto with_steps = [&](auto keys) {
        sdpa::warpgroup::attend<T, D, decltype(keys)::value>(
            q, q_row, tile.q0, tile.len, kv, masks, scale, load(sinks[tile.head]), store_out, lse);
      };
      if (tuned("block_k") == 64) {
        with_steps(std::integral_constant<std::uint32_t, 64>{});
      } else {
        with_steps(std::integral_constant<std::uint32_t, 128>{});
      }
    } else if constexpr (sdpa::warpgroup::runs<T, D>()) {
      sdpa::warpgroup::attend<T, D>(q, q_row, tile.q0, tile.len, kv, masks, scale,
                                    load(sinks[tile.head]), store_out, lse);
    } else {
      // One element an access: pairs of f32 would cost this body (at 255 registers) a spill.
      const auto store_each = [&](const Expr<u32>& i, const Expr<u32>& c, const Expr<f32>& value) {
        store_out(i, c, value);
      };
      sdpa::attend<T, D>(q, q_row, tile.q0, tile.len, kv, masks, scale, load(sinks[tile.head]),
                         store_each, lse);
    }
  }
}

}  // namespace

IRON_KERNEL_TEMPLATE(iron_sdpa_prefill, (u32 D),
                     (Tensor<T> q, Tensor<T> k, Tensor<T> v, Tensor<u32> cu_seqlens_q,
                      Tensor<u32> cu_seqlens_k, Tensor<f32> sinks, Out<T> out, Constexpr<u32> batch,
                      Constexpr<u32> heads_q, Constexpr<u32> heads_kv, Constexpr<u32> total_q,
                      Constexpr<u32> total_k, Constexpr<u32> max_seqlen_q, Constexpr<u32> causal,
                      Constexpr<u32> window, Constexpr<f32> scale)) {
  declare_prefill<T, D, sdpa::PackedKv>(q, sinks, out, cu_seqlens_q);
  const std::string kv_rows = "[total_k, heads_kv, " + std::to_string(D) + "]";
  layout(k, kv_rows);
  layout(v, kv_rows);
  layout(cu_seqlens_k, "[batch + 1]");
  const QueryTile tile(cu_seqlens_q, total_q, prefill_rows<T, D>());
  const sdpa::PackedKv<T, D> kv(k, v, cu_seqlens_k, program_id<2>(), total_k, heads_kv,
                                tile.head / (heads_q / heads_kv));
  prefill_tile<T, D>(q, out, tile, kv, heads_q, {causal, window}, scale, sinks, sdpa::NoLse{});
}
IRON_KERNEL_VARIANT(iron_sdpa_prefill, d64, 64);
IRON_KERNEL_VARIANT(iron_sdpa_prefill, d128, 128);
IRON_KERNEL_VARIANT(iron_sdpa_prefill, d256, 256);

IRON_KERNEL_TEMPLATE(iron_sdpa_prefill_lse, (u32 D),
                     (Tensor<T> q, Tensor<T> k, Tensor<T> v, Tensor<u32> cu_seqlens_q,
                      Tensor<u32> cu_seqlens_k, Tensor<f32> sinks, Out<T> out, Out<f32> lse,
                      Constexpr<u32> batch, Constexpr<u32> heads_q, Constexpr<u32> heads_kv,
                      Constexpr<u32> total_q, Constexpr<u32> total_k, Constexpr<u32> max_seqlen_q,
                      Constexpr<u32> causal, Constexpr<u32> window, Constexpr<f32> scale)) {
  declare_prefill<T, D, sdpa::PackedKv>(q, sinks, out, cu_seqlens_q);
  const std::string kv_rows = "[total_k, heads_kv, " + std::to_string(D) + "]";
  layout(k, kv_rows);
  layout(v, kv_rows);
  layout(cu_seqlens_k, "[batch + 1]");
  layout(lse, "[heads_q, total_q]");
  const QueryTile tile(cu_seqlens_q, total_q, prefill_rows<T, D>());
  const sdpa::PackedKv<T, D> kv(k, v, cu_seqlens_k, program_id<2>(), total_k, heads_kv,
                                tile.head / (heads_q / heads_kv));
  prefill_tile<T, D>(q, out, tile, kv, heads_q, {causal, window}, scale, sinks,
                     [&](const Expr<u32>& i, const Expr<f32>& value) {
                       store(lse[tile.head * total_q + tile.first + i], value);
                     });
}
IRON_KERNEL_VARIANT(iron_sdpa_prefill_lse, d64, 64);
IRON_KERNEL_VARIANT(iron_sdpa_prefill_lse, d128, 128);
IRON_KERNEL_VARIANT(iron_sdpa_prefill_lse, d256, 256);

IRON_KERNEL_TEMPLATE(iron_sdpa_prefill_paged, (u32 D),
                     (Tensor<T> q, Tensor<T> k_pages, Tensor<T> v_pages, Tensor<u32> cu_seqlens_q,
                      Tensor<u32> seq_lens_k, Tensor<u32> block_table, Tensor<f32> sinks,
                      Out<T> out, Constexpr<u32> batch, Constexpr<u32> heads_q,
                      Constexpr<u32> heads_kv, Constexpr<u32> total_q, Constexpr<u32> max_seqlen_q,
                      Constexpr<u32> num_pages, Constexpr<u32> page_size,
                      Constexpr<u32> pages_per_seq, Constexpr<u32> causal, Constexpr<u32> window,
                      Constexpr<f32> scale)) {
  declare_prefill<T, D, sdpa::PagedKv>(q, sinks, out, cu_seqlens_q);
  const std::string pages = "[num_pages, heads_kv, page_size, " + std::to_string(D) + "]";
  layout(k_pages, pages);
  layout(v_pages, pages);
  layout(seq_lens_k, "[batch]");
  layout(block_table, "[batch, pages_per_seq]");
  const QueryTile tile(cu_seqlens_q, total_q, prefill_rows<T, D>());
  const sdpa::PagedKv<T, D> kv(k_pages, v_pages, block_table, seq_lens_k, program_id<2>(),
                               pages_per_seq, page_size, heads_kv,
                               tile.head / (heads_q / heads_kv));
  prefill_tile<T, D>(q, out, tile, kv, heads_q, {causal, window}, scale, sinks, sdpa::NoLse{});
}
IRON_KERNEL_VARIANT(iron_sdpa_prefill_paged, d64, 64);
IRON_KERNEL_VARIANT(iron_sdpa_prefill_paged, d128, 128);
IRON_KERNEL_VARIANT(iron_sdpa_prefill_paged, d256, 256);

namespace {
/// A group per prefill_rows query rows of each head of each sequence, of prefill_threads: the
/// warpgroup body's for 16-bit types.
template <std::uint32_t D, template <class, std::uint32_t> class Kv>
Geometry prefill_geometry(const GeometryQuery& q) {
  const bool wide = dtype_size(q.dtype) == 2;
  return {{tile_count(q.constant("max_seqlen_q"),
                      wide ? prefill_rows<f16, D>() : prefill_rows<f32, D>()),
           static_cast<std::uint32_t>(q.constant("heads_q")),
           static_cast<std::uint32_t>(q.constant("batch"))},
          {wide ? prefill_threads<f16, D, Kv>() : prefill_threads<f32, D, Kv>(), 1, 1}};
}
}  // namespace

IRON_GEOMETRY(iron_sdpa_prefill_d64) { return prefill_geometry<64, sdpa::PackedKv>(q); }
IRON_GEOMETRY(iron_sdpa_prefill_d128) { return prefill_geometry<128, sdpa::PackedKv>(q); }
IRON_GEOMETRY(iron_sdpa_prefill_d256) { return prefill_geometry<256, sdpa::PackedKv>(q); }
IRON_GEOMETRY(iron_sdpa_prefill_lse_d64) { return prefill_geometry<64, sdpa::PackedKv>(q); }
IRON_GEOMETRY(iron_sdpa_prefill_lse_d128) { return prefill_geometry<128, sdpa::PackedKv>(q); }
IRON_GEOMETRY(iron_sdpa_prefill_lse_d256) { return prefill_geometry<256, sdpa::PackedKv>(q); }
IRON_GEOMETRY(iron_sdpa_prefill_paged_d64) { return prefill_geometry<64, sdpa::PagedKv>(q); }
IRON_GEOMETRY(iron_sdpa_prefill_paged_d128) { return prefill_geometry<128, sdpa::PagedKv>(q); }
IRON_GEOMETRY(iron_sdpa_prefill_paged_d256) { return prefill_geometry<256, sdpa::PagedKv>(q); }
namespace {
/// The warpgroup body's keys a step (16-bit types), the default first: 128 or 64 (bench/
/// NOTES.md §33: 128 at head_dim 128; at 64, NVRTC compiles it in ~70% of the time, §44). At
/// head_dim 64 the forms with a producer warpgroup take 128 (13% faster on an H100, §51), the
/// paged forms 64 (§33).
TuningSpace steps_space(std::uint32_t first) {
  return TuningSpace{}.knob("block_k", {first, first == 128 ? 64u : 128u});
}
/// The forms with a producer warpgroup (packed, head_dim up to 128) also take `overlap`: whether
/// each warpgroup's softmax runs beside its previous step's value product
/// (kernels/sdpa/flash_warpgroup.hpp), and `turns`: whether their two warpgroups of queries take
/// turns at starting their products. Both on by default: 6–7% faster on an H100 than neither,
/// where turns alone were 12–22% slower (§51).
TuningSpace with_turns(TuningSpace space) {
  return space.knob("turns", {1, 0}).knob("overlap", {1, 0});
}
}  // namespace
IRON_TUNING(iron_sdpa_prefill_d64) { return with_turns(steps_space(128)); }
IRON_TUNING(iron_sdpa_prefill_lse_d64) { return with_turns(steps_space(128)); }
IRON_TUNING(iron_sdpa_prefill_paged_d64) { return steps_space(64); }
IRON_TUNING(iron_sdpa_prefill_d128) { return with_turns(steps_space(128)); }
IRON_TUNING(iron_sdpa_prefill_lse_d128) { return with_turns(steps_space(128)); }
IRON_TUNING(iron_sdpa_prefill_paged_d128) { return steps_space(128); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <algorithm>
#include <cmath>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "prefill_oracle.hpp"

namespace iron::kernels {

namespace {

using sdpa::PrefillCase;
constexpr float kNoSink = -std::numeric_limits<float>::infinity();

/// Random q, k and v of T (q in ±q_range, k and v in ±1) for the case.
struct PrefillData {
  std::vector<float> q, k, v;
  PrefillData(const PrefillCase& c, DType dt, testing::Rng& rng, float q_range)
      : q(testing::round_through(
            rng.uniform(c.total_q() * c.heads_q * c.head_dim, -q_range, q_range), dt)),
        k(testing::round_through(rng.uniform(c.total_k() * c.heads_kv * c.head_dim, -1, 1), dt)),
        v(testing::round_through(rng.uniform(c.total_k() * c.heads_kv * c.head_dim, -1, 1), dt)) {}
};

/// The inputs, constexprs and expected outputs every form shares (k and v are the form's).
testing::TestSetup common_setup(const std::string& kernel, const PrefillCase& c,
                                const PrefillData& data, const std::vector<float>& sinks,
                                bool with_lse, DType dt, const dsl::TuningConfig& config) {
  const auto e =
      sdpa::prefill_oracle(c, data.q, data.k, data.v, sinks,
                           dt == DType::F32 ? 0x1p-24 : testing::tolerance::unit_roundoff(dt));
  testing::TestSetup setup(kernel, dt, config);
  setup.input("q", data.q)
      .input_u32("cu_seqlens_q", c.offsets(c.q_lens))
      .input("sinks", sinks)
      .output("out", e.out.size())
      .constant("batch", static_cast<double>(c.batch()))
      .constant("heads_q", static_cast<double>(c.heads_q))
      .constant("heads_kv", static_cast<double>(c.heads_kv))
      .constant("total_q", static_cast<double>(c.total_q()))
      .constant("max_seqlen_q", c.max_q())
      .constant("causal", c.causal ? 1.0 : 0.0)
      .constant("window", c.window)
      .constant("scale", c.scale)
      .expect("out", e.out)
      .tolerance("out", testing::tolerance::stored(dt, e.out_abs, 0.0));
  if (with_lse) {
    setup.output("lse", e.lse.size())
        .expect("lse", e.lse)
        .tolerance("lse",
                   testing::tolerance::stored(DType::F32, e.lse_abs, testing::tolerance::gamma(2)));
  }
  return setup;
}

/// A packed-batch form (iron_sdpa_prefill[_lse]_dD) on random data.
testing::TestSetup prefill_setup(const PrefillCase& c, const std::vector<float>& sinks,
                                 bool with_lse, DType dt, testing::Rng& rng, float q_range = 1.0f,
                                 const dsl::TuningConfig& config = {}) {
  const PrefillData data(c, dt, rng, q_range);
  const std::string kernel = std::string("iron_sdpa_prefill_") + (with_lse ? "lse_" : "") + "d" +
                             std::to_string(c.head_dim);
  auto setup = common_setup(kernel, c, data, sinks, with_lse, dt, config);
  setup.input("k", data.k)
      .input("v", data.v)
      .input_u32("cu_seqlens_k", c.offsets(c.k_lens))
      .constant("total_k", static_cast<double>(c.total_k()));
  return setup.grid(testing::geometry_grid(setup));
}

/// The paged form on the same data, its keys and values scattered over shuffled pages of
/// `page_size` with two spare pages of garbage and unused table entries that name no page: it
/// must give the packed batch's result.
testing::TestSetup paged_setup(const PrefillCase& c, std::uint32_t page_size,
                               const std::vector<float>& sinks, DType dt, testing::Rng& rng,
                               const dsl::TuningConfig& config = {}) {
  const PrefillData data(c, dt, rng, 1.0f);
  const std::size_t hkv = c.heads_kv, d = c.head_dim;
  std::uint32_t pages_per_seq = 1, used = 0;
  for (auto n : c.k_lens) {
    const std::uint32_t pages = (n + page_size - 1) / page_size;
    pages_per_seq = std::max(pages_per_seq, pages + 1);
    used += pages;
  }
  const std::uint32_t num_pages = used + 2;
  std::vector<std::uint32_t> physical(num_pages);
  std::iota(physical.begin(), physical.end(), 0u);
  std::mt19937 engine(rng.integers(1, 0, ~0u)[0]);
  std::shuffle(physical.begin(), physical.end(), engine);
  const std::size_t page_elements = hkv * page_size * d;
  auto k_pages = testing::round_through(rng.uniform(num_pages * page_elements, 50, 60), dt);
  auto v_pages = testing::round_through(rng.uniform(num_pages * page_elements, 50, 60), dt);
  std::vector<std::uint32_t> table(c.batch() * pages_per_seq, 0xFFFFFFFFu);
  const auto cu_k = c.offsets(c.k_lens);
  std::uint32_t next = 0;
  for (std::size_t b = 0; b < c.batch(); ++b) {
    for (std::uint32_t j = 0; j < c.k_lens[b]; ++j) {
      if (j % page_size == 0) table[b * pages_per_seq + j / page_size] = physical[next++];
      const std::size_t page = table[b * pages_per_seq + j / page_size];
      for (std::size_t h = 0; h < hkv; ++h) {
        for (std::size_t x = 0; x < d; ++x) {
          const std::size_t to = ((page * hkv + h) * page_size + j % page_size) * d + x;
          k_pages[to] = data.k[((cu_k[b] + j) * hkv + h) * d + x];
          v_pages[to] = data.v[((cu_k[b] + j) * hkv + h) * d + x];
        }
      }
    }
  }
  auto setup = common_setup("iron_sdpa_prefill_paged_d" + std::to_string(d), c, data, sinks, false,
                            dt, config);
  setup.input("k_pages", k_pages)
      .input("v_pages", v_pages)
      .input_u32("seq_lens_k", c.k_lens)
      .input_u32("block_table", table)
      .constant("num_pages", num_pages)
      .constant("page_size", page_size)
      .constant("pages_per_seq", pages_per_seq);
  return setup.grid(testing::geometry_grid(setup));
}

std::vector<float> no_sinks(std::size_t heads) { return std::vector<float>(heads, kNoSink); }

/// 4·D flops (two products of D multiply-adds) for each query-key pair a row sees.
std::uint64_t prefill_flops(const PrefillCase& c) {
  std::uint64_t pairs = 0;
  for (std::size_t b = 0; b < c.batch(); ++b) {
    for (std::int64_t i = 0; i < c.q_lens[b]; ++i) {
      for (std::int64_t j = 0; j < c.k_lens[b]; ++j)
        pairs += c.sees(i, j, c.q_lens[b], c.k_lens[b]);
    }
  }
  return 4 * c.head_dim * c.heads_q * pairs;
}

/// Which prefill form a bench times.
enum class Form { Packed, Lse, Paged };

/// A form on random data (the paged one on shuffled pages of `page_size`). A batch of equal
/// lengths is compared with torch's scaled_dot_product_attention on [batch, heads, seq, D]
/// tensors (cuDNN and FlashAttention-2; the paged form with the same contiguous call), one of
/// mixed lengths (self-attention, no window) with one such call per sequence.
bench::BenchSetup prefill_bench(const PrefillCase& c, DType dt, Form form = Form::Packed,
                                std::uint32_t page_size = 64) {
  const std::size_t rows_q = c.total_q() * c.heads_q * c.head_dim;
  const std::size_t rows_k = c.total_k() * c.heads_kv * c.head_dim;
  const char* prefix = form == Form::Lse     ? "iron_sdpa_prefill_lse_d"
                       : form == Form::Paged ? "iron_sdpa_prefill_paged_d"
                                             : "iron_sdpa_prefill_d";
  bench::BenchSetup setup(prefix + std::to_string(c.head_dim), dt);
  setup.random("q", rows_q)
      .input_u32("cu_seqlens_q", c.offsets(c.q_lens))
      .input("sinks", no_sinks(c.heads_q))
      .output("out", rows_q)
      .constant("batch", static_cast<double>(c.batch()))
      .constant("heads_q", static_cast<double>(c.heads_q))
      .constant("heads_kv", static_cast<double>(c.heads_kv))
      .constant("total_q", static_cast<double>(c.total_q()))
      .constant("max_seqlen_q", c.max_q())
      .constant("causal", c.causal ? 1.0 : 0.0)
      .constant("window", c.window)
      .constant("scale", c.scale);
  if (form == Form::Paged) {
    std::uint32_t pages_per_seq = 1;
    for (auto n : c.k_lens)
      pages_per_seq = std::max(pages_per_seq, (n + page_size - 1) / page_size);
    const std::uint32_t num_pages = static_cast<std::uint32_t>(c.batch()) * pages_per_seq;
    std::vector<std::uint32_t> table(num_pages);
    std::iota(table.begin(), table.end(), 0u);
    std::mt19937 engine(1);
    std::shuffle(table.begin(), table.end(), engine);
    const std::size_t pool = std::size_t{num_pages} * c.heads_kv * page_size * c.head_dim;
    setup.random("k_pages", pool)
        .random("v_pages", pool)
        .input_u32("seq_lens_k", c.k_lens)
        .input_u32("block_table", table)
        .constant("num_pages", num_pages)
        .constant("page_size", page_size)
        .constant("pages_per_seq", pages_per_seq);
  } else {
    setup.random("k", rows_k)
        .random("v", rows_k)
        .input_u32("cu_seqlens_k", c.offsets(c.k_lens))
        .constant("total_k", static_cast<double>(c.total_k()));
  }
  if (form == Form::Lse) setup.output("lse", c.heads_q * c.total_q());
  setup.grid(bench::geometry_grid(setup)).flops(prefill_flops(c));
  const bool equal = std::all_of(c.q_lens.begin(), c.q_lens.end(),
                                 [&](std::uint32_t n) { return n == c.q_lens[0]; }) &&
                     c.q_lens == c.k_lens && c.window == 0;
  if (!equal) {
    std::map<std::string, double> dims{{"batch", static_cast<double>(c.batch())},
                                       {"heads", static_cast<double>(c.heads_q)},
                                       {"head_dim", static_cast<double>(c.head_dim)},
                                       {"causal", c.causal ? 1.0 : 0.0},
                                       {"scale", c.scale}};
    for (std::size_t b = 0; b < c.batch(); ++b) dims["len" + std::to_string(b)] = c.q_lens[b];
    setup.peer("sdpa_prefill_varlen", dims);
  } else {
    setup.peer("sdpa_prefill", {{"batch", static_cast<double>(c.batch())},
                                {"heads_q", static_cast<double>(c.heads_q)},
                                {"heads_kv", static_cast<double>(c.heads_kv)},
                                {"seq", c.q_lens[0]},
                                {"head_dim", static_cast<double>(c.head_dim)},
                                {"causal", c.causal ? 1.0 : 0.0},
                                {"scale", c.scale}});
  }
  return setup;
}

PrefillCase dense(std::uint32_t batch, std::uint32_t heads, std::uint32_t seq, std::size_t d,
                  bool causal) {
  return {std::vector<std::uint32_t>(batch, seq),
          std::vector<std::uint32_t>(batch, seq),
          heads,
          heads,
          d,
          causal,
          0,
          1.0 / std::sqrt(static_cast<double>(d))};
}

}  // namespace

// Three sequences (one query, a tile and a bit, half a tile), four query heads on one KV head.
IRON_TEST(iron_sdpa_prefill_d64, varlen_gqa4, F32, F16, BF16) {
  const PrefillCase c{{1, 70, 33}, {1, 70, 33}, 4, 1, 64, false, 0, 0.125};
  return prefill_setup(c, no_sinks(4), false, dt, rng);
}

// Causal, eight query heads on one KV head (multi-query), sinks finite on some heads.
IRON_TEST(iron_sdpa_prefill_d64, causal_mqa8_sinks, F32, F16, BF16) {
  const PrefillCase c{{17, 64}, {17, 64}, 8, 1, 64, true, 0, 0.125};
  return prefill_setup(c, {-1.0f, 0.5f, 3.0f, kNoSink, 0.0f, kNoSink, 8.0f, -4.0f}, false, dt, rng);
}

// A chunk of new queries after cached keys (bottom-right causal), and a sequence of one.
IRON_TEST(iron_sdpa_prefill_d128, chunked_causal, F32, F16, BF16) {
  const PrefillCase c{{20, 1}, {100, 1}, 2, 2, 128, true, 0, 1.0 / std::sqrt(128.0)};
  return prefill_setup(c, no_sinks(2), false, dt, rng);
}

// More queries than keys under a causal sliding window: the first rows see no key at all (0,
// lse −inf without a sink, the sink with one); later ones see the last 16 positions.
IRON_TEST(iron_sdpa_prefill_lse_d128, window_masked_rows, F32, F16, BF16) {
  const PrefillCase c{{80}, {50}, 2, 1, 128, true, 16, 0.09};
  return prefill_setup(c, {kNoSink, 1.5f}, true, dt, rng);
}

// Large logits (q in ±4, scale 0.5), so the running maxima move across steps; causal, with lse.
IRON_TEST(iron_sdpa_prefill_lse_d64, large_logits_causal, F32, F16, BF16) {
  const PrefillCase c{{130}, {130}, 1, 1, 64, true, 0, 0.5};
  return prefill_setup(c, {2.0f}, true, dt, rng, 4.0f);
}

// A negative scale (the module whose scores are scaled before the softmax, not folded into
// its exponent: a positive scale is the usual binding), causal, with lse.
IRON_TEST(iron_sdpa_prefill_lse_d64, negative_scale, F32, F16, BF16) {
  const PrefillCase c{{70}, {70}, 2, 1, 64, true, 0, -0.125};
  return prefill_setup(c, no_sinks(2), true, dt, rng);
}

// Head dim 256, non-causal with a window, one query against 130 keys and three against one.
IRON_TEST(iron_sdpa_prefill_d256, window_short_rows, F32, F16, BF16) {
  const PrefillCase c{{1, 3}, {130, 1}, 1, 1, 256, false, 70, 0.0625};
  return prefill_setup(c, no_sinks(1), false, dt, rng);
}

// Eight query heads on one KV head, two sequences, non-causal.
IRON_TEST(iron_sdpa_prefill_d128, varlen_mqa8, F32, F16, BF16) {
  const PrefillCase c{{3, 65}, {3, 65}, 8, 1, 128, false, 0, 0.088};
  return prefill_setup(c, no_sinks(8), false, dt, rng);
}

// Head dim 256, causal, four query heads on one KV head, sinks.
IRON_TEST(iron_sdpa_prefill_d256, causal_gqa4_sinks, F32, F16, BF16) {
  const PrefillCase c{{40}, {40}, 4, 1, 256, true, 0, 0.0625};
  return prefill_setup(c, {1.0f, kNoSink, -2.0f, 0.0f}, false, dt, rng);
}

// Non-causal window over a longer cache, with the lse and sinks.
IRON_TEST(iron_sdpa_prefill_lse_d64, window_cross_lengths_sinks, F32, F16, BF16) {
  const PrefillCase c{{5, 70}, {90, 70}, 2, 2, 64, false, 24, 0.125};
  return prefill_setup(c, {0.5f, kNoSink}, true, dt, rng);
}

// Sequences of one and two tokens: the smallest tiles, with the lse.
IRON_TEST(iron_sdpa_prefill_lse_d128, one_and_two_tokens, F32, F16, BF16) {
  const PrefillCase c{{1, 2}, {1, 2}, 1, 1, 128, true, 0, 0.1};
  return prefill_setup(c, no_sinks(1), true, dt, rng);
}

// Head dim 256 with the lse: causal GQA 2 with a sink, and cross lengths non-causal.
IRON_TEST(iron_sdpa_prefill_lse_d256, causal_gqa2_sink, F32, F16, BF16) {
  const PrefillCase c{{17}, {17}, 2, 1, 256, true, 0, 0.0625};
  return prefill_setup(c, {kNoSink, 3.0f}, true, dt, rng);
}
IRON_TEST(iron_sdpa_prefill_lse_d256, cross_lengths, F32, F16, BF16) {
  const PrefillCase c{{1, 66}, {130, 66}, 1, 1, 256, false, 0, 0.07};
  return prefill_setup(c, no_sinks(1), true, dt, rng);
}

// Steps of 64 keys (knob "block_k") at head_dim 128: a causal chunk over cached keys, a window
// that masks whole rows (with the lse), and shuffled pages of 48, each past several steps.
IRON_TEST(iron_sdpa_prefill_d128, tuned_steps_of_64, BF16) {
  const PrefillCase c{{20, 130}, {100, 200}, 2, 2, 128, true, 0, 1.0 / std::sqrt(128.0)};
  return prefill_setup(c, no_sinks(2), false, dt, rng, 1.0f, {{"block_k", 64}});
}
IRON_TEST(iron_sdpa_prefill_lse_d128, tuned_steps_of_64, F16) {
  const PrefillCase c{{80}, {150}, 2, 1, 128, true, 16, 0.09};
  return prefill_setup(c, {kNoSink, 1.5f}, true, dt, rng, 1.0f, {{"block_k", 64}});
}
IRON_TEST(iron_sdpa_prefill_paged_d128, tuned_steps_of_64, BF16) {
  const PrefillCase c{{3, 70}, {150, 70}, 2, 1, 128, true, 0, 0.09};
  return paged_setup(c, 48, no_sinks(2), dt, rng, {{"block_k", 64}});
}

// The other value of the knob "block_k" at head_dim 64 (64 keys a step for the packed forms, 128
// for the paged one): a varlen causal batch whose sequences end inside a step (the next
// sequence's rows land in the step's copies), a window with sinks, and pages of 16.
IRON_TEST(iron_sdpa_prefill_d64, tuned_steps_of_64, BF16) {
  const PrefillCase c{{20, 130, 7}, {100, 200, 7}, 4, 2, 64, true, 0, 0.125};
  return prefill_setup(c, no_sinks(4), false, dt, rng, 1.0f, {{"block_k", 64}});
}
IRON_TEST(iron_sdpa_prefill_lse_d64, tuned_steps_of_64, F16) {
  const PrefillCase c{{90}, {300}, 2, 1, 64, true, 40, 0.125};
  return prefill_setup(c, {kNoSink, 1.5f}, true, dt, rng, 1.0f, {{"block_k", 64}});
}
IRON_TEST(iron_sdpa_prefill_paged_d64, tuned_steps_of_128, BF16) {
  const PrefillCase c{{3, 70}, {150, 70}, 2, 1, 64, true, 0, 0.125};
  return paged_setup(c, 16, no_sinks(2), dt, rng, {{"block_k", 128}});
}

// The serial order of a step (knob "overlap" 0), with and without turns (knob "turns"), head_dim
// 128 and 64: a varlen batch of short and long sequences, causal, GQA 2, and a window with the
// lse.
IRON_TEST(iron_sdpa_prefill_d128, tuned_serial, BF16) {
  const PrefillCase c{{5, 200}, {60, 260}, 2, 1, 128, true, 0, 1.0 / std::sqrt(128.0)};
  return prefill_setup(c, no_sinks(2), false, dt, rng, 1.0f, {{"overlap", 0}, {"turns", 0}});
}
IRON_TEST(iron_sdpa_prefill_lse_d64, tuned_serial_turns, F16) {
  const PrefillCase c{{150}, {150}, 2, 2, 64, false, 24, 0.125};
  return prefill_setup(c, {kNoSink, 0.5f}, true, dt, rng, 1.0f, {{"overlap", 0}, {"turns", 1}});
}

// Causal with more queries than keys (in the default order a tile that sees no key still takes
// one masked step), short and long sequences.
IRON_TEST(iron_sdpa_prefill_d128, more_queries_than_keys, BF16) {
  const PrefillCase c{{5, 300, 130}, {60, 100, 130}, 2, 1, 128, true, 0, 1.0 / std::sqrt(128.0)};
  return prefill_setup(c, no_sinks(2), false, dt, rng);
}
// The overlapped order without turns: a window and sinks at head_dim 64 with the lse.
IRON_TEST(iron_sdpa_prefill_lse_d64, tuned_overlap_alone, F16) {
  const PrefillCase c{{150, 40}, {150, 200}, 2, 2, 64, false, 24, 0.125};
  return prefill_setup(c, {kNoSink, 0.5f}, true, dt, rng, 1.0f, {{"turns", 0}});
}

// Pages of 256 (the largest), a long cache before one query, causal GQA 2.
IRON_TEST(iron_sdpa_prefill_paged_d128, pages256, F32, F16, BF16) {
  const PrefillCase c{{1, 3}, {300, 3}, 2, 1, 128, true, 0, 0.09};
  return paged_setup(c, 256, no_sinks(2), dt, rng);
}

// Pages of 32 under a causal window.
IRON_TEST(iron_sdpa_prefill_paged_d64, pages32_window, F32, F16, BF16) {
  const PrefillCase c{{20, 9}, {60, 9}, 4, 4, 64, true, 16, 0.125};
  return paged_setup(c, 32, {kNoSink, 0.0f, kNoSink, 2.0f}, dt, rng);
}

// Head dim 256 through pages of 16 (causal) and 64 (non-causal, two heads).
IRON_TEST(iron_sdpa_prefill_paged_d256, pages16_causal, F32, F16, BF16) {
  const PrefillCase c{{2, 10}, {40, 10}, 1, 1, 256, true, 0, 0.0625};
  return paged_setup(c, 16, no_sinks(1), dt, rng);
}
IRON_TEST(iron_sdpa_prefill_paged_d256, pages64, F32, F16, BF16) {
  const PrefillCase c{{1}, {100}, 2, 2, 256, false, 0, 0.06};
  return paged_setup(c, 64, {kNoSink, 1.0f}, dt, rng);
}

// Pages of 16 in shuffled order, GQA 2, causal chunk after a cache.
IRON_TEST(iron_sdpa_prefill_paged_d128, shuffled_pages16, F32, F16, BF16) {
  const PrefillCase c{{5, 40}, {70, 40}, 4, 2, 128, true, 0, 1.0 / std::sqrt(128.0)};
  return paged_setup(c, 16, {0.0f, kNoSink, 1.0f, kNoSink}, dt, rng);
}

// Pages of 48, not a power of two: the dividing form of the page lookup (kv_sources.hpp).
IRON_TEST(iron_sdpa_prefill_paged_d128, pages48_causal, F32, F16, BF16) {
  const PrefillCase c{{7, 50}, {150, 50}, 2, 1, 128, true, 0, 0.08};
  return paged_setup(c, 48, no_sinks(2), dt, rng);
}
IRON_TEST(iron_sdpa_prefill_paged_d64, pages48, F32, F16, BF16) {
  const PrefillCase c{{1, 70}, {100, 70}, 1, 1, 64, false, 0, 0.125};
  return paged_setup(c, 48, no_sinks(1), dt, rng);
}
// Pages of one key: the shift of the power-of-two form is 0.
IRON_TEST(iron_sdpa_prefill_paged_d64, pages1_causal, F32, F16, BF16) {
  const PrefillCase c{{9}, {23}, 2, 2, 64, true, 0, 0.125};
  return paged_setup(c, 1, no_sinks(2), dt, rng);
}

// Pages of 64, a sequence of one key, non-causal.
IRON_TEST(iron_sdpa_prefill_paged_d64, shuffled_pages64, F32, F16, BF16) {
  const PrefillCase c{{33, 1}, {130, 1}, 1, 1, 64, false, 0, 0.125};
  return paged_setup(c, 64, no_sinks(1), dt, rng);
}

// The prefill shape: B4 H32 S4096 D128, non-causal and causal.
IRON_BENCH(iron_sdpa_prefill_d128, b4_h32_s4096, BF16, F16) {
  return prefill_bench(dense(4, 32, 4096, 128, false), dt);
}
IRON_BENCH(iron_sdpa_prefill_d128, b4_h32_s4096_causal, BF16, F16) {
  return prefill_bench(dense(4, 32, 4096, 128, true), dt);
}
// The same tokens as one long sequence and as sixteen short ones (a tile's 128 steps or 8; the
// causal form's 64.5 on average): their rates against the shape above show the cost a tile pays
// once (its queries' copy, the ring's first stages, the output's stores).
IRON_BENCH(iron_sdpa_prefill_d128, b1_h32_s16384, BF16) {
  return prefill_bench(dense(1, 32, 16384, 128, false), dt);
}
IRON_BENCH(iron_sdpa_prefill_d128, b1_h32_s16384_causal, BF16) {
  return prefill_bench(dense(1, 32, 16384, 128, true), dt);
}
IRON_BENCH(iron_sdpa_prefill_d128, b16_h32_s1024, BF16) {
  return prefill_bench(dense(16, 32, 1024, 128, false), dt);
}
// Head dims 64 and 256 at the same token count.
IRON_BENCH(iron_sdpa_prefill_d64, b4_h32_s4096, BF16) {
  return prefill_bench(dense(4, 32, 4096, 64, false), dt);
}
IRON_BENCH(iron_sdpa_prefill_d256, b4_h32_s4096, BF16) {
  return prefill_bench(dense(4, 32, 4096, 256, false), dt);
}
// The other forms at the same shape: with the lse, and through shuffled pages of 64.
IRON_BENCH(iron_sdpa_prefill_lse_d128, b4_h32_s4096, BF16) {
  return prefill_bench(dense(4, 32, 4096, 128, false), dt, Form::Lse);
}
IRON_BENCH(iron_sdpa_prefill_paged_d128, b4_h32_s4096_pages64, BF16) {
  return prefill_bench(dense(4, 32, 4096, 128, false), dt, Form::Paged, 64);
}
IRON_BENCH(iron_sdpa_prefill_lse_d64, b4_h32_s4096, BF16) {
  return prefill_bench(dense(4, 32, 4096, 64, false), dt, Form::Lse);
}
IRON_BENCH(iron_sdpa_prefill_paged_d64, b4_h32_s4096_pages16, BF16) {
  return prefill_bench(dense(4, 32, 4096, 64, false), dt, Form::Paged, 16);
}
IRON_BENCH(iron_sdpa_prefill_lse_d256, b4_h32_s4096, BF16) {
  return prefill_bench(dense(4, 32, 4096, 256, false), dt, Form::Lse);
}
IRON_BENCH(iron_sdpa_prefill_paged_d256, b4_h32_s4096_pages256, BF16) {
  return prefill_bench(dense(4, 32, 4096, 256, false), dt, Form::Paged, 256);
}
// Mixed lengths with no padding: its rate against the dense shape's is the varlen cost.
IRON_BENCH(iron_sdpa_prefill_d128, varlen_17_512_3000_4096, BF16) {
  const std::vector<std::uint32_t> lens{17, 512, 3000, 4096};
  return prefill_bench({lens, lens, 32, 32, 128, false, 0, 1.0 / std::sqrt(128.0)}, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
