/// iron_swiglu: out[i] = silu(a[i]) * b[i], the gated activation of a SwiGLU feed-forward layer.
///
/// Fused so the gate a and the value b are read once and only the product is written (one pass
/// instead of silu's write and re-read). silu(x) = x / (1 + e^-x) in f32
/// (kernels/primitives/activation.hpp); the product is rounded once to T.
///
/// ## Error bound
/// Relative γ_7 (u = 2^-24): exp errs by 2 ulp (4u), which 1 + e^-a passes on at most in full,
/// plus the sum, the division and the product by b (one rounding each); then the rounding to T
/// (2^-11 f16, 2^-8 bf16). Where e^-a overflows (a < −88.7) out is −0 and the exact value is
/// below 89·e^-88.7·|b| < 3.2e-37·|b|.
///
/// ## Layout
/// - `a [n]`   T (the gate)
/// - `b [n]`   T (the value)
/// - `out [n]` T
///
/// ## Dispatch
/// Elementwise, grid-stride: any grid; thread t handles i = t, t + T, … (T = threads in the
/// grid). The vectorizer turns the loop into 16-byte accesses when n allows.
#include <cmath>
#include <iron/iron.hpp>

#include "../primitives/activation.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_swiglu, (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> n)) {
  dispatch(elementwise);
  grid("[<= ceil_div(n, tpg), 1, 1]");
  layout(a, "[n]");
  layout(b, "[n]");
  layout(out, "[n]");
  for (auto i : range(global_id<0>(), n, grid_threads<0>())) {
    store(out[i], cast<T>(silu(cast<f32>(load(a[i]))) * cast<f32>(load(b[i]))));
  }
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

#include "elementwise_oracle.hpp"

namespace iron::kernels {

namespace {

/// The definition, in double: a sigmoid(a) b.
std::vector<float> swiglu_oracle(const std::vector<float>& a, const std::vector<float>& b,
                                 DType dt) {
  std::vector<float> y(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a[i];
    y[i] = static_cast<float>(x / (1.0 + std::exp(-x)) * b[i]);
  }
  return overflowing_as(std::move(y), dt);
}

testing::TestSetup swiglu_setup(std::size_t n, float a_spread, float b_spread, std::uint32_t groups,
                                std::uint32_t tpg, DType dt, testing::Rng& rng) {
  const auto a = testing::round_through(rng.uniform(n, -a_spread, a_spread), dt);
  const auto b = testing::round_through(rng.uniform(n, -b_spread, b_spread), dt);
  return testing::TestSetup("iron_swiglu", dt)
      .input("a", a)
      .input("b", b)
      .output("out", n)
      .constant("n", static_cast<double>(n))
      .expect("out", swiglu_oracle(a, b, dt))
      .tolerance(testing::tolerance::stored(dt, 3.2e-37 * testing::tolerance::max_abs(b),
                                            testing::tolerance::gamma(7)))
      .grid({{groups}, {tpg}});
}

bench::BenchSetup swiglu_bench(std::size_t n, DType dt) {
  const std::size_t bytes = n * dtype_size(dt);
  return bench::BenchSetup("iron_swiglu", dt)
      .random("a", n, -4.0f, 4.0f)
      .random("b", n)
      .output("out", n)
      .constant("n", static_cast<double>(n))
      .grid_1d(bytes / 16, 256)
      .bytes_moved(3 * bytes)
      .peer("swiglu", {{"n", static_cast<double>(n)}});
}

}  // namespace

// Tolerances: silu in f32 is within about 4 ulp and the product adds half an ulp (6e-7
// relative); rounding to T adds half an ulp of T: 2^-11 (4.88e-4) in f16, 2^-8 (3.906e-3) in
// bf16, and an absolute 3e-8 for f16 subnormals.
IRON_TEST(iron_swiglu, n64k, F32, F16, BF16) {
  return swiglu_setup(1 << 16, 8.0f, 8.0f, 64, 256, dt, rng);
}
// n = 1001 is odd (no vector loop) on 3 x 128 threads. Gates to ±200: e^-a overflows and the
// gate is -0 for a < -88.7; products to 2e4 stay finite in f16.
IRON_TEST(iron_swiglu, large_magnitude_ragged, F32, F16, BF16) {
  return swiglu_setup(1001, 200.0f, 100.0f, 3, 128, dt, rng);
}
// More threads than elements: one thread writes the only element, the rest never loop.
IRON_TEST(iron_swiglu, single_element, F32, F16, BF16) {
  return swiglu_setup(1, 8.0f, 8.0f, 1, 32, dt, rng);
}

IRON_BENCH(iron_swiglu, n64m, F32, F16, BF16) { return swiglu_bench(std::size_t{1} << 26, dt); }

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
