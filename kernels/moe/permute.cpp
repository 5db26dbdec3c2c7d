/// iron_moe_permute: x_sorted[rows[t, k], :] = x[t, :], each token's hidden state copied to the
/// rows of its experts (iron_moe_sort's rows), so that each expert's tokens are contiguous; the
/// rows that no assignment takes (offsets[experts] on: dropped assignments) are zeros.
///
/// ## Error bound
/// Exact: values of T are copied (or zeros written), no arithmetic.
///
/// ## How it runs
/// One group per token: each thread reads its 16-byte vectors of the token's row once and writes
/// each to the token's top_k rows (an assignment whose row is n = tokens·top_k or more, a dropped
/// one, is skipped), so x is read once and x_sorted written once: (1 + top_k)·hidden·sizeof(T)
/// bytes a token, in whole 16-byte accesses. The rows are the same for the whole group and come
/// from L1 after the first vector. Group t then zeroes the unused rows offsets[experts] + t,
/// + tokens, … below n (none when nothing was dropped).
///
/// ## Layout
/// - `x        [tokens, hidden]` T
/// - `rows     [tokens, top_k]` u32 (iron_moe_sort's: the kept ones distinct, below
///   offsets[experts])
/// - `offsets  [experts + 1]` u32 (iron_moe_sort's; only offsets[experts] is read)
/// - `x_sorted [tokens · top_k, hidden]` T
///
/// ## Dispatch
/// Reduction: `tokens` groups, any tpg ≤ 1024; each thread strides over the row by tpg vectors.
/// hidden a multiple of 8 (whole 16-byte vectors in every dtype; every model's is).
#include <algorithm>
#include <array>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_moe_permute, (Tensor<T> x, Tensor<u32> rows, Tensor<u32> offsets, Out<T> x_sorted,
                               Constexpr<u32> tokens, Constexpr<u32> top_k, Constexpr<u32> experts,
                               Constexpr<u32> hidden)) {
  dispatch(reduction, {at_most(1024)});
  grid("[tokens, 1, 1]");
  layout(x, "[tokens, hidden]");
  layout(rows, "[tokens, top_k]");
  layout(offsets, "[experts + 1]");
  layout(x_sorted, "[tokens * top_k, hidden]");
  require_multiple_of(hidden, 8);
  constexpr u32 kLanes = 16 / lane_bytes<T>();
  auto token = program_id<0>();
  auto n = tokens * top_k;
  auto first_vector = thread_id<0>() * kLanes;
  auto stride = group_size<0>() * kLanes;
  for (auto j : range(first_vector, hidden, stride)) {
    const auto v = load_lanes<kLanes>(x[token * hidden + j]);
    for (auto k : range(0u, top_k, 1u)) {
      auto r = load(rows[token * top_k + k]);
      IRON_IF(r < n) { store_lanes(x_sorted[r * hidden + j], v); }
    }
  }
  std::array<Expr<T>, kLanes> zeros;
  zeros.fill(Expr<T>(0.0f));
  for (auto r : range(min(load(offsets[experts]), n) + token, n, tokens)) {
    for (auto j : range(first_vector, hidden, stride)) store_lanes(x_sorted[r * hidden + j], zeros);
  }
}

