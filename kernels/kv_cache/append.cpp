/// iron_kv_append: k_cache[h, positions[t], d] = k[t, h, d] and v_cache[h, positions[t], d] =
/// v[t, h, d] for every new token t; every other cache element is left as it was.
///
/// The new keys and values come as [new_tokens, heads, head_dim], the layout a fused QKV
/// projection produces (and vLLM's reshape_and_cache takes), and go into head-major caches
/// [heads, max_seq, head_dim], where attention reads one head's keys contiguously. A plain copy:
/// the values are stored bit for bit.
///
/// ## Error bound
/// Exact: values of T are copied into the cache, no arithmetic.
///
/// ## Layout
/// - `k, v [new_tokens, heads, head_dim]` T
/// - `positions [new_tokens]` u32: distinct, each < max_seq (two tokens at one position race)
/// - `k_cache, v_cache [heads, max_seq, head_dim]` T, InOut: written only at `positions`, every
///   other element keeps what it holds
/// - head_dim a multiple of 8 (every head dimension in use is)
///
/// ## Dispatch
/// Elementwise, grid-stride over items of one 16-byte vector of a head (8 elements of f16/bf16,
/// 4 of f32; head_dim is a multiple of 8, a rule the guard checks): any grid. Thread t copies
/// items t, t + T, … (T = threads in the grid) of k and v, loading an item's position, k and v
/// together before its two stores, so every access instruction of a simdgroup covers one
/// contiguous span (one 16-byte vector a lane in f32 too). One item at a time: with two
/// (packed_words.hpp's batches) ptxas, scheduling for 32 registers, issues the second item's
/// loads after the first item's stores. Best: new_tokens · heads · head_dim / 8 threads (/ 4
/// in f32).
#include <algorithm>
#include <cstdint>
#include <iron/iron.hpp>
#include <numeric>
#include <random>
#include <string>
#include <tuple>

#include "../primitives/packed_words.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr std::uint32_t kHeadMultiple = 8;  // head_dim's rule: whole 16-byte vectors of f16/bf16
constexpr std::uint32_t kUnroll = 1;        // items a thread takes at a time (see Dispatch)
}  // namespace

IRON_KERNEL(iron_kv_append, (Tensor<T> k, Tensor<T> v, Tensor<u32> positions, InOut<T> k_cache,
                             InOut<T> v_cache, Constexpr<u32> new_tokens, Constexpr<u32> heads,
                             Constexpr<u32> head_dim, Constexpr<u32> max_seq)) {
  constexpr std::uint32_t kItem = item_elements(lane_bytes<T>());  // 8 f16/bf16, 4 f32
  static_assert(kHeadMultiple % kItem == 0, "every item lies in one head");
  dispatch(elementwise);
  grid("[<= ceil_div(new_tokens * heads * head_dim / " + std::to_string(kItem) + ", tpg), 1, 1]");
  layout(k, "[new_tokens, heads, head_dim]");
  layout(v, "[new_tokens, heads, head_dim]");
  layout(positions, "[new_tokens]");
  layout_at_least(k_cache, "[heads, max_seq, head_dim]");
  layout_at_least(v_cache, "[heads, max_seq, head_dim]");
  require_multiple_of(head_dim, kHeadMultiple);
  auto chunks = head_dim / kItem;  // items per (token, head) row
  // Item i is elements i · kItem … of k and v (a row is whole items): its loads need no row.
  auto fetch = [&](const Expr<u32>& i) {
    auto row = i / chunks;  // token * heads + head
    auto token = row / heads;
    return std::tuple{row - token * heads, load(positions[token]), load_lanes<kItem>(k[i * kItem]),
                      load_lanes<kItem>(v[i * kItem]), (i - row * chunks) * kItem};
  };
  auto finish = [&](const Expr<u32>& /*i*/, const auto& fetched) {
    const auto& [head, position, k_values, v_values, first] = fetched;
    auto to = (head * max_seq + position) * head_dim + first;
    store_lanes(k_cache[to], k_values);
    store_lanes(v_cache[to], v_values);
  };
  grid_stride_batched<kUnroll>(new_tokens * heads * chunks, fetch, finish);
}

