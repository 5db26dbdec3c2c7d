/// iron_kv_append_paged: k_pages[slots[t] / page_size, h, slots[t] % page_size, d] = k[t, h, d]
/// and the same of v into v_pages, for every new token t; every other page element is left as it
/// was.
///
/// The paged form of iron_kv_append: the cache is a pool of pages of page_size tokens, and each
/// new token's slot (physical page · page_size + offset in the page, vLLM's slot mapping) says
/// where it goes; a block table (which iron_sdpa_decode_paged reads) maps each sequence's logical
/// pages to those physical pages. Pages are head-major ([heads_kv, page_size, head_dim] each), so
/// attention reads one head's keys of a page contiguously. A plain copy: the values are stored
/// bit for bit.
///
/// ## Error bound
/// Exact: values of T are copied into the pages, no arithmetic.
///
/// ## Layout
/// - `k, v [new_tokens, heads_kv, head_dim]` T
/// - `slots [new_tokens]` u32: distinct, each < num_pages · page_size (two tokens in one slot
///   race)
/// - `k_pages, v_pages [num_pages, heads_kv, page_size, head_dim]` T, InOut: written only at the
///   slots, every other element keeps what it holds
/// - head_dim a multiple of 8 (every head dimension in use is); any page_size ≥ 1
///
/// ## Dispatch
/// Elementwise, grid-stride over chunks of 8 consecutive elements of a head (head_dim is a
/// multiple of 8, a rule the guard checks): any grid. Thread i copies chunks i, i + T, … (T =
/// threads in the grid) of k and v, each with 16-byte accesses (two of them in f32). Best:
/// new_tokens · heads_kv · head_dim / 8 threads.
#include <algorithm>
#include <iron/iron.hpp>
#include <numeric>
#include <random>

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr std::uint32_t kPagedChunk = 8;  // elements per thread and iteration: 16 bytes of f16/bf16
}  // namespace

IRON_KERNEL(iron_kv_append_paged,
            (Tensor<T> k, Tensor<T> v, Tensor<u32> slots, InOut<T> k_pages, InOut<T> v_pages,
             Constexpr<u32> new_tokens, Constexpr<u32> heads_kv, Constexpr<u32> head_dim,
             Constexpr<u32> num_pages, Constexpr<u32> page_size)) {
  dispatch(elementwise);
  static_assert(kPagedChunk == 8, "the grid rule below counts chunks of 8");
  grid("[<= ceil_div(new_tokens * heads_kv * head_dim / 8, tpg), 1, 1]");
  layout(k, "[new_tokens, heads_kv, head_dim]");
  layout(v, "[new_tokens, heads_kv, head_dim]");
  layout(slots, "[new_tokens]");
  layout(k_pages, "[num_pages, heads_kv, page_size, head_dim]");
  layout(v_pages, "[num_pages, heads_kv, page_size, head_dim]");
  require_multiple_of(head_dim, kPagedChunk);  // every chunk lies in one head: 16-byte vectors
  auto chunks = head_dim / kPagedChunk;        // per (token, head) row
  for (auto i : range(global_id<0>(), new_tokens * heads_kv * chunks, grid_threads<0>())) {
    auto row = i / chunks;  // token * heads_kv + head
    auto first = i % chunks * kPagedChunk;
    auto slot = load(slots[row / heads_kv]);
    auto page_row = (slot / page_size * heads_kv + row % heads_kv) * page_size + slot % page_size;
    auto from = row * head_dim + first;
    auto to = page_row * head_dim + first;
    for (std::uint32_t e = 0; e < kPagedChunk; ++e) store(k_pages[to + e], load(k[from + e]));
    for (std::uint32_t e = 0; e < kPagedChunk; ++e) store(v_pages[to + e], load(v[from + e]));
  }
  static_cast<void>(num_pages);
}

