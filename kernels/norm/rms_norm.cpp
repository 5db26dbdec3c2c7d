/// iron_rms_norm: out[r, j] = x[r, j] * weight[j] / sqrt(mean_k x[r, k]^2 + eps).
///
/// The sum of squares accumulates in f32 whatever T is; the result is rounded once to T.
///
/// ## Error bound
/// Relative, per element: γ_k with k = ⌈(d + 3) / 2⌉ + 7 (u = 2^-24), then the rounding to T
/// (2^-11 f16, 2^-8 bf16). The sum of squares (one rounding per square, addition depth
/// d = L·⌈⌈n/L⌉/tpg⌉ + tpg − 2, at most n − 1, L the elements of a 16-byte vector; all terms
/// positive), the division by n and the + eps
/// err by γ_{d+3}, which the square root halves (+1 for the second-order term); rsqrt errs by
/// 2 ulp (4u); the two products round once each.
///
/// ## Layout
/// - `inp    [rows, n]` T
/// - `weight [n]`       T
/// - `out    [rows, n]` T
///
/// ## Dispatch
/// Reduction: one group per row (`rows` groups), `tpg` threads with tpg a multiple of 32,
/// 32 ≤ tpg ≤ 1024. Any n ≥ 1. A row that fits the group's registers (n a multiple of L,
/// n ≤ 4·L·tpg) is read once (resident_row.hpp); a longer or ragged one twice, each thread
/// striding over it by tpg.
#include <algorithm>
#include <cmath>
#include <iron/iron.hpp>

#include "../primitives/resident_row.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_rms_norm,
            (Tensor<T> inp, Tensor<T> weight, Out<T> out, Constexpr<u32> n, Constexpr<f32> eps)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(weight, "[n]");
  layout(out, "[groups.x, n]");
  auto base = program_id<0>() * n;
  auto tid = thread_id<0>();
  auto tpg = group_size<0>();

  IRON_IF(ResidentRow<T>::fits(n)) {
    ResidentRow<T> row(inp, base, n);
    auto inv_rms = rsqrt(row.sum([](const Expr<f32>& x) { return x * x; }) / cast<f32>(n) + eps);
    const auto weights = [&](const Expr<u32>& column) {
      return load_lanes<ResidentRow<T>::kLanes>(weight[column]);
    };
    row.store_fetching(out, base, weights, [&](const Expr<u32>&, const auto& x, const auto& w) {
      typename ResidentRow<T>::Vector y;
      for (std::size_t e = 0; e < x.size(); ++e) y[e] = cast<T>(x[e] * inv_rms * cast<f32>(w[e]));
      return y;
    });
  }
  IRON_ELSE {
    Var<f32> local_squares = 0.0f;
    for (auto j : range(tid, n, tpg)) {
      auto v = cast<f32>(load(inp[base + j]));
      local_squares += v * v;
    }
    auto inv_rms = rsqrt(reduce_sum(local_squares) / cast<f32>(n) + eps);

    for (auto j : range(tid, n, tpg)) {
      auto v = cast<f32>(load(inp[base + j])) * inv_rms * cast<f32>(load(weight[j]));
      store(out[base + j], cast<T>(v));
    }
  }
}

// One group per row, sized to hold the row in registers (resident_row.hpp).
IRON_GEOMETRY(iron_rms_norm) { return resident_row_geometry(q, "inp"); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition, in double.
std::vector<float> rms_norm_oracle(const std::vector<float>& x, const std::vector<float>& w,
                                   std::size_t rows, std::size_t n, float eps) {
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    double squares = 0.0;
    for (std::size_t j = 0; j < n; ++j) squares += double{x[r * n + j]} * x[r * n + j];
    const double scale = 1.0 / std::sqrt(squares / static_cast<double>(n) + eps);
    for (std::size_t j = 0; j < n; ++j) {
      y[r * n + j] = static_cast<float>(x[r * n + j] * scale * w[j]);
    }
  }
  return y;
}

/// k of the error bound γ_k (see the doc comment).
std::size_t rms_norm_error_u(std::size_t n, std::uint32_t tpg, DType dt) {
  namespace tol = testing::tolerance;
  return (tol::group_sum_depth(n, tpg, tol::lanes_per_vector(dt)) + 4) / 2 + 1 + tol::kRsqrtU + 2;
}

testing::TestSetup rms_norm_setup(std::size_t rows, std::size_t n, std::uint32_t tpg, float spread,
                                  DType dt, testing::Rng& rng) {
  const float eps = 1e-5f;
  const auto x = testing::round_through(rng.uniform(rows * n, -spread, spread), dt);
  const auto w = testing::round_through(rng.uniform(n, 0.5f, 1.5f), dt);
  return testing::TestSetup("iron_rms_norm", dt)
      .input("inp", x)
      .input("weight", w)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n))
      .constant("eps", eps)
      .expect("out", rms_norm_oracle(x, w, rows, n, eps))
      .tolerance(testing::tolerance::relative(dt, rms_norm_error_u(n, tpg, dt)))
      .grid_rows(static_cast<std::uint32_t>(rows), tpg);
}

}  // namespace

IRON_TEST(iron_rms_norm, hidden_4096, F32, F16, BF16) {
  return rms_norm_setup(8, 4096, 256, 2.0f, dt, rng);
}

// A row length that is not a multiple of the group size, and a single-element row.
IRON_TEST(iron_rms_norm, ragged_rows, F32, F16, BF16) {
  return rms_norm_setup(3, 999, 64, 2.0f, dt, rng);
}

// Rows longer than the group's registers hold (four 16-byte vectors a thread) stream instead.
IRON_TEST(iron_rms_norm, rows_past_the_registers, F32, F16, BF16) {
  return rms_norm_setup(2, 2056, 64, 2.0f, dt, rng);
}

// 202 vectors a row on 64 threads: threads 0..9 hold four vectors (all their weights fetched
// before the first store), the others three (one store after each fetch).
IRON_TEST(iron_rms_norm, some_threads_full, F32, F16, BF16) {
  return rms_norm_setup(3, 202 * testing::tolerance::lanes_per_vector(dt), 64, 2.0f, dt, rng);
}

// One vector per row: most threads hold nothing.
IRON_TEST(iron_rms_norm, one_vector_rows, F32, F16, BF16) {
  return rms_norm_setup(3, 8, 64, 2.0f, dt, rng);
}

IRON_TEST(iron_rms_norm, single_element_rows, F32, F16, BF16) {
  return rms_norm_setup(4, 1, 32, 2.0f, dt, rng);
}

// Values near ±200 square to 4e4 each: the f32 sum must not overflow f16 range.
IRON_TEST(iron_rms_norm, large_magnitude, F32, F16, BF16) {
  return rms_norm_setup(2, 2048, 1024, 200.0f, dt, rng);
}

}  // namespace iron::kernels

namespace iron::kernels {
namespace {

bench::BenchSetup rms_norm_bench(std::size_t rows, std::size_t n, DType dt) {
  bench::BenchSetup setup("iron_rms_norm", dt);
  setup.random("inp", rows * n)
      .random("weight", n, 0.5f, 1.5f)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n))
      .constant("eps", 1e-6);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((2 * rows * n + n) * dtype_size(dt))
      .flops(4 * rows * n)
      .peer("rms_norm",
            {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}, {"eps", 1e-6}});
}

}  // namespace

IRON_BENCH(iron_rms_norm, rows16384_n4096, F32, F16, BF16) {
  return rms_norm_bench(16384, 4096, dt);
}
}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