// One item a thread, in groups of 256.
IRON_GEOMETRY(iron_kv_append) {
  const auto items = static_cast<std::uint64_t>(q.constant("new_tokens") * q.constant("heads") *
                                                q.constant("head_dim")) /
                     item_elements(dtype_size(q.dtype));
  return batched_item_geometry(q, items, kUnroll);
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

struct KvShape {
  std::size_t new_tokens, heads, head_dim, max_seq;
};

/// The cache after the append, by the definition: `cache` with each new row put in its place.
std::vector<float> appended(std::vector<float> cache, const std::vector<float>& fresh,
                            const std::vector<std::uint32_t>& pos, const KvShape& s) {
  for (std::size_t t = 0; t < s.new_tokens; ++t) {
    for (std::size_t h = 0; h < s.heads; ++h) {
      for (std::size_t d = 0; d < s.head_dim; ++d) {
        cache[(h * s.max_seq + pos[t]) * s.head_dim + d] =
            fresh[(t * s.heads + h) * s.head_dim + d];
      }
    }
  }
  return cache;
}

/// Caches full of earlier values; new tokens at `pos`. The check covers the whole cache: the
/// appended rows hold the new values and every other row keeps its old one.
testing::TestSetup kv_append_setup(const KvShape& s, const std::vector<std::uint32_t>& pos,
                                   std::uint32_t groups, std::uint32_t tpg, DType dt,
                                   testing::Rng& rng) {
  const std::size_t fresh = s.new_tokens * s.heads * s.head_dim;
  const std::size_t cached = s.heads * s.max_seq * s.head_dim;
  const auto k = testing::round_through(rng.uniform(fresh, -4.0f, 4.0f), dt);
  const auto v = testing::round_through(rng.uniform(fresh, -4.0f, 4.0f), dt);
  const auto k_old = testing::round_through(rng.uniform(cached, -4.0f, 4.0f), dt);
  const auto v_old = testing::round_through(rng.uniform(cached, -4.0f, 4.0f), dt);
  return testing::TestSetup("iron_kv_append", dt)
      .input("k", k)
      .input("v", v)
      .input_u32("positions", pos)
      .output("k_cache", cached)
      .output("v_cache", cached)
      .initial("k_cache", k_old)
      .initial("v_cache", v_old)
      .constant("new_tokens", static_cast<double>(s.new_tokens))
      .constant("heads", static_cast<double>(s.heads))
      .constant("head_dim", static_cast<double>(s.head_dim))
      .constant("max_seq", static_cast<double>(s.max_seq))
      .expect("k_cache", appended(k_old, k, pos, s))
      .expect("v_cache", appended(v_old, v, pos, s))
      .tolerance(testing::tolerance::exact())
      .grid({{groups}, {tpg}});
}

/// `count` distinct positions below `max_seq`, in random order.
std::vector<std::uint32_t> scattered_positions(std::size_t count, std::size_t max_seq,
                                               testing::Rng& rng) {
  std::vector<std::uint32_t> pos(max_seq);
  std::iota(pos.begin(), pos.end(), 0u);
  std::mt19937 engine(rng.integers(1, 0, ~0u)[0]);
  std::shuffle(pos.begin(), pos.end(), engine);
  pos.resize(count);
  return pos;
}

/// A prefill chunk appended after `start` cached tokens: positions start .. start + new_tokens.
bench::BenchSetup kv_append_bench(const KvShape& s, std::uint32_t start, DType dt) {
  const std::size_t fresh = s.new_tokens * s.heads * s.head_dim;
  const std::size_t cached = s.heads * s.max_seq * s.head_dim;
  std::vector<std::uint32_t> pos(s.new_tokens);
  std::iota(pos.begin(), pos.end(), start);
  bench::BenchSetup setup("iron_kv_append", dt);
  setup.random("k", fresh)
      .random("v", fresh)
      .input_u32("positions", pos)
      .output("k_cache", cached)
      .output("v_cache", cached)
      .partial_outputs()
      .constant("new_tokens", static_cast<double>(s.new_tokens))
      .constant("heads", static_cast<double>(s.heads))
      .constant("head_dim", static_cast<double>(s.head_dim))
      .constant("max_seq", static_cast<double>(s.max_seq));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(4 * fresh * dtype_size(dt) + s.new_tokens * sizeof(std::uint32_t))
      .peer("kv_append", {{"new_tokens", static_cast<double>(s.new_tokens)},
                          {"heads", static_cast<double>(s.heads)},
                          {"head_dim", static_cast<double>(s.head_dim)},
                          {"max_seq", static_cast<double>(s.max_seq)},
                          {"start", static_cast<double>(start)}});
}

}  // namespace

// A prefill chunk of 16 tokens at scattered positions of a 64-slot cache, 8 heads of 128.
IRON_TEST(iron_kv_append, scattered_tokens, F32, F16, BF16) {
  const KvShape s{16, 8, 128, 64};
  return kv_append_setup(s, scattered_positions(s.new_tokens, s.max_seq, rng), 8, 256, dt, rng);
}

// Odd sizes everywhere but head_dim (five chunks of 8) and a grid far smaller than the work,
// so the grid-stride loop wraps.
IRON_TEST(iron_kv_append, ragged_small_grid, F32, F16, BF16) {
  const KvShape s{5, 3, 40, 37};
  return kv_append_setup(s, scattered_positions(s.new_tokens, s.max_seq, rng), 2, 32, dt, rng);
}

// 13 tokens of 3 heads × 64 on one group of 64 threads: 312 items (624 in f32), 5 to 10 rounds
// a thread, the last one ragged.
IRON_TEST(iron_kv_append, one_group_many_rounds, F32, F16, BF16) {
  const KvShape s{13, 3, 64, 40};
  return kv_append_setup(s, scattered_positions(s.new_tokens, s.max_seq, rng), 1, 64, dt, rng);
}

// The launch the geometry picks (one item a thread: 32 groups of 64, 64 in f32) for 16 tokens of
// 8 heads × 128.
IRON_TEST(iron_kv_append, geometry_grid, F32, F16, BF16) {
  const KvShape s{16, 8, 128, 64};
  const std::uint32_t groups = dt == DType::F32 ? 64 : 32;
  return kv_append_setup(s, scattered_positions(s.new_tokens, s.max_seq, rng), groups, 64, dt, rng);
}

// One decode step into the last slot: the cache's very last row per head.
IRON_TEST(iron_kv_append, decode_last_slot, F32, F16, BF16) {
  const KvShape s{1, 4, 64, 50};
  return kv_append_setup(s, {49}, 1, 256, dt, rng);
}

// 4096 new tokens of 32 heads × 128 into an 8192-long cache after 4096 cached ones.
IRON_BENCH(iron_kv_append, prefill4k_cache8k, F32, F16, BF16) {
  return kv_append_bench({4096, 32, 128, 8192}, 4096, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
