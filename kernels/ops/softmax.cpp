/// iron_softmax: out[r, j] = exp(x[r, j] - max_k x[r, k]) / sum_k exp(x[r, k] - max_k x[r, k]).
///
/// Subtracting the row maximum keeps exp() in range for inputs of any magnitude. Everything
/// accumulates in f32; only the final value is rounded to T.
///
/// ## Error bound
/// Relative, per element: γ_k with k = 2·(4 + Y) + d + 2 (u = 2^-24), then the rounding to T
/// (2^-11 f16, 2^-8 bf16). x − max rounds by u·|x − max|, which exp turns into a relative error of
/// Y·u, Y = the row's max − min (capped at 104: exp below −104 is under f32's smallest
/// subnormal); exp errs by 2 ulp (4u); the sum of the positive exponentials, of addition depth
/// d = L·⌈⌈n/L⌉/tpg⌉ + tpg − 2 (at most n − 1; L = the elements of a 16-byte vector), adds γ_d to
/// those; the reciprocal and the product round once each.
///
/// ## How it runs
/// A row that fits the group's registers (n a multiple of L, n ≤ 4·L·tpg) is read once, into
/// registers, and written from them (resident_row.hpp); a longer or ragged row is read three
/// times (max, sum, write), from cache after the first.
///
/// ## Layout
/// - `inp [rows, n]` T
/// - `out [rows, n]` T
///
/// ## Dispatch
/// Reduction: one group per row (`rows` groups), `tpg` threads with tpg a multiple of 32,
/// 32 ≤ tpg ≤ 1024. Any n ≥ 1: each thread strides over the row by tpg.
#include <algorithm>
#include <cmath>
#include <iron/iron.hpp>

#include "../primitives/resident_row.hpp"
#include "../primitives/row_stats.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_softmax, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(out, "[groups.x, n]");
  auto base = program_id<0>() * n;
  IRON_IF(ResidentRow<T>::fits(n)) {
    ResidentRow<T> row(inp, base, n);
    auto peak = row.max();
    row.update([&](const Expr<f32>& x) { return exp(x - peak); });
    auto inv_sum = recip(row.sum());
    row.store(out, base, [&](const Expr<u32>&, const typename ResidentRow<T>::Lanes& x) {
      typename ResidentRow<T>::Vector y;
      for (std::size_t e = 0; e < x.size(); ++e) y[e] = cast<T>(x[e] * inv_sum);
      return y;
    });
  }
  IRON_ELSE {
    const RowStats stats = row_stats(inp, base, n);
    auto inv_sum = recip(stats.sum_exp);
    for (auto j : range(thread_id<0>(), n, group_size<0>())) {
      store(out[base + j], cast<T>(exp(cast<f32>(load(inp[base + j])) - stats.max) * inv_sum));
    }
  }
}

// One group per row, sized to hold the row in registers (resident_row.hpp).
IRON_GEOMETRY(iron_softmax) { return resident_row_geometry(q, "inp"); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition, in double: each row's exponentials over their sum (shifted for range).
std::vector<float> softmax_oracle(const std::vector<float>& x, std::size_t rows, std::size_t n) {
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = &x[r * n];
    double peak = row[0];
    for (std::size_t j = 1; j < n; ++j) peak = std::max(peak, double{row[j]});
    double total = 0.0;
    for (std::size_t j = 0; j < n; ++j) total += std::exp(row[j] - peak);
    for (std::size_t j = 0; j < n; ++j)
      y[r * n + j] = static_cast<float>(std::exp(row[j] - peak) / total);
  }
  return y;
}

testing::TestSetup softmax_setup(std::size_t rows, std::size_t n, std::uint32_t tpg, float spread,
                                 DType dt, testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(rows * n, -spread, spread), dt);
  namespace tol = testing::tolerance;
  const auto y =
      static_cast<std::size_t>(std::ceil(std::min(tol::max_row_range(x, rows, n), 104.0)));
  const std::size_t k =
      2 * (tol::kExpU + y) + tol::group_sum_depth(n, tpg, tol::lanes_per_vector(dt)) + 2;
  return testing::TestSetup("iron_softmax", dt)
      .input("inp", x)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n))
      .expect("out", softmax_oracle(x, rows, n))
      .tolerance(tol::relative(dt, k))
      .grid_rows(static_cast<std::uint32_t>(rows), tpg);
}

/// The kernel's own geometry: one group per row, four 16-byte vectors a thread.
bench::BenchSetup softmax_bench(std::size_t rows, std::size_t n, DType dt) {
  bench::BenchSetup setup("iron_softmax", dt);
  setup.random("inp", rows * n, -4.0f, 4.0f)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * rows * n * dtype_size(dt))
      .flops(5 * rows * n)
      .peer("softmax", {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}});
}

}  // namespace

IRON_TEST(iron_softmax, rows_4096, F32, F16, BF16) {
  return softmax_setup(8, 4096, 256, 4.0f, dt, rng);
}

// Row lengths that are not a multiple of the group size, down to a single element.
IRON_TEST(iron_softmax, ragged_rows, F32, F16, BF16) {
  return softmax_setup(3, 1000, 128, 4.0f, dt, rng);
}

// Rows longer than the group's registers hold (four 16-byte vectors a thread): the streaming path.
IRON_TEST(iron_softmax, rows_past_the_registers, F32, F16, BF16) {
  return softmax_setup(2, 1032, 32, 4.0f, dt, rng);
}

// A row length that is no multiple of a vector's lanes streams too.
IRON_TEST(iron_softmax, odd_rows, F32, F16, BF16) {
  return softmax_setup(3, 999, 64, 4.0f, dt, rng);
}

// One vector per row: most threads hold nothing.
IRON_TEST(iron_softmax, one_vector_rows, F32, F16, BF16) {
  return softmax_setup(3, 8, 64, 4.0f, dt, rng);
}

IRON_TEST(iron_softmax, single_element_rows, F32, F16, BF16) {
  return softmax_setup(5, 1, 32, 4.0f, dt, rng);
}

// Inputs near ±3e4 overflow exp() unless the row maximum is subtracted first.
IRON_TEST(iron_softmax, large_magnitude, F32, F16, BF16) {
  return softmax_setup(4, 333, 1024, 3.0e4f, dt, rng);
}

}  // namespace iron::kernels

namespace iron::kernels {
// The shapes of ANCHORS.md: square, many short rows, few vocabulary-sized rows.
IRON_BENCH(iron_softmax, rows4096_n4096, F32, F16, BF16) { return softmax_bench(4096, 4096, dt); }
IRON_BENCH(iron_softmax, rows16384_n4096, BF16) { return softmax_bench(16384, 4096, dt); }
IRON_BENCH(iron_softmax, rows32768_n1024, F32, BF16) { return softmax_bench(32768, 1024, dt); }
IRON_BENCH(iron_softmax, rows1024_n32768, BF16) { return softmax_bench(1024, 32768, dt); }
}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
