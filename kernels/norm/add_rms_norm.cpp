/// iron_add_rms_norm: sum = x + residual, rounded to T; out = sum * rsqrt(mean(sum²) + eps) *
/// weight. The residual add and rms_norm of a transformer block in one pass over memory.
///
/// The statistics come from the ROUNDED sum, the values written to `sum`: the result is what
/// the unfused pair (an add kernel, then rms_norm on its output) computes, so swapping the two
/// for this kernel changes nothing. The add and the norm run in f32; each output is rounded
/// once to T. A row that fits the group's registers (n a multiple of L, the elements of a
/// 16-byte vector, and n ≤ 4·L·tpg) is read once (resident_row.hpp); for a longer or ragged row
/// the second pass recomputes the sum from x and residual (read again from cache) rather than
/// reading `sum` back, so both row loops stay vectorizable.
///
/// ## Error bound
/// sum: x + residual correctly rounded in f32, then rounded to T; against the sum rounded once to
/// T that is within one unit in T's last place (2^-10 f16, 2^-7 bf16 relative; exact in f32).
/// out: relative γ_k with k = ⌈(d + 3) / 2⌉ + 7 (u = 2^-24) on the rounded sum, as for
/// iron_rms_norm (addition depth d = L·⌈⌈n/L⌉/tpg⌉ + tpg − 2, at most n − 1), then the rounding
/// to T.
///
/// ## Layout
/// - `inp      [rows, n]` T
/// - `residual [rows, n]` T
/// - `weight   [n]`       T
/// - `sum      [rows, n]` T   (inp + residual: the next block's residual)
/// - `out      [rows, n]` T
///
/// ## Dispatch
/// Reduction: one group per row (`rows` groups), `tpg` threads with tpg a multiple of 32,
/// 32 ≤ tpg ≤ 1024. Any n ≥ 1.
#include <cmath>
#include <iron/iron.hpp>

#include "../primitives/resident_row.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_add_rms_norm, (Tensor<T> inp, Tensor<T> residual, Tensor<T> weight, Out<T> sum,
                                Out<T> out, Constexpr<u32> n, Constexpr<f32> eps)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(residual, "[groups.x, n]");
  layout(weight, "[n]");
  layout(sum, "[groups.x, n]");
  layout(out, "[groups.x, n]");
  auto base = program_id<0>() * n;
  auto tid = thread_id<0>();
  auto tpg = group_size<0>();

  IRON_IF(ResidentRow<T>::fits(n)) {
    constexpr std::size_t kLanes = ResidentRow<T>::kLanes;
    ResidentRow<T> row(n,
                       [&](const Expr<u32>& column, const typename ResidentRow<T>::Lanes& lanes) {
                         const auto x = load_lanes<kLanes>(inp[base + column]);
                         const auto r = load_lanes<kLanes>(residual[base + column]);
                         typename ResidentRow<T>::Vector s;
                         for (std::size_t e = 0; e < kLanes; ++e) {
                           s[e] = cast<T>(cast<f32>(x[e]) + cast<f32>(r[e]));
                           lanes[e] = cast<f32>(s[e]);
                         }
                         store_lanes(sum[base + column], s);
                       });
    auto inv_rms = rsqrt(row.sum([](const Expr<f32>& v) { return v * v; }) / cast<f32>(n) + eps);
    row.store(out, base, [&](const Expr<u32>& column, const typename ResidentRow<T>::Lanes& v) {
      const auto w = load_lanes<kLanes>(weight[column]);
      typename ResidentRow<T>::Vector y;
      for (std::size_t e = 0; e < kLanes; ++e) y[e] = cast<T>(v[e] * inv_rms * cast<f32>(w[e]));
      return y;
    });
  }
  IRON_ELSE {
    Var<f32> local_squares = 0.0f;
    for (auto j : range(tid, n, tpg)) {
      auto s = cast<T>(cast<f32>(load(inp[base + j])) + cast<f32>(load(residual[base + j])));
      store(sum[base + j], s);
      auto v = cast<f32>(s);
      local_squares += v * v;
    }
    auto inv_rms = rsqrt(reduce_sum(local_squares) / cast<f32>(n) + eps);

    for (auto j : range(tid, n, tpg)) {
      auto s = cast<T>(cast<f32>(load(inp[base + j])) + cast<f32>(load(residual[base + j])));
      store(out[base + j], cast<T>(cast<f32>(s) * inv_rms * cast<f32>(load(weight[j]))));
    }
  }
}

