/// iron_row_reduce_{sum,max,min}: out[r] = sum / max / min over j of x[r, j].
///
/// One kernel template, one registered variant per operator. Every value is widened to f32 and
/// accumulated in f32 (a long f16 sum would otherwise stall once its ULP outgrows the terms);
/// only the row's result is rounded to T. Max and min of T values are exact.
///
/// A group reduces four rows at once: each thread strides over the rows by tpg with one
/// accumulator per row, so every iteration has four independent loads in flight (16 bytes each
/// once vectorized), then four group reductions. A group whose rows pass the last one reads the
/// last row again for them and stores nothing there.
///
/// ## Error bound
/// max, min: exact. sum: each term passes through at most d = W·⌈⌈n/W⌉/tpg⌉ − 1 + tpg − 1 f32
/// additions (its thread's strided sum over runs of W consecutive terms, W = 4 for f32 and 8 for
/// f16/bf16 once vectorized, then the group's reduce_sum in any order), and at most n − 1, so
/// |err| ≤ γ_d · Σ_j |x[r, j]| (γ_d = d·u / (1 − d·u), u = 2^-24), then the rounding to T:
/// 2^-11 (f16) or 2^-8 (bf16) relative.
///
/// ## Layout
/// - `inp [rows, n]` T
/// - `out [rows]`    T
///
/// ## Dispatch
/// Reduction: ceil(rows / 4) groups, `tpg` threads with tpg a multiple of 32, 32 ≤ tpg ≤ 1024.
/// Any n ≥ 1 and rows ≥ 1: each thread strides over its group's rows by tpg; thread 0 stores.
#include <algorithm>
#include <array>
#include <iron/iron.hpp>
#include <string>
#include <vector>

namespace iron::kernels {
using namespace iron::dsl;

/// The operator a row reduction applies.
enum class RowReduce { Sum, Max, Min };

namespace {

/// Rows one group reduces together.
constexpr u32 kRowsPerGroup = 4;

}  // namespace

IRON_KERNEL_TEMPLATE(iron_row_reduce, (RowReduce OP),
                     (Tensor<T> inp, Out<T> out, Constexpr<u32> rows, Constexpr<u32> n)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[ceil_div(rows, " + std::to_string(kRowsPerGroup) + "), 1, 1]");
  layout(inp, "[rows, n]");
  layout(out, "[rows]");
  auto first = program_id<0>() * kRowsPerGroup;
  const float identity =
      OP == RowReduce::Sum ? 0.0f : (OP == RowReduce::Max ? -infinity : infinity);
  std::array<Expr<u32>, kRowsPerGroup> bases;
  std::vector<Var<f32>> acc;  // reserved: a Var moved by reallocation would be a new variable
  acc.reserve(kRowsPerGroup);
  for (u32 r = 0; r < kRowsPerGroup; ++r) {
    bases[r] = min(first + r, rows - 1u) * n;
    acc.emplace_back(identity);
  }
  for (auto j : range(thread_id<0>(), n, group_size<0>())) {
    for (u32 r = 0; r < kRowsPerGroup; ++r) {
      auto v = cast<f32>(load(inp[bases[r] + j]));
      if constexpr (OP == RowReduce::Sum) acc[r] += v;
      if constexpr (OP == RowReduce::Max) acc[r] = max(acc[r], v);
      if constexpr (OP == RowReduce::Min) acc[r] = min(acc[r], v);
    }
  }
  std::array<Expr<f32>, kRowsPerGroup> totals;
  for (u32 r = 0; r < kRowsPerGroup; ++r) {
    if constexpr (OP == RowReduce::Sum) totals[r] = reduce_sum(acc[r]);
    if constexpr (OP == RowReduce::Max) totals[r] = reduce_max(acc[r]);
    if constexpr (OP == RowReduce::Min) totals[r] = reduce_min(acc[r]);
  }
  IRON_IF(thread_id<0>() == 0u) {
    for (u32 r = 0; r < kRowsPerGroup; ++r) {
      IRON_IF(first + r < rows) { store(out[first + r], cast<T>(totals[r])); }
    }
  }
}
IRON_KERNEL_VARIANT(iron_row_reduce, sum, RowReduce::Sum);
IRON_KERNEL_VARIANT(iron_row_reduce, max, RowReduce::Max);
IRON_KERNEL_VARIANT(iron_row_reduce, min, RowReduce::Min);

namespace {

/// Threads for two iterations of four 16-byte loads (one per row) each, 32 to 1024 of them.
Geometry row_reduce_geometry(const GeometryQuery& q) {
  const std::uint32_t tpg = q.threads_per_group(
      whole_simdgroups(vector_count(q.constant("n"), q.dtype) / 2, q.device.max_threads_per_group));
  return {Geometry::elementwise(q.constant("rows"), kRowsPerGroup).groups, {tpg}};
}

}  // namespace

IRON_GEOMETRY(iron_row_reduce_sum) { return row_reduce_geometry(q); }
IRON_GEOMETRY(iron_row_reduce_max) { return row_reduce_geometry(q); }
IRON_GEOMETRY(iron_row_reduce_min) { return row_reduce_geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition, in double.
std::vector<float> row_reduce_oracle(RowReduce op, const std::vector<float>& x, std::size_t rows,
                                     std::size_t n) {
  std::vector<float> y(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    double acc = x[r * n];
    for (std::size_t j = 1; j < n; ++j) {
      const double v = x[r * n + j];
      acc = op == RowReduce::Sum ? acc + v
                                 : (op == RowReduce::Max ? std::max(acc, v) : std::min(acc, v));
    }
    y[r] = static_cast<float>(acc);
  }
  return y;
}

const char* kernel_name(RowReduce op) {
  return op == RowReduce::Sum
             ? "iron_row_reduce_sum"
             : (op == RowReduce::Max ? "iron_row_reduce_max" : "iron_row_reduce_min");
}

testing::TestSetup row_reduce_setup(RowReduce op, std::size_t rows, std::size_t n,
                                    std::uint32_t tpg, float lo, float hi, DType dt,
                                    testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(rows * n, lo, hi), dt);
  namespace tol = testing::tolerance;
  const double sum_error = tol::sum_error(tol::group_sum_depth(n, tpg, tol::lanes_per_vector(dt)),
                                          tol::max_row_abs_sum(x, rows, n));
  return testing::TestSetup(kernel_name(op), dt)
      .input("inp", x)
      .output("out", rows)
      .constant("rows", static_cast<double>(rows))
      .constant("n", static_cast<double>(n))
      .expect("out", row_reduce_oracle(op, x, rows, n))
      .tolerance(op == RowReduce::Sum ? tol::stored(dt, sum_error, 0.0) : tol::exact())
      .grid(runtime::Grid{{static_cast<std::uint32_t>((rows + kRowsPerGroup - 1) / kRowsPerGroup)},
                          {tpg}});
}

bench::BenchSetup row_reduce_bench(RowReduce op, std::size_t rows, std::size_t n, DType dt) {
  const char* peer =
      op == RowReduce::Sum ? "row_sum" : (op == RowReduce::Max ? "row_max" : "row_min");
  bench::BenchSetup setup(kernel_name(op), dt);
  setup.random("inp", rows * n)
      .output("out", rows)
      .constant("rows", static_cast<double>(rows))
      .constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((rows * n + rows) * dtype_size(dt))
      .flops(rows * n)
      .peer(peer, {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}});
}

}  // namespace