// One chunk of 8 elements per thread, in groups of 256.
IRON_GEOMETRY(iron_kv_append_paged) {
  const std::uint64_t chunks =
      q.constant("new_tokens") * q.constant("heads_kv") * q.constant("head_dim") / kPagedChunk;
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

struct PagedShape {
  std::size_t new_tokens, heads_kv, head_dim, num_pages, page_size;
};

/// The pages after the append, by the definition: `pages` with each new row put in its slot.
std::vector<float> paged_appended(std::vector<float> pages, const std::vector<float>& fresh,
                                  const std::vector<std::uint32_t>& slots, const PagedShape& s) {
  for (std::size_t t = 0; t < s.new_tokens; ++t) {
    const std::size_t page = slots[t] / s.page_size, offset = slots[t] % s.page_size;
    for (std::size_t h = 0; h < s.heads_kv; ++h) {
      for (std::size_t d = 0; d < s.head_dim; ++d) {
        pages[((page * s.heads_kv + h) * s.page_size + offset) * s.head_dim + d] =
            fresh[(t * s.heads_kv + h) * s.head_dim + d];
      }
    }
  }
  return pages;
}

/// Pages full of earlier values; new tokens at `slots`. The check covers every page: the
/// appended rows hold the new values and every other row keeps its old one.
testing::TestSetup kv_append_paged_setup(const PagedShape& s,
                                         const std::vector<std::uint32_t>& slots,
                                         std::uint32_t groups, std::uint32_t tpg, DType dt,
                                         testing::Rng& rng) {
  const std::size_t fresh = s.new_tokens * s.heads_kv * s.head_dim;
  const std::size_t cached = s.num_pages * s.heads_kv * s.page_size * s.head_dim;
  const auto k = testing::round_through(rng.uniform(fresh, -4.0f, 4.0f), dt);
  const auto v = testing::round_through(rng.uniform(fresh, -4.0f, 4.0f), dt);
  const auto k_old = testing::round_through(rng.uniform(cached, -4.0f, 4.0f), dt);
  const auto v_old = testing::round_through(rng.uniform(cached, -4.0f, 4.0f), dt);
  return testing::TestSetup("iron_kv_append_paged", dt)
      .input("k", k)
      .input("v", v)
      .input_u32("slots", slots)
      .output("k_pages", cached)
      .output("v_pages", cached)
      .initial("k_pages", k_old)
      .initial("v_pages", v_old)
      .constant("new_tokens", static_cast<double>(s.new_tokens))
      .constant("heads_kv", static_cast<double>(s.heads_kv))
      .constant("head_dim", static_cast<double>(s.head_dim))
      .constant("num_pages", static_cast<double>(s.num_pages))
      .constant("page_size", static_cast<double>(s.page_size))
      .expect("k_pages", paged_appended(k_old, k, slots, s))
      .expect("v_pages", paged_appended(v_old, v, slots, s))
      .tolerance(testing::tolerance::exact())
      .grid({{groups}, {tpg}});
}

/// `count` distinct slots of the pool, in random order.
std::vector<std::uint32_t> scattered_slots(std::size_t count, std::size_t slots,
                                           testing::Rng& rng) {
  std::vector<std::uint32_t> all(slots);
  std::iota(all.begin(), all.end(), 0u);
  std::mt19937 engine(rng.integers(1, 0, ~0u)[0]);
  std::shuffle(all.begin(), all.end(), engine);
  all.resize(count);
  return all;
}

}  // namespace

// 16 tokens (a prefill chunk) to scattered slots of 6 pages of 16, 4 heads of 128.
IRON_TEST(iron_kv_append_paged, scattered_slots_page16, F32, F16, BF16) {
  const PagedShape s{16, 4, 128, 6, 16};
  return kv_append_paged_setup(s, scattered_slots(s.new_tokens, s.num_pages * s.page_size, rng), 4,
                               256, dt, rng);
}

// Odd sizes everywhere but head_dim (five chunks of 8), a page size that is no power of two, and
// a grid far smaller than the work, so the grid-stride loop wraps.
IRON_TEST(iron_kv_append_paged, ragged_small_grid, F32, F16, BF16) {
  const PagedShape s{5, 3, 40, 4, 7};
  return kv_append_paged_setup(s, scattered_slots(s.new_tokens, s.num_pages * s.page_size, rng), 2,
                               32, dt, rng);
}

// One decode step per sequence of a batch of three, into the last slot of pages of 256.
IRON_TEST(iron_kv_append_paged, decode_last_slots_page256, F32, F16, BF16) {
  const PagedShape s{3, 2, 64, 4, 256};
  return kv_append_paged_setup(s, {255, 3 * 256 + 255, 2 * 256 + 17}, 1, 256, dt, rng);
}

// A prefill chunk of 4096 tokens of 32 heads × 128 after 4096 cached ones, into a pool of 512
// pages of 16 (8192 tokens) whose order is shuffled: kv_append's bench, paged.
IRON_BENCH(iron_kv_append_paged, prefill4k_pages16, F32, F16, BF16) {
  const PagedShape s{4096, 32, 128, 512, 16};
  const std::size_t fresh = s.new_tokens * s.heads_kv * s.head_dim;
  const std::size_t cached = s.num_pages * s.heads_kv * s.page_size * s.head_dim;
  std::vector<std::uint32_t> pages(s.num_pages);
  std::iota(pages.begin(), pages.end(), 0u);
  std::mt19937 engine(15);
  std::shuffle(pages.begin(), pages.end(), engine);
  std::vector<std::uint32_t> slots(s.new_tokens);
  for (std::size_t t = 0; t < s.new_tokens; ++t) {
    const std::size_t position = 4096 + t;
    slots[t] = static_cast<std::uint32_t>(pages[position / s.page_size] * s.page_size +
                                          position % s.page_size);
  }
  bench::BenchSetup setup("iron_kv_append_paged", dt);
  setup.random("k", fresh)
      .random("v", fresh)
      .input_u32("slots", slots)
      .output("k_pages", cached)
      .output("v_pages", cached)
      .partial_outputs()
      .constant("new_tokens", static_cast<double>(s.new_tokens))
      .constant("heads_kv", static_cast<double>(s.heads_kv))
      .constant("head_dim", static_cast<double>(s.head_dim))
      .constant("num_pages", static_cast<double>(s.num_pages))
      .constant("page_size", static_cast<double>(s.page_size));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(4 * fresh * dtype_size(dt) + s.new_tokens * sizeof(std::uint32_t))
      .peer("kv_append_paged", {{"new_tokens", static_cast<double>(s.new_tokens)},
                                {"heads_kv", static_cast<double>(s.heads_kv)},
                                {"head_dim", static_cast<double>(s.head_dim)},
                                {"num_pages", static_cast<double>(s.num_pages)},
                                {"page_size", static_cast<double>(s.page_size)},
                                {"start", 4096.0}});
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
