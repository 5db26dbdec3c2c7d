/// iron_moe_combine: out[t, :] = Σ_k topk_weights[t, k] · y_sorted[rows[t, k], :], each token's
/// experts' outputs (in iron_moe_sort's expert-contiguous rows) weighted by the router's weights
/// and summed, in one launch.
///
/// The sum accumulates in f32 whatever T is; only the result is rounded to T. A dropped
/// assignment (rows[t, k] ≥ tokens·top_k) adds nothing, whatever its weight and whatever the
/// rows of y_sorted hold.
///
/// ## Error bound
/// Absolute, per element: γ_(top_k) · Σ_k |w_k| · |y_k| (each product rounds once, or not at all
/// when fused, and passes through at most top_k − 1 additions), then the rounding to T.
///
/// ## How it runs
/// One group per token: each thread takes its 16-byte vectors of the output row and, for each k,
/// reads the row and weight (the same for the whole group, from L1 after the first vector) and
/// the vector of y_sorted at that row, accumulating in f32 registers; then it writes the vector
/// once. y_sorted is read once and out written once: (top_k + 1)·hidden·sizeof(T) bytes a token,
/// in whole 16-byte accesses. The loop body has no branch (a dropped assignment reads the last
/// row and selects 0 for its term), so the compiler may issue several k's loads together.
///
/// ## Layout
/// - `y_sorted     [tokens · top_k, hidden]` T
/// - `rows         [tokens, top_k]` u32 (iron_moe_sort's)
/// - `topk_weights [tokens, top_k]` f32
/// - `out          [tokens, hidden]` T
///
/// ## Dispatch
/// Reduction: `tokens` groups, any tpg ≤ 1024; each thread strides over the row by tpg vectors.
/// hidden a multiple of 8 (whole 16-byte vectors in every dtype; every model's is).
#include <array>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_moe_combine,
            (Tensor<T> y_sorted, Tensor<u32> rows, Tensor<f32> topk_weights, Out<T> out,
             Constexpr<u32> tokens, Constexpr<u32> top_k, Constexpr<u32> hidden)) {
  dispatch(reduction, {at_most(1024)});
  grid("[tokens, 1, 1]");
  layout(y_sorted, "[tokens * top_k, hidden]");
  layout(rows, "[tokens, top_k]");
  layout(topk_weights, "[tokens, top_k]");
  layout(out, "[tokens, hidden]");
  require_multiple_of(hidden, 8);
  constexpr u32 kLanes = 16 / lane_bytes<T>();
  auto token = program_id<0>();
  auto n = tokens * top_k;
  for (auto j : range(thread_id<0>() * kLanes, hidden, group_size<0>() * kLanes)) {
    Regs<f32, kLanes> acc(0.0f);
    for (auto k : range(0u, top_k, 1u)) {
      auto at = token * top_k + k;
      auto r = load(rows[at]);
      auto kept = r < n;
      auto w = load(topk_weights[at]);
      const auto y = load_lanes<kLanes>(y_sorted[min(r, n - 1u) * hidden + j]);
      for (u32 e = 0; e < kLanes; ++e) {
        acc[e] += select(kept, w * cast<f32>(y[e]), Expr<f32>(0.0f));
      }
    }
    std::array<Expr<T>, kLanes> v;
    for (u32 e = 0; e < kLanes; ++e) v[e] = cast<T>(acc[e].get());
    store_lanes(out[token * hidden + j], v);
  }
}

// One group per token, of one thread per 16-byte vector of the row (whole simdgroups, at most
// 512): each thread's loop runs once for rows up to 512 vectors.
IRON_GEOMETRY(iron_moe_combine) {
  return Geometry::per_row(
      q.constant("tokens"),
      q.threads_per_group(whole_simdgroups(vector_count(q.constant("hidden"), q.dtype), 512)));
}

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

#include "assignments.hpp"

namespace iron::kernels {

namespace {

/// The definition, in double, and the bound's Σ_k |w_k|·|y_k| (its largest over the elements).
struct Combined {
  std::vector<float> out;
  double abs_sum = 0.0;
};
Combined combine_oracle(const std::vector<float>& y, const std::vector<float>& weights,
                        const SortedAssignments& s, std::size_t top_k, std::size_t hidden) {
  const std::size_t n = s.rows.size();
  const std::size_t tokens = n / top_k;
  Combined c{std::vector<float>(tokens * hidden), 0.0};
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t j = 0; j < hidden; ++j) {
      double sum = 0.0;
      double abs_sum = 0.0;
      for (std::size_t k = 0; k < top_k; ++k) {
        const std::uint32_t r = s.rows[t * top_k + k];
        if (r >= n) continue;
        const double term = double{weights[t * top_k + k]} * y[r * hidden + j];
        sum += term;
        abs_sum += std::abs(term);
      }
      c.out[t * hidden + j] = static_cast<float>(sum);
      c.abs_sum = std::max(c.abs_sum, abs_sum);
    }
  }
  return c;
}

