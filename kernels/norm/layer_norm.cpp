/// iron_layer_norm: out[r, j] = (x[r, j] - mean_r) / sqrt(var_r + eps) * weight[j];
/// iron_layer_norm_bias: the same plus bias[j].
///
/// mean_r and var_r (the biased variance, as in torch.nn.functional.layer_norm) are computed in
/// f32 whatever T is, in two passes (mean, then the variance of the centred row: see
/// kernels/primitives/mean_var.hpp), so rows with a large mean keep their precision. The result
/// is rounded once to T.
///
/// ## Error bound
/// Absolute, per row, then the final rounding (u relative in f32; 2^-11 f16, 2^-8 bf16), with
/// u = 2^-24, d = L·⌈⌈n/L⌉/tpg⌉ + tpg − 2 (at most n − 1; L the elements of a 16-byte vector)
/// the addition depth of a row sum, μ the row's
/// mean and D = max_k |x_k − μ|: the first-pass mean errs by E_μ = γ_{d+1}·mean|x|; the centred
/// values a_k = x_k − mean then have mean|a| ≤ A = mean|x − μ| + E_μ and mean a² ≤ M; the
/// correction errs by γ_{d+2}·A; the variance by E_v = γ_{d+5}·M + 2γ_{d+2}·A², so var + eps by
/// the relative ε = (E_v + u·(σ² + eps + E_v)) / (σ² + eps), and rstd = rsqrt(σ² + eps) by
/// ρ = ε / (2(1 − ε)) + 4u (rsqrt: 2 ulp). The output errs by at most
/// max|w| · [rstd·(1 + ρ)·(2u·D + u·E_μ + γ_{d+2}·A) + D·rstd·(ρ + u)].
///
/// ## Layout
/// - `inp    [rows, n]` T
/// - `weight [n]`       T
/// - `bias   [n]`       T (iron_layer_norm_bias only)
/// - `out    [rows, n]` T
///
/// ## Dispatch
/// Reduction: one group per row (`rows` groups), `tpg` threads with tpg a multiple of 32,
/// 32 ≤ tpg ≤ 1024. Any n ≥ 1. A row that fits the group's registers (n a multiple of L,
/// n ≤ 4·L·tpg) is read once (resident_row.hpp); a longer or ragged one three times, each
/// thread striding over it by tpg.
#include <algorithm>
#include <cmath>
#include <iron/iron.hpp>

#include "../primitives/mean_var.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_layer_norm,
            (Tensor<T> inp, Tensor<T> weight, Out<T> out, Constexpr<u32> n, Constexpr<f32> eps)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(weight, "[n]");
  layout(out, "[groups.x, n]");
  auto base = program_id<0>() * n;
  IRON_IF(ResidentRow<T>::fits(n)) {
    ResidentRow<T> resident(inp, base, n);
    auto row = row_moments(resident, n, eps);
    resident.store(out, base,
                   [&](const Expr<u32>& column, const typename ResidentRow<T>::Lanes& x) {
                     const auto w = load_lanes<ResidentRow<T>::kLanes>(weight[column]);
                     typename ResidentRow<T>::Vector y;
                     for (std::size_t e = 0; e < x.size(); ++e) {
                       y[e] = cast<T>(row.normalized(x[e].get()) * cast<f32>(w[e]));
                     }
                     return y;
                   });
  }
  IRON_ELSE {
    auto row = row_moments(inp, base, n, eps);
    for (auto j : range(thread_id<0>(), n, group_size<0>())) {
      auto v = row.normalized(cast<f32>(load(inp[base + j])));
      store(out[base + j], cast<T>(v * cast<f32>(load(weight[j]))));
    }
  }
}

IRON_KERNEL(iron_layer_norm_bias, (Tensor<T> inp, Tensor<T> weight, Tensor<T> bias, Out<T> out,
                                   Constexpr<u32> n, Constexpr<f32> eps)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(weight, "[n]");
  layout(bias, "[n]");
  layout(out, "[groups.x, n]");
  auto base = program_id<0>() * n;
  IRON_IF(ResidentRow<T>::fits(n)) {
    ResidentRow<T> resident(inp, base, n);
    auto row = row_moments(resident, n, eps);
    resident.store(
        out, base, [&](const Expr<u32>& column, const typename ResidentRow<T>::Lanes& x) {
          const auto w = load_lanes<ResidentRow<T>::kLanes>(weight[column]);
          const auto b = load_lanes<ResidentRow<T>::kLanes>(bias[column]);
          typename ResidentRow<T>::Vector y;
          for (std::size_t e = 0; e < x.size(); ++e) {
            y[e] = cast<T>(fma(row.normalized(x[e].get()), cast<f32>(w[e]), cast<f32>(b[e])));
          }
          return y;
        });
  }
  IRON_ELSE {
    auto row = row_moments(inp, base, n, eps);
    for (auto j : range(thread_id<0>(), n, group_size<0>())) {
      auto v = row.normalized(cast<f32>(load(inp[base + j])));
      store(out[base + j], cast<T>(fma(v, cast<f32>(load(weight[j])), cast<f32>(load(bias[j])))));
    }
  }
}

