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
///
/// ## Dispatch
/// Elementwise, grid-stride: any grid. Thread i copies elements i, i + T, … of k and v (T =
/// threads in the grid). Best: new_tokens · heads · head_dim threads.
#include <algorithm>
#include <iron/iron.hpp>
#include <numeric>
#include <random>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_kv_append, (Tensor<T> k, Tensor<T> v, Tensor<u32> positions, InOut<T> k_cache,
                             InOut<T> v_cache, Constexpr<u32> new_tokens, Constexpr<u32> heads,
                             Constexpr<u32> head_dim, Constexpr<u32> max_seq)) {
  dispatch(elementwise);
  grid("[<= ceil_div(new_tokens * heads * head_dim, tpg), 1, 1]");
  layout(k, "[new_tokens, heads, head_dim]");
  layout(v, "[new_tokens, heads, head_dim]");
  layout(positions, "[new_tokens]");
  layout_at_least(k_cache, "[heads, max_seq, head_dim]");
  layout_at_least(v_cache, "[heads, max_seq, head_dim]");
  auto token_stride = heads * head_dim;
  for (auto i : range(global_id<0>(), new_tokens * token_stride, grid_threads<0>())) {
    auto h = i % token_stride / head_dim;
    auto slot = h * max_seq + load(positions[i / token_stride]);
    auto index = slot * head_dim + i % head_dim;
    store(k_cache[index], load(k[i]));
    store(v_cache[index], load(v[i]));
  }
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
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
  return bench::BenchSetup("iron_kv_append", dt)
      .random("k", fresh)
      .random("v", fresh)
      .input_u32("positions", pos)
      .output("k_cache", cached)
      .output("v_cache", cached)
      .partial_outputs()
      .constant("new_tokens", static_cast<double>(s.new_tokens))
      .constant("heads", static_cast<double>(s.heads))
      .constant("head_dim", static_cast<double>(s.head_dim))
      .constant("max_seq", static_cast<double>(s.max_seq))
      .grid_1d(fresh, 256)
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
  return kv_append_setup(s, scattered_positions(s.new_tokens, s.max_seq, rng), 64, 256, dt, rng);
}

// Odd sizes everywhere and a grid far smaller than the work, so the grid-stride loop wraps.
IRON_TEST(iron_kv_append, ragged_small_grid, F32, F16, BF16) {
  const KvShape s{5, 3, 36, 37};
  return kv_append_setup(s, scattered_positions(s.new_tokens, s.max_seq, rng), 2, 32, dt, rng);
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
