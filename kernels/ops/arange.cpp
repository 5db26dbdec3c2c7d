/// iron_arange: out[i] = start + i * step, computed in f32 and rounded once to T.
///
/// ## Layout
/// - `out [n]` T
///
/// ## Dispatch
/// Elementwise: `ceil(n / tpg)` groups of `tpg` threads; threads past `n` do nothing.
#include <iron/iron.hpp>
#include <iron/testing/bench_registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_arange,
            (Out<T> out, Constexpr<f32> start, Constexpr<f32> step, Constexpr<u32> n)) {
  auto i = program_id<0>();
  IRON_IF(i < n) { store(out[i], cast<T>(start + cast<f32>(i) * step)); }
}

namespace {

testing::TestSetup arange_setup(std::size_t n, float start, float step, DType dt) {
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) {
    want[i] = static_cast<float>(double{start} + static_cast<double>(i) * step);
  }
  return testing::TestSetup("iron_arange", dt)
      .output("out", n)
      .constant("start", start)
      .constant("step", step)
      .constant("n", static_cast<double>(n))
      .expect("out", testing::round_through(want, dt))
      .grid_1d(n, 128);
}

}  // namespace

IRON_BENCH(iron_arange, n64m, F32, BF16) {
  const std::size_t n = std::size_t{1} << 26;
  return testing::BenchSetup("iron_arange", dt)
      .output("out", n)
      .constant("start", 0.0)
      .constant("step", 1.0)
      .constant("n", static_cast<double>(n))
      .grid_1d(n, 256)
      .bytes_moved(n * dtype_size(dt))
      .peer("arange", {{"n", static_cast<double>(n)}});
}

IRON_TEST(iron_arange, basic, F32(1e-4, 1e-6), F16(1e-3, 1e-3), BF16(1e-2, 8e-3)) {
  return arange_setup(5000, -3.0f, 0.25f, dt);
}

// A negative fractional step from a large start, and a length that is not a multiple of 128.
IRON_TEST(iron_arange, negative_step, F32(1e-3, 1e-6), F16(1e-3, 1e-3), BF16(1e-2, 8e-3)) {
  return arange_setup(129, 1000.0f, -7.75f, dt);
}

}  // namespace iron::kernels