// One group per token, of one thread per 16-byte vector of the row (whole simdgroups, at most
// 512): each thread's loop runs once for rows up to 512 vectors.
IRON_GEOMETRY(iron_moe_permute) {
  return Geometry::per_row(
      q.constant("tokens"),
      q.threads_per_group(whole_simdgroups(vector_count(q.constant("hidden"), q.dtype), 512)));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "assignments.hpp"

namespace iron::kernels {

namespace {

/// The definition: row r of x_sorted is the token of assignment sources[r], zeros past the kept
/// assignments.
std::vector<float> permute_oracle(const std::vector<float>& x, const SortedAssignments& s,
                                  std::size_t top_k, std::size_t hidden) {
  const std::size_t n = s.rows.size();
  std::vector<float> out(n * hidden, 0.0f);
  for (std::size_t r = 0; r < s.offsets.back(); ++r) {
    const std::size_t token = s.sources[r] / top_k;
    std::copy_n(&x[token * hidden], hidden, &out[r * hidden]);
  }
  return out;
}

/// The case for these ids; tpg 0 takes the kernel's geometry.
testing::TestSetup permute_setup(const std::vector<std::uint32_t>& ids, std::size_t tokens,
                                 std::size_t top_k, std::size_t experts, std::size_t hidden,
                                 std::uint32_t tpg, DType dt, testing::Rng& rng) {
  const SortedAssignments s = sort_oracle(ids, experts);
  const auto x = testing::round_through(rng.uniform(tokens * hidden, -1.0f, 1.0f), dt);
  testing::TestSetup setup("iron_moe_permute", dt);
  setup.input("x", x)
      .input_u32("rows", s.rows)
      .input_u32("offsets", s.offsets)
      .output("x_sorted", ids.size() * hidden)
      .constant("tokens", static_cast<double>(tokens))
      .constant("top_k", static_cast<double>(top_k))
      .constant("experts", static_cast<double>(experts))
      .constant("hidden", static_cast<double>(hidden))
      .expect("x_sorted", permute_oracle(x, s, top_k, hidden))
      .tolerance(testing::tolerance::exact());
  if (tpg == 0) return setup.grid(testing::geometry_grid(setup));
  return setup.grid_rows(static_cast<std::uint32_t>(tokens), tpg);
}

bench::BenchSetup permute_bench(std::size_t tokens, std::size_t experts, std::size_t top_k,
                                std::size_t hidden, DType dt) {
  const SortedAssignments s = sort_oracle(bench_routing(tokens, experts, top_k), experts);
  const std::size_t n = tokens * top_k;
  bench::BenchSetup setup("iron_moe_permute", dt);
  setup.random("x", tokens * hidden)
      .input_u32("rows", s.rows)
      .input_u32("offsets", s.offsets)
      .output("x_sorted", n * hidden)
      .constant("tokens", static_cast<double>(tokens))
      .constant("top_k", static_cast<double>(top_k))
      .constant("experts", static_cast<double>(experts))
      .constant("hidden", static_cast<double>(hidden));
  // x read once, x_sorted written once, the rows read once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((tokens + n) * hidden * dtype_size(dt) + n * 4)
      .peer("moe_permute", {{"tokens", static_cast<double>(tokens)},
                            {"experts", static_cast<double>(experts)},
                            {"top_k", static_cast<double>(top_k)},
                            {"hidden", static_cast<double>(hidden)}});
}

}  // namespace

// Mixtral's routing (8 experts, top-2) on a small layer.
IRON_TEST(iron_moe_permute, top2_of_8, F32, F16, BF16) {
  return permute_setup(random_routing(32, 8, 2, rng), 32, 2, 8, 256, 0, dt, rng);
}

// 64 experts, top-8: most experts get a token or two.
IRON_TEST(iron_moe_permute, top8_of_64, F32, F16, BF16) {
  return permute_setup(random_routing(16, 64, 8, rng), 16, 8, 64, 128, 0, dt, rng);
}

// An expert every token chooses, one that one token chooses, one that none does.
IRON_TEST(iron_moe_permute, all_one_and_no_tokens, F32, F16, BF16) {
  return permute_setup(edge_routing(24, 8, 3, rng), 24, 3, 8, 64, 0, dt, rng);
}

IRON_TEST(iron_moe_permute, top_k_1, F32, F16, BF16) {
  return permute_setup(random_routing(20, 4, 1, rng), 20, 1, 4, 64, 0, dt, rng);
}
IRON_TEST(iron_moe_permute, top_k_equals_experts, F32, F16, BF16) {
  return permute_setup(random_routing(6, 4, 4, rng), 6, 4, 4, 64, 0, dt, rng);
}
IRON_TEST(iron_moe_permute, single_token, F32, F16, BF16) {
  return permute_setup(random_routing(1, 16, 4, rng), 1, 4, 16, 256, 0, dt, rng);
}

// Dropped assignments: their rows are skipped, and the rows past the kept ones are zeros,
// written by groups 0, 1 and 2.
IRON_TEST(iron_moe_permute, dropped_assignments_leave_zero_rows, F32, F16, BF16) {
  auto ids = random_routing(10, 6, 2, rng);
  ids[1] = 6;
  ids[8] = 0xFFFFFFFFu;
  ids[13] = 6;
  return permute_setup(ids, 10, 2, 6, 64, 0, dt, rng);
}

// A row of 40 (5 vectors of f16/bf16: most threads of the simdgroup idle), and rows of several
// vectors a thread (tpg 32 for 256 elements).
IRON_TEST(iron_moe_permute, short_rows, F32, F16, BF16) {
  return permute_setup(random_routing(12, 8, 2, rng), 12, 2, 8, 40, 0, dt, rng);
}
IRON_TEST(iron_moe_permute, several_vectors_a_thread, F32, F16, BF16) {
  return permute_setup(random_routing(12, 8, 2, rng), 12, 2, 8, 256, 32, dt, rng);
}

// Mixtral's layer (8 experts, top-2, hidden 4096) and a many-expert one (128 experts, top-8,
// hidden 2048), 4096 tokens each.
IRON_BENCH(iron_moe_permute, tokens4096_experts8_top2_hidden4096, F32, BF16) {
  return permute_bench(4096, 8, 2, 4096, dt);
}
IRON_BENCH(iron_moe_permute, tokens4096_experts128_top8_hidden2048, BF16) {
  return permute_bench(4096, 128, 8, 2048, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