IRON_TEST(iron_row_reduce_sum, rows_4096, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Sum, 8, 4096, 256, -1.0f, 1.0f, dt, rng);
}
// Row lengths that are not a multiple of the group size, and one-element rows; 3 and 5 rows
// leave the last group of four short (its missing rows read the last row and store nothing).
IRON_TEST(iron_row_reduce_sum, ragged_rows, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Sum, 3, 1000, 128, -1.0f, 1.0f, dt, rng);
}
IRON_TEST(iron_row_reduce_sum, single_element_rows, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Sum, 5, 1, 32, -1.0f, 1.0f, dt, rng);
}
// 4000 terms near 1: an f16 or bf16 accumulator would stall at 2048 or 256; f32 reaches ~4000.
IRON_TEST(iron_row_reduce_sum, f32_accumulation, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Sum, 2, 4000, 64, 0.9f, 1.1f, dt, rng);
}
// One row, and a length (4001) no wide access divides: the scalar loop.
IRON_TEST(iron_row_reduce_sum, single_odd_row, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Sum, 1, 4001, 96, -1.0f, 1.0f, dt, rng);
}

IRON_TEST(iron_row_reduce_max, rows_4096, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Max, 8, 4096, 256, -100.0f, 100.0f, dt, rng);
}
// All-negative ragged rows: the identity must be -inf, not 0; idle threads must not win.
IRON_TEST(iron_row_reduce_max, negative_ragged_rows, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Max, 3, 1000, 128, -100.0f, -1.0f, dt, rng);
}
IRON_TEST(iron_row_reduce_max, single_element_rows, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Max, 5, 1, 32, -100.0f, -1.0f, dt, rng);
}

IRON_TEST(iron_row_reduce_min, rows_4096, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Min, 8, 4096, 256, -100.0f, 100.0f, dt, rng);
}
// All-positive ragged rows: the identity must be +inf, not 0; idle threads must not win.
IRON_TEST(iron_row_reduce_min, positive_ragged_rows, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Min, 3, 1000, 128, 1.0f, 100.0f, dt, rng);
}
IRON_TEST(iron_row_reduce_min, single_element_rows, F32, F16, BF16) {
  return row_reduce_setup(RowReduce::Min, 5, 1, 32, 1.0f, 100.0f, dt, rng);
}

IRON_BENCH(iron_row_reduce_sum, rows16384_n4096, F32, F16, BF16) {
  return row_reduce_bench(RowReduce::Sum, 16384, 4096, dt);
}
IRON_BENCH(iron_row_reduce_max, rows16384_n4096, F32, F16, BF16) {
  return row_reduce_bench(RowReduce::Max, 16384, 4096, dt);
}
IRON_BENCH(iron_row_reduce_min, rows16384_n4096, F32, F16, BF16) {
  return row_reduce_bench(RowReduce::Min, 16384, 4096, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
