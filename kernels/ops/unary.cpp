/// iron_exp, iron_silu, iron_gelu_tanh, iron_gelu_erf, iron_relu: out[i] = f(inp[i]).
///
/// - exp: e^x (overflows to inf past x ≈ 88.7 in f32, 11.09 in f16).
/// - silu: x * sigmoid(x).
/// - gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh approximation.
/// - gelu_erf: 0.5 x (1 + erf(x / sqrt 2)), the exact gelu.
/// - relu: max(x, 0).
///
/// The value is widened to f32, f is computed in f32 (kernels/primitives/activation.hpp) and the
/// result is rounded once to T. For f16 and bf16, silu and both gelus use the approximate ops
/// exp2.approx (2.5 ulp, 5u) and recip.approx (1.5 ulp, 3u), and gelu_erf a fitted Φ; f32 keeps
/// the accurate ops.
///
/// ## Error bound
/// Before the rounding to T (2^-11 f16, 2^-8 bf16 relative), with u = 2^-24:
/// - exp: 2 ulp, γ_4 relative.
/// - silu, f32: γ_6 relative (exp's 4u, which 1 + e^-x passes on at most in full, the sum and the
///   division); where e^-x overflows (x < −88.7) out is −0 and |x·sigmoid(x)| < 3.2e-37.
/// - silu, f16/bf16: (2X + 10)·u relative, X the largest |x| (at most 89): −x·log2 e errs by 2u,
///   which 2^(−x·log2 e) turns into 2|x|·u, then ex2.approx, the sum, recip.approx and the
///   product. Where 1 + e^-x passes 2^126 (x < −87.3) the reciprocal flushes to 0 and out is
///   −0, within 89·2^-126 < 1.1e-36 of the exact value.
/// - gelu_tanh: z = 2·sqrt(2/pi)·(x + 0.044715·x³) errs by γ_6 relative (two constants, three
///   roundings, no cancellation), which exp(−z) turns into |z|·γ_6: relative γ_{6·Z + 6} with Z
///   the largest |z| (capped at 89, past which e^-z overflows and out is −0, within 3.2e-37).
///   f16/bf16: x² is exact, so z·log2 e errs by 5u (two constants, three roundings) and the
///   bound is (5Z + 10)·u with ex2.approx, recip.approx and the sum; past 87.3 the reciprocal
///   flushes and out is −0, within 1.1e-36.
/// - gelu_erf, f32: 1 + erf(x/sqrt 2) cancels for x < 0: erf's 2 ulp (4u) plus its argument's γ_2
///   give |err| ≤ |x|/2 · γ_7 absolute there, and γ_9 relative for x ≥ 0.
/// - gelu_erf, f16/bf16: 7.8e-6 + (1.1·min(x², 180) + 26)·u relative, for every sign of x (no
///   cancellation), and 2^-124 absolute: the fit of Φ(−|x|) errs by 7.8e-6 (activation.hpp);
///   the power's argument −x²·log2(e)/2 + P(t) errs by (1.44·x² + 3)·u in log2 (x² exact, the
///   constant, the fma), 1.04·x²·u + 2u relative; t's 5u (fma, recip.approx) passes through
///   t·2^P(t) at most 2.3 times; ex2.approx 5u; t times the power, 1 − q (q ≤ 1/2 keeps its
///   relative error) and x·Φ one rounding each. Past |x| = 13.2 the power flushes to 0: out is
///   −0 or x, within |x|·t·2^-126 < 2^-124 of the exact value.
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

/// One 16-byte access per thread in groups of 256: each thread's loop runs once when n fills
/// whole vectors.
Geometry unary_geometry(const GeometryQuery& q) {
  return Geometry::elementwise(vector_count(q.constant("n"), q.dtype), q.threads_per_group(256));
}

}  // namespace

