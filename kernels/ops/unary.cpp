/// iron_exp, iron_silu, iron_gelu_tanh, iron_gelu_erf, iron_relu: out[i] = f(inp[i]).
///
/// - exp: e^x (overflows to inf past x ≈ 88.7 in f32, 11.09 in f16).
/// - silu: x * sigmoid(x).
/// - gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh approximation.
/// - gelu_erf: 0.5 x (1 + erf(x / sqrt 2)), the exact gelu.
/// - relu: max(x, 0).
///
/// The value is widened to f32, f is computed in f32 (kernels/primitives/activation.hpp) and the
/// result is rounded once to T.
///
/// ## Error bound
/// Before the rounding to T (2^-11 f16, 2^-8 bf16 relative), with u = 2^-24:
/// - exp: 2 ulp, γ_4 relative.
/// - silu: γ_6 relative (exp's 4u, which 1 + e^-x passes on at most in full, the sum and the
///   division); where e^-x overflows (x < −88.7) out is −0 and |x·sigmoid(x)| < 3.2e-37.
/// - gelu_tanh: z = 2·sqrt(2/pi)·(x + 0.044715·x³) errs by γ_6 relative (two constants, three
///   roundings, no cancellation), which exp(−z) turns into |z|·γ_6: relative γ_{6·Z + 6} with Z the
///   largest |z| (capped at 89, past which e^-z overflows and out is −0, within 3.2e-37).
/// - gelu_erf: 1 + erf(x/sqrt 2) cancels for x < 0: erf's 2 ulp (4u) plus its argument's γ_2
///   give |err| ≤ |x|/2 · γ_7 absolute there, and γ_9 relative for x ≥ 0.
/// - relu: exact.
///
/// ## Layout
/// - `inp [n]` T
/// - `out [n]` T
///
/// ## Dispatch
/// Elementwise, grid-stride: any grid; thread t handles i = t, t + T, … (T = threads in the
/// grid). The vectorizer turns the loop into 16-byte accesses when n allows.
#include <algorithm>
#include <cmath>
#include <iron/iron.hpp>
#include <numbers>
#include <string_view>

#include "../primitives/activation.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {

/// The grid-stride loop: out[i] = f(inp[i]) in f32, rounded once to T.
template <class T, class F>
void unary_loop(const Tensor<T>& inp, const Out<T>& out, const Expr<u32>& n, F f) {
  dispatch(elementwise);
  grid("[<= ceil_div(n, tpg), 1, 1]");
  layout(inp, "[n]");
  layout(out, "[n]");
  for (auto i : range(global_id<0>(), n, grid_threads<0>())) {
    store(out[i], cast<T>(f(cast<f32>(load(inp[i])))));
  }
}

}  // namespace