// One group per row, sized to hold the row in registers (resident_row.hpp).
IRON_GEOMETRY(iron_layer_norm) { return resident_row_geometry(q, "inp"); }
IRON_GEOMETRY(iron_layer_norm_bias) { return resident_row_geometry(q, "inp"); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition, in double; `b` empty means no bias.
std::vector<float> layer_norm_oracle(const std::vector<float>& x, const std::vector<float>& w,
                                     const std::vector<float>& b, std::size_t rows, std::size_t n,
                                     float eps) {
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = &x[r * n];
    double mean = 0.0;
    for (std::size_t j = 0; j < n; ++j) mean += row[j];
    mean /= static_cast<double>(n);
    double variance = 0.0;
    for (std::size_t j = 0; j < n; ++j) variance += (row[j] - mean) * (row[j] - mean);
    variance /= static_cast<double>(n);
    const double rstd = 1.0 / std::sqrt(variance + eps);
    for (std::size_t j = 0; j < n; ++j) {
      const double v = (row[j] - mean) * rstd * w[j] + (b.empty() ? 0.0 : double{b[j]});
      y[r * n + j] = static_cast<float>(v);
    }
  }
  return y;
}

/// The absolute error bound of the doc comment for these rows, the largest over the rows.
double layer_norm_error(const std::vector<float>& x, const std::vector<float>& w, std::size_t rows,
                        std::size_t n, std::uint32_t tpg, float eps, DType dt) {
  namespace tol = testing::tolerance;
  const double u = tol::unit_roundoff(DType::F32);
  const std::size_t d = tol::group_sum_depth(n, tpg, tol::lanes_per_vector(dt));
  double most = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = &x[r * n];
    double mu = 0.0;
    double mean_abs = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      mu += row[j];
      mean_abs += std::fabs(double{row[j]});
    }
    mu /= static_cast<double>(n);
    mean_abs /= static_cast<double>(n);
    const double e_mu = tol::gamma(d + 1) * mean_abs;
    double a = 0.0;  // bounds mean |x − computed mean|
    double m = 0.0;  // bounds mean (x − computed mean)²
    double variance = 0.0;
    double dev = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      const double c = std::fabs(row[j] - mu);
      a += c + e_mu;
      m += (c + e_mu) * (c + e_mu);
      variance += c * c;
      dev = std::max(dev, c);
    }
    a /= static_cast<double>(n);
    m /= static_cast<double>(n);
    variance /= static_cast<double>(n);
    const double e_v = tol::gamma(d + 5) * m + 2 * tol::gamma(d + 2) * a * a;
    const double arg = variance + eps;
    const double epsilon = (e_v + u * (arg + e_v)) / arg;
    const double rho = epsilon / (2 * (1 - epsilon)) + static_cast<double>(tol::kRsqrtU) * u;
    const double rstd = 1.0 / std::sqrt(arg);
    const double numerator = 2 * u * dev + u * e_mu + tol::gamma(d + 2) * a;
    most = std::max(most, rstd * (1 + rho) * numerator + dev * rstd * (rho + u));
  }
  return tol::max_abs(w) * most;
}

/// Rows of `mean` ± `spread`, weight in [0.5, 1.5), bias in [-1, 1) when `with_bias`.
testing::TestSetup layer_norm_setup(bool with_bias, std::size_t rows, std::size_t n,
                                    std::uint32_t tpg, float mean, float spread, DType dt,
                                    testing::Rng& rng) {
  const float eps = 1e-5f;
  const auto x = testing::round_through(rng.uniform(rows * n, mean - spread, mean + spread), dt);
  const auto w = testing::round_through(rng.uniform(n, 0.5f, 1.5f), dt);
  const auto b =
      with_bias ? testing::round_through(rng.uniform(n, -1.0f, 1.0f), dt) : std::vector<float>{};
  auto setup = testing::TestSetup(with_bias ? "iron_layer_norm_bias" : "iron_layer_norm", dt);
  setup.input("inp", x).input("weight", w);
  if (with_bias) setup.input("bias", b);
  return setup.output("out", rows * n)
      .constant("n", static_cast<double>(n))
      .constant("eps", eps)
      .expect("out", layer_norm_oracle(x, w, b, rows, n, eps))
      .tolerance(testing::tolerance::stored(dt, layer_norm_error(x, w, rows, n, tpg, eps, dt),
                                            testing::tolerance::gamma(1)))
      .grid_rows(static_cast<std::uint32_t>(rows), tpg);
}