/// The case for these ids, weights uniform in [0, 1); tpg 0 takes the kernel's geometry.
testing::TestSetup combine_setup(const std::vector<std::uint32_t>& ids, std::size_t tokens,
                                 std::size_t top_k, std::size_t experts, std::size_t hidden,
                                 std::uint32_t tpg, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const SortedAssignments s = sort_oracle(ids, experts);
  const std::size_t n = ids.size();
  auto y = testing::round_through(rng.uniform(n * hidden, -1.0f, 1.0f), dt);
  // The rows no assignment takes hold NaN, as an expert's unwritten rows may: none may leak.
  std::fill(y.begin() + static_cast<std::ptrdiff_t>(s.offsets.back() * hidden), y.end(),
            std::numeric_limits<float>::quiet_NaN());
  const auto weights = rng.uniform(n, 0.0f, 1.0f);
  const Combined want = combine_oracle(y, weights, s, top_k, hidden);
  testing::TestSetup setup("iron_moe_combine", dt);
  setup.input("y_sorted", y)
      .input_u32("rows", s.rows)
      .input("topk_weights", weights)
      .output("out", tokens * hidden)
      .constant("tokens", static_cast<double>(tokens))
      .constant("top_k", static_cast<double>(top_k))
      .constant("hidden", static_cast<double>(hidden))
      .expect("out", want.out)
      .tolerance(tol::stored(dt, tol::gamma(top_k) * want.abs_sum, 0.0));
  if (tpg == 0) return setup.grid(testing::geometry_grid(setup));
  return setup.grid_rows(static_cast<std::uint32_t>(tokens), tpg);
}

bench::BenchSetup combine_bench(std::size_t tokens, std::size_t experts, std::size_t top_k,
                                std::size_t hidden, DType dt) {
  const SortedAssignments s = sort_oracle(bench_routing(tokens, experts, top_k), experts);
  const std::size_t n = tokens * top_k;
  bench::BenchSetup setup("iron_moe_combine", dt);
  setup.random("y_sorted", n * hidden)
      .input_u32("rows", s.rows)
      .random("topk_weights", n, 0.0f, 1.0f)
      .output("out", tokens * hidden)
      .constant("tokens", static_cast<double>(tokens))
      .constant("top_k", static_cast<double>(top_k))
      .constant("hidden", static_cast<double>(hidden));
  // y_sorted read once, out written once, the rows and weights read once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((n + tokens) * hidden * dtype_size(dt) + n * 8)
      .flops(2 * n * hidden)
      .peer("moe_combine", {{"tokens", static_cast<double>(tokens)},
                            {"experts", static_cast<double>(experts)},
                            {"top_k", static_cast<double>(top_k)},
                            {"hidden", static_cast<double>(hidden)}});
}

}  // namespace

// Mixtral's routing (8 experts, top-2) on a small layer.
IRON_TEST(iron_moe_combine, top2_of_8, F32, F16, BF16) {
  return combine_setup(random_routing(32, 8, 2, rng), 32, 2, 8, 256, 0, dt, rng);
}

// 64 experts, top-8: eight rows summed a token.
IRON_TEST(iron_moe_combine, top8_of_64, F32, F16, BF16) {
  return combine_setup(random_routing(16, 64, 8, rng), 16, 8, 64, 128, 0, dt, rng);
}

// An expert every token chooses, one that one token chooses, one that none does.
IRON_TEST(iron_moe_combine, all_one_and_no_tokens, F32, F16, BF16) {
  return combine_setup(edge_routing(24, 8, 3, rng), 24, 3, 8, 64, 0, dt, rng);
}

IRON_TEST(iron_moe_combine, top_k_1, F32, F16, BF16) {
  return combine_setup(random_routing(20, 4, 1, rng), 20, 1, 4, 64, 0, dt, rng);
}
IRON_TEST(iron_moe_combine, top_k_equals_experts, F32, F16, BF16) {
  return combine_setup(random_routing(6, 4, 4, rng), 6, 4, 4, 64, 0, dt, rng);
}
IRON_TEST(iron_moe_combine, single_token, F32, F16, BF16) {
  return combine_setup(random_routing(1, 16, 4, rng), 1, 4, 16, 256, 0, dt, rng);
}

// Dropped assignments add nothing (a token with none kept sums to 0), though the row they read
// holds NaN.
IRON_TEST(iron_moe_combine, dropped_assignments_add_nothing, F32, F16, BF16) {
  auto ids = random_routing(10, 6, 2, rng);
  ids[1] = 6;
  ids[8] = 0xFFFFFFFFu;
  ids[9] = 7;
  return combine_setup(ids, 10, 2, 6, 64, 0, dt, rng);
}

// Rows of several vectors a thread (tpg 32 for 256 elements).
IRON_TEST(iron_moe_combine, several_vectors_a_thread, F32, F16, BF16) {
  return combine_setup(random_routing(12, 8, 2, rng), 12, 2, 8, 256, 32, dt, rng);
}

// Mixtral's layer (8 experts, top-2, hidden 4096) and a many-expert one (128 experts, top-8,
// hidden 2048), 4096 tokens each.
IRON_BENCH(iron_moe_combine, tokens4096_experts8_top2_hidden4096, F32, BF16) {
  return combine_bench(4096, 8, 2, 4096, dt);
}
IRON_BENCH(iron_moe_combine, tokens4096_experts128_top8_hidden2048, BF16) {
  return combine_bench(4096, 128, 8, 2048, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