IRON_KERNEL(iron_exp, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  unary_loop(inp, out, n, [](const Expr<f32>& x) { return exp(x); });
}
IRON_KERNEL(iron_silu, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  unary_loop(inp, out, n, silu);
}
IRON_KERNEL(iron_gelu_tanh, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  unary_loop(inp, out, n, gelu_tanh);
}
IRON_KERNEL(iron_gelu_erf, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  unary_loop(inp, out, n, gelu_erf);
}
IRON_KERNEL(iron_relu, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  unary_loop(inp, out, n, [](const Expr<f32>& x) { return max(x, 0.0f); });
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

#include "elementwise_oracle.hpp"

namespace iron::kernels {

namespace {

/// The definitions, in double.
double exp_exact(double x) { return std::exp(x); }
double silu_exact(double x) { return x / (1.0 + std::exp(-x)); }
double gelu_tanh_exact(double x) {
  const double sqrt_two_over_pi = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(sqrt_two_over_pi * (x + 0.044715 * x * x * x)));
}
/// 0.5 (1 + erf(z)) written as 0.5 erfc(-z): the same value without the cancellation of
/// 1 + erf(z) for negative z, so the oracle keeps its digits where x Φ(x) is tiny.
double gelu_erf_exact(double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double relu_exact(double x) { return std::max(x, 0.0); }

using Exact = double (*)(double);

/// The tolerance of the doc comment's bound for `kernel` on inputs `x`.
testing::Tolerance unary_tolerance(std::string_view kernel, const std::vector<float>& x, DType dt) {
  namespace tol = testing::tolerance;
  if (kernel == "iron_relu") return tol::exact();
  if (kernel == "iron_exp") return tol::relative(dt, tol::kExpU);
  if (kernel == "iron_silu") return tol::stored(dt, 3.2e-37, tol::gamma(tol::kExpU + 2));
  if (kernel == "iron_gelu_tanh") {
    double z = 0.0;
    for (const float v : x)
      z = std::max(z, std::fabs(1.5957691216057308 * (v + 0.044715 * v * v * v)));
    // The oracle in double cancels 1 + tanh(u) for x < 0: |x|/2 · 2^-53 of its own error.
    const double oracle = tol::max_abs(x) * 0x1p-54;
    return tol::stored(dt, 3.2e-37 + oracle,
                       tol::gamma(6 * static_cast<std::size_t>(std::ceil(std::min(z, 89.0))) + 6));
  }
  double most_negative = 0.0;  // gelu_erf
  for (const float v : x) most_negative = std::max(most_negative, -double{v});
  return tol::stored(dt, most_negative / 2 * tol::gamma(tol::kErfU + 3),
                     tol::gamma(tol::kErfU + 5));
}

testing::TestSetup unary_setup(const char* kernel, Exact f, std::size_t n, float lo, float hi,
                               std::uint32_t groups, std::uint32_t tpg, DType dt,
                               testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(n, lo, hi), dt);
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<float>(f(x[i]));
  return testing::TestSetup(kernel, dt)
      .input("inp", x)
      .output("out", n)
      .constant("n", static_cast<double>(n))
      .expect("out", overflowing_as(std::move(want), dt))
      .tolerance(unary_tolerance(kernel, x, dt))
      .grid({{groups}, {tpg}});
}

/// n64k: the representative case, 1 << 16 values in [lo, hi) on 64 groups of 256.
testing::TestSetup representative(const char* kernel, Exact f, float lo, float hi, DType dt,
                                  testing::Rng& rng) {
  return unary_setup(kernel, f, 1 << 16, lo, hi, 64, 256, dt, rng);
}

/// n = 1001 (odd: no vector loop) values in [lo, hi) on 3 x 128 threads (three trips).
testing::TestSetup ragged(const char* kernel, Exact f, float lo, float hi, DType dt,
                          testing::Rng& rng) {
  return unary_setup(kernel, f, 1001, lo, hi, 3, 128, dt, rng);
}

bench::BenchSetup unary_bench(const char* kernel, const char* peer, std::size_t n, DType dt) {
  const std::size_t bytes = n * dtype_size(dt);
  return bench::BenchSetup(kernel, dt)
      .random("inp", n, -4.0f, 4.0f)
      .output("out", n)
      .constant("n", static_cast<double>(n))
      .grid_1d(bytes / 16, 256)
      .bytes_moved(2 * bytes)
      .peer(peer, {{"n", static_cast<double>(n)}});
}

}  // namespace

// Tolerances: rounding to T costs half an ulp, 2^-11 (4.88e-4) relative in f16 and 2^-8
// (3.906e-3) in bf16, below 6.1e-5 an absolute 3e-8 in f16. On top of it the f32 evaluation:
// expf is within 2 ulp on CUDA (3e-7 relative); silu adds a division (5e-7).

IRON_TEST(iron_exp, n64k, F32, F16, BF16) {
  return representative("iron_exp", exp_exact, -10.0f, 10.0f, dt, rng);
}
// Past 88.7 (f32, bf16) or 11.09 (f16) e^x overflows to inf, as the oracle does; below -103
// it underflows to 0 through the subnormals.
IRON_TEST(iron_exp, overflow_and_underflow, F32, F16, BF16) {
  return ragged("iron_exp", exp_exact, -110.0f, 100.0f, dt, rng);
}

IRON_TEST(iron_silu, n64k, F32, F16, BF16) {
  return representative("iron_silu", silu_exact, -8.0f, 8.0f, dt, rng);
}
// e^-x overflows for x < -88.7: x / inf gives -0 where x sigmoid(x) is below 1e-36.
IRON_TEST(iron_silu, large_magnitude, F32, F16, BF16) {
  return ragged("iron_silu", silu_exact, -200.0f, 200.0f, dt, rng);
}

// gelu_tanh is x sigmoid(2u): an f32 error of a few ulp in u changes sigmoid(2u) by up to
// |2u| times as much relatively where it is small (x < 0), up to 1e-5 for x ≥ -8. The oracle
// in double cancels 1 + tanh(u) to 0 once x sigmoid(2u) is below 1e-15: hence an atol.
IRON_TEST(iron_gelu_tanh, n64k, F32, F16, BF16) {
  return representative("iron_gelu_tanh", gelu_tanh_exact, -8.0f, 8.0f, dt, rng);
}
// x^3 reaches 2.7e13: sigmoid(2u) saturates to exactly 0 or 1 and gelu to -0 or x.
IRON_TEST(iron_gelu_tanh, large_magnitude, F32, F16, BF16) {
  return ragged("iron_gelu_tanh", gelu_tanh_exact, -3e4f, 3e4f, dt, rng);
}

// gelu_erf computes 1 + erf(x / sqrt 2) in f32, which for x < 0 cancels: an absolute error of
// about |x| / 2 * 3e-7, at most 1e-6 while erf has not saturated to -1 (|x| < 5.5), and x Φ(x)
// itself below 1e-7 beyond.
IRON_TEST(iron_gelu_erf, n64k, F32, F16, BF16) {
  return representative("iron_gelu_erf", gelu_erf_exact, -8.0f, 8.0f, dt, rng);
}
IRON_TEST(iron_gelu_erf, large_magnitude, F32, F16, BF16) {
  return ragged("iron_gelu_erf", gelu_erf_exact, -3e4f, 3e4f, dt, rng);
}

// relu is exact in every dtype.
IRON_TEST(iron_relu, n64k, F32, F16, BF16) {
  return representative("iron_relu", relu_exact, -8.0f, 8.0f, dt, rng);
}
IRON_TEST(iron_relu, ragged_tail, F32, F16, BF16) {
  return ragged("iron_relu", relu_exact, -8.0f, 8.0f, dt, rng);
}
// More threads than elements: one thread writes the only element, the rest never loop.
IRON_TEST(iron_relu, single_element, F32, F16, BF16) {
  return unary_setup("iron_relu", relu_exact, 1, -8.0f, 8.0f, 1, 32, dt, rng);
}

IRON_BENCH(iron_exp, n64m, F32, F16, BF16) {
  return unary_bench("iron_exp", "exp", std::size_t{1} << 26, dt);
}
IRON_BENCH(iron_silu, n64m, F32, F16, BF16) {
  return unary_bench("iron_silu", "silu", std::size_t{1} << 26, dt);
}
IRON_BENCH(iron_gelu_tanh, n64m, F32, F16, BF16) {
  return unary_bench("iron_gelu_tanh", "gelu_tanh", std::size_t{1} << 26, dt);
}
IRON_BENCH(iron_gelu_erf, n64m, F32, F16, BF16) {
  return unary_bench("iron_gelu_erf", "gelu_erf", std::size_t{1} << 26, dt);
}
IRON_BENCH(iron_relu, n64m, F32, F16, BF16) {
  return unary_bench("iron_relu", "relu", std::size_t{1} << 26, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
