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
/// Elementwise, grid-stride over chunks of 8 consecutive elements of a head (head_dim is a
/// multiple of 8, a rule the guard checks): any grid. Thread i copies chunks i, i + T, … (T =
/// threads in the grid) of k and v, each with 16-byte accesses (two of them in f32). Best:
/// new_tokens · heads · head_dim / 8 threads.
#include <algorithm>
#include <iron/iron.hpp>
#include <numeric>
#include <random>

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr std::uint32_t kChunk = 8;  // elements per thread and iteration: 16 bytes of f16/bf16
}  // namespace

IRON_KERNEL(iron_kv_append, (Tensor<T> k, Tensor<T> v, Tensor<u32> positions, InOut<T> k_cache,
                             InOut<T> v_cache, Constexpr<u32> new_tokens, Constexpr<u32> heads,
                             Constexpr<u32> head_dim, Constexpr<u32> max_seq)) {
  dispatch(elementwise);
  static_assert(kChunk == 8, "the grid rule below counts chunks of 8");
  grid("[<= ceil_div(new_tokens * heads * head_dim / 8, tpg), 1, 1]");
  layout(k, "[new_tokens, heads, head_dim]");
  layout(v, "[new_tokens, heads, head_dim]");
  layout(positions, "[new_tokens]");
  layout_at_least(k_cache, "[heads, max_seq, head_dim]");
  layout_at_least(v_cache, "[heads, max_seq, head_dim]");
  require_multiple_of(head_dim, kChunk);  // every chunk lies in one head: whole 16-byte vectors
  auto chunks = head_dim / kChunk;        // per (token, head) row
  for (auto i : range(global_id<0>(), new_tokens * heads * chunks, grid_threads<0>())) {
    auto row = i / chunks;  // token * heads + head
    auto first = i % chunks * kChunk;
    auto slot = row % heads * max_seq + load(positions[row / heads]);
    auto from = row * head_dim + first;
    auto to = slot * head_dim + first;
    for (std::uint32_t e = 0; e < kChunk; ++e) store(k_cache[to + e], load(k[from + e]));
    for (std::uint32_t e = 0; e < kChunk; ++e) store(v_cache[to + e], load(v[from + e]));
  }
}

// One chunk of 8 elements per thread, in groups of 256.
IRON_GEOMETRY(iron_kv_append) {
  const std::uint64_t chunks =
      q.constant("new_tokens") * q.constant("heads") * q.constant("head_dim") / kChunk;
  return Geometry::elementwise(std::max<std::uint64_t>(chunks, 1), q.threads_per_group(256));
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