// One group per row, sized to hold the row in registers (resident_row.hpp).
IRON_GEOMETRY(iron_add_rms_norm) { return resident_row_geometry(q, "inp"); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition, in double, given the sum already rounded to the dtype.
std::vector<float> rms_norm_oracle(const std::vector<float>& s, const std::vector<float>& w,
                                   std::size_t rows, std::size_t n, float eps) {
  std::vector<float> y(s.size());
  for (std::size_t r = 0; r < rows; ++r) {
    double squares = 0.0;
    for (std::size_t j = 0; j < n; ++j) squares += double{s[r * n + j]} * s[r * n + j];
    const double scale = 1.0 / std::sqrt(squares / static_cast<double>(n) + eps);
    for (std::size_t j = 0; j < n; ++j) {
      y[r * n + j] = static_cast<float>(s[r * n + j] * scale * w[j]);
    }
  }
  return y;
}

testing::TestSetup add_rms_norm_setup(std::size_t rows, std::size_t n, std::uint32_t tpg,
                                      float spread, DType dt, testing::Rng& rng) {
  const float eps = 1e-5f;
  const auto x = testing::round_through(rng.uniform(rows * n, -spread, spread), dt);
  const auto r = testing::round_through(rng.uniform(rows * n, -spread, spread), dt);
  const auto w = testing::round_through(rng.uniform(n, 0.5f, 1.5f), dt);
  std::vector<float> s(x.size());
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<float>(double{x[i]} + r[i]);
  s = testing::round_through(s, dt);  // x + r is exact in double; one rounding to the dtype
  namespace tol = testing::tolerance;
  return testing::TestSetup("iron_add_rms_norm", dt)
      .input("inp", x)
      .input("residual", r)
      .input("weight", w)
      .output("sum", rows * n)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n))
      .constant("eps", eps)
      .expect("sum", s)
      .expect("out", rms_norm_oracle(s, w, rows, n, eps))
      .tolerance("sum", dt == DType::F32
                            ? tol::exact()
                            : tol::stored(dt, tol::underflow(dt), tol::unit_roundoff(dt)))
      .tolerance("out", tol::relative(
                            dt, (tol::group_sum_depth(n, tpg, tol::lanes_per_vector(dt)) + 4) / 2 +
                                    1 + tol::kRsqrtU + 2))
      .grid_rows(static_cast<std::uint32_t>(rows), tpg);
}

bench::BenchSetup add_rms_norm_bench(std::size_t rows, std::size_t n, DType dt) {
  const std::size_t row_bytes = rows * n * dtype_size(dt);
  bench::BenchSetup setup("iron_add_rms_norm", dt);
  setup.random("inp", rows * n)
      .random("residual", rows * n)
      .random("weight", n, 0.5f, 1.5f)
      .output("sum", rows * n)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n))
      .constant("eps", 1e-6);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(4 * row_bytes + n * dtype_size(dt))
      .peer("add_rms_norm",
            {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}, {"eps", 1e-6}});
}

}  // namespace

// Tolerances: f32 rounding, or half a unit in the last place of f16 (2^-11) and bf16 (2^-8).
// That tight, they pin the rounded sum: statistics from the unrounded x + residual put a
// few percent of f16/bf16 outputs a unit off.
IRON_TEST(iron_add_rms_norm, hidden_4096, F32, F16, BF16) {
  return add_rms_norm_setup(8, 4096, 256, 2.0f, dt, rng);
}

// A row length that is not a multiple of the group size.
IRON_TEST(iron_add_rms_norm, ragged_rows, F32, F16, BF16) {
  return add_rms_norm_setup(3, 999, 64, 2.0f, dt, rng);
}

// Rows longer than the group's registers hold (four 16-byte vectors a thread) stream instead.
IRON_TEST(iron_add_rms_norm, rows_past_the_registers, F32, F16, BF16) {
  return add_rms_norm_setup(2, 2056, 64, 2.0f, dt, rng);
}

IRON_TEST(iron_add_rms_norm, single_element_rows, F32, F16, BF16) {
  return add_rms_norm_setup(4, 1, 32, 2.0f, dt, rng);
}

// Sums near ±400 square to 1.6e5 each: past the f16 range, so squares must be taken in f32.
IRON_TEST(iron_add_rms_norm, large_magnitude, F32, F16, BF16) {
  return add_rms_norm_setup(2, 2048, 1024, 200.0f, dt, rng);
}

IRON_BENCH(iron_add_rms_norm, rows16k_n4k, F32, F16, BF16) {
  return add_rms_norm_bench(16384, 4096, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
