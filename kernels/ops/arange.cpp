/// iron_arange: out[i] = start + i * step, computed in f32 and rounded once to T.
///
/// ## Error bound
/// |err| ≤ u·|i·step| + u·|out| with u = 2^-24 (i is exact in f32 below 2^24; the product and the
/// sum each round once), then the rounding to T: 2^-11 (f16) or 2^-8 (bf16) relative.
///
/// ## Layout
/// - `out [n]` T
///
/// ## Dispatch
/// Elementwise: `ceil(n / tpg)` groups of `tpg` threads; threads past `n` do nothing.
#include <cmath>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_arange,
            (Out<T> out, Constexpr<f32> start, Constexpr<f32> step, Constexpr<u32> n)) {
  dispatch(elementwise);
  grid("[ceil_div(n, tpg), 1, 1]");
  layout(out, "[n]");
  auto i = program_id<0>();
  IRON_IF(i < n) { store(out[i], cast<T>(start + cast<f32>(i) * step)); }
}

// One thread per element in groups of 256.
IRON_GEOMETRY(iron_arange) {
  return Geometry::elementwise(q.constant("n"), q.threads_per_group(256));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

testing::TestSetup arange_setup(std::size_t n, float start, float step, DType dt) {
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) {
    want[i] = static_cast<float>(double{start} + static_cast<double>(i) * step);
  }
  namespace tol = testing::tolerance;
  // The oracle's values are rounded to T as well: one more rounding to T (none in f32).
  const double oracle_u = dt == DType::F32 ? 0.0 : tol::unit_roundoff(dt);
  const double oracle_eta = dt == DType::F32 ? 0.0 : tol::underflow(dt);
  const double largest_product = std::fabs(double{step}) * static_cast<double>(n - 1);
  testing::TestSetup setup("iron_arange", dt);
  setup.output("out", n)
      .constant("start", start)
      .constant("step", step)
      .constant("n", static_cast<double>(n))
      .expect("out", testing::round_through(want, dt))
      .tolerance(
          tol::stored(dt, tol::gamma(1) * largest_product + oracle_eta, tol::gamma(1) + oracle_u));
  return setup.grid(testing::geometry_grid(setup));
}

}  // namespace

IRON_BENCH(iron_arange, n64m, F32, BF16) {
  const std::size_t n = std::size_t{1} << 26;
  bench::BenchSetup setup("iron_arange", dt);
  setup.output("out", n)
      .constant("start", 0.0)
      .constant("step", 1.0)
      .constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(n * dtype_size(dt))
      .peer("arange", {{"n", static_cast<double>(n)}});
}

IRON_TEST(iron_arange, basic, F32, F16, BF16) { return arange_setup(5000, -3.0f, 0.25f, dt); }

// A negative fractional step from a large start, and a length that is not a multiple of 128.
IRON_TEST(iron_arange, negative_step, F32, F16, BF16) {
  return arange_setup(129, 1000.0f, -7.75f, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
