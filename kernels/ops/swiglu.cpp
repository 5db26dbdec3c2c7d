/// iron_swiglu: out[i] = silu(a[i]) * b[i], the gated activation of a SwiGLU feed-forward layer.
///
/// Fused so the gate a and the value b are read once and only the product is written (one pass
/// instead of silu's write and re-read). silu(x) = x / (1 + e^-x) in f32
/// (kernels/primitives/activation.hpp), on the approximate ops exp2.approx and recip.approx for
/// f16 and bf16; the product is rounded once to T.
///
/// ## Error bound
/// Before the rounding to T (2^-11 f16, 2^-8 bf16), with u = 2^-24:
/// - f32: relative γ_7: exp errs by 2 ulp (4u), which 1 + e^-a passes on at most in full, plus
///   the sum, the division and the product by b (one rounding each). Where e^-a overflows
///   (a < −88.7) out is −0 and the exact value is below 89·e^-88.7·|b| < 3.2e-37·|b|.
/// - f16/bf16: relative (2A + 11)·u, A the largest |a| (at most 89): −a·log2 e errs by 2u, which
///   the power turns into 2|a|·u, then ex2.approx (5u), the sum, recip.approx (3u) and the two
///   products. Where 1 + e^-a passes 2^126 (a < −87.3) the reciprocal flushes to 0 and out is
///   −0, within 89·2^-126·|b| < 1.1e-36·|b| of the exact value.
///
/// ## Layout
/// - `a [n]`   T (the gate)
/// - `b [n]`   T (the value)
/// - `out [n]` T
///
/// ## Dispatch
/// Elementwise, grid-stride: any grid; thread t handles i = t, t + T, … (T = threads in the
/// grid). The vectorizer turns the loop into 16-byte accesses when n allows.
#include <algorithm>
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
    store(out[i], cast<T>(silu<T>(cast<f32>(load(a[i]))) * cast<f32>(load(b[i]))));
  }
}

// One 16-byte access of a and of b per thread in groups of 256: each thread's loop runs once
// when n fills whole vectors.
IRON_GEOMETRY(iron_swiglu) {
  return Geometry::elementwise(vector_count(q.constant("n"), q.dtype), q.threads_per_group(256));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
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

/// The tolerance of the doc comment's bound on gates `a` and values `b`.
testing::Tolerance swiglu_tolerance(const std::vector<float>& a, const std::vector<float>& b,
                                    DType dt) {
  namespace tol = testing::tolerance;
  if (dt == DType::F32) return tol::stored(dt, 3.2e-37 * tol::max_abs(b), tol::gamma(7));
  const double largest = std::min(tol::max_abs(a), 89.0);  // f16, bf16: the approximate ops
  return tol::stored(dt, 1.1e-36 * tol::max_abs(b),
                     tol::gamma(2 * static_cast<std::size_t>(std::ceil(largest)) + 11));
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
      .tolerance(swiglu_tolerance(a, b, dt))
      .grid({{groups}, {tpg}});
}

bench::BenchSetup swiglu_bench(std::size_t n, DType dt) {
  const std::size_t bytes = n * dtype_size(dt);
  bench::BenchSetup setup("iron_swiglu", dt);
  setup.random("a", n, -4.0f, 4.0f)
      .random("b", n)
      .output("out", n)
      .constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(3 * bytes)
      .peer("swiglu", {{"n", static_cast<double>(n)}});
}

}  // namespace

// Tolerances: silu in f32 is within about 4 ulp and the product adds half an ulp (6e-7
// relative); in f16 and bf16 the approximate silu adds 2|a| + 11 f32 roundings (1.1e-5 at
// |a| = 89); rounding to T adds half an ulp of T: 2^-11 (4.88e-4) in f16, 2^-8 (3.906e-3) in
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