/// The spread around a mean of ±1000 that leaves the row a variance after rounding to `dt`.
float large_mean_spread(DType dt) { return dt == DType::BF16 ? 32.0f : 1.0f; }

bench::BenchSetup layer_norm_bench(bool with_bias, std::size_t rows, std::size_t n, DType dt) {
  const std::size_t row_bytes = rows * n * dtype_size(dt);
  const std::size_t params = (with_bias ? 2 : 1) * n * dtype_size(dt);
  bench::BenchSetup setup(with_bias ? "iron_layer_norm_bias" : "iron_layer_norm", dt);
  setup.random("inp", rows * n).random("weight", n, 0.5f, 1.5f);
  if (with_bias) setup.random("bias", n);
  setup.output("out", rows * n).constant("n", static_cast<double>(n)).constant("eps", 1e-5);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * row_bytes + params)
      .peer("layer_norm", {{"rows", static_cast<double>(rows)},
                           {"n", static_cast<double>(n)},
                           {"eps", 1e-5},
                           {"bias", with_bias ? 1.0 : 0.0}});
}

}  // namespace

IRON_TEST(iron_layer_norm, hidden_4096, F32, F16, BF16) {
  return layer_norm_setup(false, 8, 4096, 256, 0.0f, 2.0f, dt, rng);
}

// A row length that is not a multiple of the group size.
IRON_TEST(iron_layer_norm, ragged_rows, F32, F16, BF16) {
  return layer_norm_setup(false, 3, 999, 64, 0.0f, 2.0f, dt, rng);
}

// A single-element row is its own mean: the output is exactly 0 (eps keeps 1/sqrt finite).
// Rows longer than the group's registers hold (four 16-byte vectors a thread) stream instead.
IRON_TEST(iron_layer_norm, rows_past_the_registers, F32, F16, BF16) {
  return layer_norm_setup(false, 2, 2056, 64, 0.0f, 2.0f, dt, rng);
}

// One vector per row: most threads hold nothing.
IRON_TEST(iron_layer_norm_bias, one_vector_rows, F32, F16, BF16) {
  return layer_norm_setup(true, 3, 8, 64, 0.0f, 2.0f, dt, rng);
}

IRON_TEST(iron_layer_norm, single_element_rows, F32, F16, BF16) {
  return layer_norm_setup(false, 4, 1, 32, 0.0f, 2.0f, dt, rng);
}

// Rows of 1000 ± 1: E[x²] - E[x]² in f32 would lose the variance entirely; the centred second
// pass keeps it. The f32 tolerance covers the mean's own rounding (|mean| · 2^-24 · log n).
// bf16 spaces values 4 apart near 1000, so its rows spread ± 32 to keep a variance.
IRON_TEST(iron_layer_norm, large_mean, F32, F16, BF16) {
  return layer_norm_setup(false, 4, 2048, 1024, 1000.0f, large_mean_spread(dt), dt, rng);
}

IRON_TEST(iron_layer_norm_bias, hidden_4096, F32, F16, BF16) {
  return layer_norm_setup(true, 8, 4096, 256, 0.0f, 2.0f, dt, rng);
}

IRON_TEST(iron_layer_norm_bias, ragged_rows, F32, F16, BF16) {
  return layer_norm_setup(true, 5, 77, 32, 0.0f, 2.0f, dt, rng);
}

// A single-element row normalizes to 0: the output is the bias exactly.
IRON_TEST(iron_layer_norm_bias, single_element_rows, F32, F16, BF16) {
  return layer_norm_setup(true, 4, 1, 32, 0.0f, 2.0f, dt, rng);
}

IRON_TEST(iron_layer_norm_bias, large_mean, F32, F16, BF16) {
  return layer_norm_setup(true, 4, 2048, 1024, -1000.0f, large_mean_spread(dt), dt, rng);
}

IRON_BENCH(iron_layer_norm, rows16k_n4k, F32, F16, BF16) {
  return layer_norm_bench(false, 16384, 4096, dt);
}
IRON_BENCH(iron_layer_norm_bias, rows16k_n4k, F32, F16, BF16) {
  return layer_norm_bench(true, 16384, 4096, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
