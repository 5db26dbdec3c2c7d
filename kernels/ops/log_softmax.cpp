/// iron_log_softmax: out[r, j] = x[r, j] - max_k x[r, k] - log(sum_k exp(x[r, k] - max_k x[r, k])).
///
/// Subtracting the row maximum keeps exp() in range for inputs of any magnitude, and the result
/// is formed as a difference (never log of a quotient), so it stays exact where softmax would
/// underflow to 0. The row statistics come from the shared primitives; everything
/// accumulates in f32 and only the final value is rounded to T.
///
/// ## Error bound
/// |err| ≤ θ / (1 − θ) + γ_4·|out| (u = 2^-24), then the rounding to T (2^-11 f16, 2^-8 bf16
/// relative). The row's sum of exponentials errs by the relative θ = γ_{4 + Y + d}, as in
/// iron_softmax (exp's 2 ulp = 4u; x − max's Y·u, Y the row's max − min capped at 104; the
/// addition depth d = L·⌈⌈n/L⌉/tpg⌉ + tpg − 2, at most n − 1, L the elements of a 16-byte
/// vector), so its log by at most θ / (1 − θ);
/// logf's 1 ulp (2u), x − max and the final subtraction add γ_4 relative to |out|, which is at
/// least both |x − max| and the log.
///
/// ## Layout
/// - `inp [rows, n]` T
/// - `out [rows, n]` T
///
/// ## Dispatch
/// Reduction: one group per row (`rows` groups), `tpg` threads with tpg a multiple of 32,
/// 32 ≤ tpg ≤ 1024. Any n ≥ 1. A row that fits the group's registers (n a multiple of L,
/// n ≤ 4·L·tpg) is read once (resident_row.hpp); a longer or ragged one three times, each
/// thread striding over it by tpg.
#include <algorithm>
#include <cmath>
#include <iron/iron.hpp>

#include "../primitives/resident_row.hpp"
#include "../primitives/row_stats.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_log_softmax, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(out, "[groups.x, n]");
  auto base = program_id<0>() * n;
  // (x - max) - log_sum, not x - (max + log_sum): max + log_sum would round at the scale of max.
  IRON_IF(ResidentRow<T>::fits(n)) {
    ResidentRow<T> row(inp, base, n);
    auto peak = row.max();
    auto log_sum = log(row.sum([&](const Expr<f32>& x) { return exp(x - peak); }));
    row.store(out, base, [&](const Expr<u32>&, const typename ResidentRow<T>::Lanes& x) {
      typename ResidentRow<T>::Vector y;
      for (std::size_t e = 0; e < x.size(); ++e) y[e] = cast<T>((x[e] - peak) - log_sum);
      return y;
    });
  }
  IRON_ELSE {
    const RowStats stats = row_stats(inp, base, n);
    auto log_sum = log(stats.sum_exp);
    for (auto j : range(thread_id<0>(), n, group_size<0>())) {
      store(out[base + j], cast<T>((cast<f32>(load(inp[base + j])) - stats.max) - log_sum));
    }
  }
}

// One group per row, sized to hold the row in registers (resident_row.hpp).
IRON_GEOMETRY(iron_log_softmax) { return resident_row_geometry(q, "inp"); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition, in double.
std::vector<float> log_softmax_oracle(const std::vector<float>& x, std::size_t rows,
                                      std::size_t n) {
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = &x[r * n];
    double peak = row[0];
    for (std::size_t j = 1; j < n; ++j) peak = std::max(peak, double{row[j]});
    double total = 0.0;
    for (std::size_t j = 0; j < n; ++j) total += std::exp(row[j] - peak);
    const double log_total = std::log(total);
    for (std::size_t j = 0; j < n; ++j)
      y[r * n + j] = static_cast<float>(row[j] - peak - log_total);
  }
  return y;
}

testing::TestSetup log_softmax_setup(std::size_t rows, std::size_t n, std::uint32_t tpg,
                                     float spread, DType dt, testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(rows * n, -spread, spread), dt);
  namespace tol = testing::tolerance;
  const auto y =
      static_cast<std::size_t>(std::ceil(std::min(tol::max_row_range(x, rows, n), 104.0)));
  const double theta =
      tol::gamma(tol::kExpU + y + tol::group_sum_depth(n, tpg, tol::lanes_per_vector(dt)));
  return testing::TestSetup("iron_log_softmax", dt)
      .input("inp", x)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n))
      .expect("out", log_softmax_oracle(x, rows, n))
      .tolerance(tol::stored(dt, theta / (1.0 - theta), tol::gamma(tol::kLogU + 2)))
      .grid_rows(static_cast<std::uint32_t>(rows), tpg);
}

bench::BenchSetup log_softmax_bench(std::size_t rows, std::size_t n, DType dt) {
  const std::size_t bytes = rows * n * dtype_size(dt);
  bench::BenchSetup setup("iron_log_softmax", dt);
  setup.random("inp", rows * n, -4.0f, 4.0f)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * bytes)
      .peer("log_softmax", {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}});
}

}  // namespace

IRON_TEST(iron_log_softmax, rows_4096, F32, F16, BF16) {
  return log_softmax_setup(8, 4096, 256, 4.0f, dt, rng);
}

// Row lengths that are not a multiple of the group size.
IRON_TEST(iron_log_softmax, ragged_rows, F32, F16, BF16) {
  return log_softmax_setup(3, 1000, 128, 4.0f, dt, rng);
}

// A one-element row is log(1) = 0 exactly.
// Rows longer than the group's registers hold, and a length no multiple of a vector: streamed.
IRON_TEST(iron_log_softmax, rows_past_the_registers, F32, F16, BF16) {
  return log_softmax_setup(2, 1032, 32, 4.0f, dt, rng);
}

IRON_TEST(iron_log_softmax, odd_rows, F32, F16, BF16) {
  return log_softmax_setup(3, 999, 64, 4.0f, dt, rng);
}

IRON_TEST(iron_log_softmax, single_element_rows, F32, F16, BF16) {
  return log_softmax_setup(5, 1, 32, 4.0f, dt, rng);
}

// Inputs near ±3e4: exp() overflows unless the maximum is subtracted first, and most outputs
// are around -3e4, where softmax would have underflowed to 0.
IRON_TEST(iron_log_softmax, large_magnitude, F32, F16, BF16) {
  return log_softmax_setup(4, 333, 1024, 3.0e4f, dt, rng);
}

IRON_BENCH(iron_log_softmax, rows4096_n4096, F32, F16, BF16) {
  return log_softmax_bench(4096, 4096, dt);
}
IRON_BENCH(iron_log_softmax, rows16384_n4096, F32, F16, BF16) {
  return log_softmax_bench(16384, 4096, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