IRON_KERNEL(iron_exp, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  unary_loop(inp, out, n, [](const Expr<f32>& x) { return exp(x); });
}
IRON_KERNEL(iron_silu, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  unary_loop(inp, out, n, silu<T>);
}
IRON_KERNEL(iron_gelu_tanh, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  unary_loop(inp, out, n, gelu_tanh<T>);
}
IRON_KERNEL(iron_gelu_erf, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  unary_loop(inp, out, n, gelu_erf<T>);
}
IRON_KERNEL(iron_relu, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  unary_loop(inp, out, n, [](const Expr<f32>& x) { return max(x, 0.0f); });
}

IRON_GEOMETRY(iron_exp) { return unary_geometry(q); }
IRON_GEOMETRY(iron_silu) { return unary_geometry(q); }
IRON_GEOMETRY(iron_gelu_tanh) { return unary_geometry(q); }
IRON_GEOMETRY(iron_gelu_erf) { return unary_geometry(q); }
IRON_GEOMETRY(iron_relu) { return unary_geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/core/half.hpp>
#include <iron/testing/registry.hpp>
#include <limits>

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

/// The largest |v| over the finite values of x (an edge case holds an infinity).
double largest_finite(const std::vector<float>& x) {
  double largest = 0.0;
  for (const float v : x) {
    if (std::isfinite(v)) largest = std::max(largest, std::fabs(double{v}));
  }
  return largest;
}

/// ⌈v⌉, for a count of roundings.
std::size_t roundings(double v) { return static_cast<std::size_t>(std::ceil(v)); }

/// The tolerance of the doc comment's bound for `kernel` on inputs `x`.
testing::Tolerance unary_tolerance(std::string_view kernel, const std::vector<float>& x, DType dt) {
  namespace tol = testing::tolerance;
  const bool approximate = dt != DType::F32;  // f16 and bf16 use exp2.approx and recip.approx
  const double largest = largest_finite(x);
  if (kernel == "iron_relu") return tol::exact();
  if (kernel == "iron_exp") return tol::relative(dt, tol::kExpU);
  if (kernel == "iron_silu") {
    if (!approximate) return tol::stored(dt, 3.2e-37, tol::gamma(tol::kExpU + 2));
    return tol::stored(dt, 1.1e-36, tol::gamma(2 * roundings(std::min(largest, 89.0)) + 10));
  }
  if (kernel == "iron_gelu_tanh") {
    double z = 0.0;
    for (const float v : x) {
      if (std::isfinite(v))
        z = std::max(z, std::fabs(1.5957691216057308 * (v + 0.044715 * v * v * v)));
    }
    const std::size_t z_roundings = roundings(std::min(z, 89.0));
    // The oracle in double cancels 1 + tanh(u) for x < 0: |x|/2 · 2^-53 of its own error.
    const double oracle = largest * 0x1p-54;
    if (!approximate) return tol::stored(dt, 3.2e-37 + oracle, tol::gamma(6 * z_roundings + 6));
    return tol::stored(dt, 1.1e-36 + oracle, tol::gamma(5 * z_roundings + 10));
  }
  if (approximate) {  // gelu_erf
    return tol::stored(
        dt, 0x1p-124,
        7.8e-6 + tol::gamma(roundings(1.1 * std::min(largest * largest, 180.0)) + 26));
  }
  double most_negative = 0.0;
  for (const float v : x) {
    if (std::isfinite(v)) most_negative = std::max(most_negative, -double{v});
  }
  return tol::stored(dt, most_negative / 2 * tol::gamma(tol::kErfU + 3),
                     tol::gamma(tol::kErfU + 5));
}

/// out = f(x) on `groups` groups of `tpg` threads.
testing::TestSetup unary_case(const char* kernel, Exact f, const std::vector<float>& x,
                              std::uint32_t groups, std::uint32_t tpg, DType dt) {
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = static_cast<float>(f(x[i]));
  return testing::TestSetup(kernel, dt)
      .input("inp", x)
      .output("out", x.size())
      .constant("n", static_cast<double>(x.size()))
      .expect("out", overflowing_as(std::move(want), dt))
      .tolerance(unary_tolerance(kernel, x, dt))
      .grid({{groups}, {tpg}});
}

testing::TestSetup unary_setup(const char* kernel, Exact f, std::size_t n, float lo, float hi,
                               std::uint32_t groups, std::uint32_t tpg, DType dt,
                               testing::Rng& rng) {
  return unary_case(kernel, f, testing::round_through(rng.uniform(n, lo, hi), dt), groups, tpg, dt);
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

/// The edge inputs: zeros, T's smallest subnormal, values around where the exponentials overflow
/// or the approximate ops flush (13.2, 87.3, 88.7), T's largest finite value and +inf. −inf gives
/// NaN (−inf · 0), as the definition does, and a NaN never passes a comparison: it is left out.
std::vector<float> edge_inputs(DType dt) {
  float tiny = std::numeric_limits<float>::denorm_min();
  float largest = std::numeric_limits<float>::max();
  if (dt == DType::F16) {
    tiny = f16_bits_to_f32(0x0001);
    largest = f16_bits_to_f32(0x7BFF);
  } else if (dt == DType::BF16) {
    tiny = bf16_bits_to_f32(0x0001);
    largest = bf16_bits_to_f32(0x7F7F);
  }
  return testing::round_through(
      {0.0f,  -0.0f,  tiny,   -tiny,   1e-3f,   -1e-3f,   1.0f,
       -1.0f, 5.0f,   -5.0f,  13.25f,  -13.25f, 87.5f,    -87.5f,
       88.5f, -88.5f, 100.0f, -100.0f, largest, -largest, std::numeric_limits<float>::infinity()},
      dt);
}

/// The edge inputs on one group of 32 threads.
testing::TestSetup edges(const char* kernel, Exact f, DType dt) {
  return unary_case(kernel, f, edge_inputs(dt), 1, 32, dt);
}

bench::BenchSetup unary_bench(const char* kernel, const char* peer, std::size_t n, DType dt) {
  const std::size_t bytes = n * dtype_size(dt);
  bench::BenchSetup setup(kernel, dt);
  setup.random("inp", n, -4.0f, 4.0f).output("out", n).constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * bytes)
      .peer(peer, {{"n", static_cast<double>(n)}});
}

}  // namespace

// Tolerances: rounding to T costs half an ulp, 2^-11 (4.88e-4) relative in f16 and 2^-8
// (3.906e-3) in bf16, below 6.1e-5 an absolute 3e-8 in f16. On top of it the f32 evaluation:
// expf is within 2 ulp on CUDA (3e-7 relative); silu adds a division (5e-7). In f16 and bf16
// silu and the gelus run on the approximate ops, up to 1.1e-5 relative for |x| ≥ 13.

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
// Zeros, subnormals, the flush and overflow points, T's extremes and +inf (see edge_inputs).
IRON_TEST(iron_silu, edges, F32, F16, BF16) { return edges("iron_silu", silu_exact, dt); }

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
IRON_TEST(iron_gelu_tanh, edges, F32, F16, BF16) {
  return edges("iron_gelu_tanh", gelu_tanh_exact, dt);
}

// In f32 gelu_erf computes 1 + erf(x / sqrt 2), which for x < 0 cancels: an absolute error of
// about |x| / 2 * 3e-7, at most 1e-6 while erf has not saturated to -1 (|x| < 5.5), and x Φ(x)
// itself below 1e-7 beyond. In f16 and bf16 it computes Φ(-|x|) without the cancellation, within
// 1.4e-5 relative for |x| ≤ 8 (x Φ(x) down to 5e-15, which bf16 holds).
IRON_TEST(iron_gelu_erf, n64k, F32, F16, BF16) {
  return representative("iron_gelu_erf", gelu_erf_exact, -8.0f, 8.0f, dt, rng);
}
IRON_TEST(iron_gelu_erf, large_magnitude, F32, F16, BF16) {
  return ragged("iron_gelu_erf", gelu_erf_exact, -3e4f, 3e4f, dt, rng);
}
IRON_TEST(iron_gelu_erf, edges, F32, F16, BF16) {
  return edges("iron_gelu_erf", gelu_erf_exact, dt);
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
