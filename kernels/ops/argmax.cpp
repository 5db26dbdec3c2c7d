/// iron_argmax: values[r] = max_j x[r, j] and indices[r] = the smallest j where x[r, j] is it.
///
/// One pass over the row. Each thread walks its elements in increasing j and keeps the first
/// strictly greater one, so it holds its own (maximum, smallest index); vectorize widens the walk
/// to 16-byte loads (8 elements of f16/bf16, 4 of f32) when n is a multiple of the width, each
/// thread then walking runs of consecutive elements, still in increasing j. The group then takes
/// the maximum of the values (reduce_max) and, among the threads that hold it, the smallest index
/// (reduce_min over the index, or 0xFFFFFFFF for threads that do not hold it): ties go to the
/// smallest index, deterministically, however the elements were split among the threads. A
/// thread with no element of the row holds -inf at its own thread id, which is never below the
/// index of a real -inf element (thread 0 holds index 0), so a row of -inf gives index 0. NaN
/// compares false and never wins (unlike torch.argmax, which returns a NaN's index); a row of
/// NaN gives value -inf, index 0.
///
/// ## Error bound
/// Exact: max and its index are selected, no arithmetic.
///
/// ## Layout
/// - `inp     [rows, n]` T
/// - `values  [rows]`    T
/// - `indices [rows]`    u32
///
/// ## Dispatch
/// Reduction: one group per row (`rows` groups), `tpg` threads with tpg a multiple of 32,
/// 32 ≤ tpg ≤ 1024. Any n ≥ 1; thread 0 stores.
#include <algorithm>
#include <cmath>
#include <iron/iron.hpp>
#include <limits>

#include "../primitives/arg_max.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_argmax, (Tensor<T> inp, Out<T> values, Out<u32> indices, Constexpr<u32> n)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(values, "[groups.x]");
  layout(indices, "[groups.x]");
  auto row = program_id<0>();
  auto base = row * n;
  auto tid = thread_id<0>();

  Var<f32> best = -infinity;
  Var<u32> best_index = tid;
  for (auto j : range(tid, n, group_size<0>())) {
    keep_first_max(best, best_index, cast<f32>(load(inp[base + j])), j);
  }
  const ArgMax top = group_arg_max(best, best_index);
  IRON_IF(tid == 0u) {
    store(values[row], cast<T>(top.value));
    store(indices[row], top.index);
  }
}

// A group per row, of one thread per 16-byte vector of the row (whole simdgroups, at most 1024).
IRON_GEOMETRY(iron_argmax) {
  const std::uint64_t n = std::max<std::uint64_t>(q.constant("n"), 1);
  return Geometry::per_row(q.tensor_elements("inp") / n,
                           whole_simdgroups(vector_count(n, q.dtype), 1024));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition: the first position of the row's maximum.
void argmax_oracle(const std::vector<float>& x, std::size_t rows, std::size_t n,
                   std::vector<float>& values, std::vector<float>& indices) {
  values.assign(rows, 0.0f);
  indices.assign(rows, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t at = 0;
    for (std::size_t j = 1; j < n; ++j) {
      if (x[r * n + j] > x[r * n + at]) at = j;
    }
    values[r] = x[r * n + at];
    indices[r] = static_cast<float>(at);
  }
}

testing::TestSetup argmax_setup(const std::vector<float>& x, std::size_t rows, std::size_t n,
                                std::uint32_t tpg, DType dt) {
  std::vector<float> values;
  std::vector<float> indices;
  argmax_oracle(x, rows, n, values, indices);
  return testing::TestSetup("iron_argmax", dt)
      .input("inp", x)
      .output("values", rows)
      .output("indices", rows)
      .constant("n", static_cast<double>(n))
      .expect("values", values)
      .expect("indices", indices)
      .tolerance(testing::tolerance::exact())
      .grid_rows(static_cast<std::uint32_t>(rows), tpg);
}

/// Small integers 0..levels-1: each row's maximum occurs many times, in many threads.
std::vector<float> tied_values(std::size_t count, int levels, testing::Rng& rng) {
  auto x = rng.uniform(count, 0.0f, static_cast<float>(levels));
  for (float& v : x) v = std::floor(v);
  return x;
}

bench::BenchSetup argmax_bench(std::size_t rows, std::size_t n, DType dt) {
  bench::BenchSetup setup("iron_argmax", dt);
  setup.random("inp", rows * n)
      .output("values", rows)
      .output("indices", rows)
      .constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(rows * n * dtype_size(dt) + rows * (dtype_size(dt) + 4))
      .peer("argmax", {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}});
}

}  // namespace

// Vocabulary-sized rows, not a multiple of the group size.
IRON_TEST(iron_argmax, vocab_rows, F32, F16, BF16) {
  const std::size_t rows = 4;
  const std::size_t n = 32000;
  return argmax_setup(testing::round_through(rng.uniform(rows * n, -20.0f, 20.0f), dt), rows, n,
                      1024, dt);
}

// Every row's maximum occurs ~n/4 times in every thread (999 elements on 32 threads, an odd n:
// the scalar walk): the smallest index must win.
IRON_TEST(iron_argmax, ties_smallest_index, F32, F16, BF16) {
  return argmax_setup(tied_values(std::size_t{5} * 999, 4, rng), 5, 999, 32, dt);
}

// The same with n = 1024: the 16-byte walk (runs of 8 or 4 elements per thread), where the
// maximum occurs many times within one thread's run and across the threads.
IRON_TEST(iron_argmax, ties_smallest_index_wide, F32, F16, BF16) {
  return argmax_setup(tied_values(std::size_t{5} * 1024, 4, rng), 5, 1024, 32, dt);
}

// n = 6: the 8-byte walk in f32 (n is a multiple of 2, not of 4), fewer elements than threads.
IRON_TEST(iron_argmax, short_rows_narrow_vectors, F32, F16, BF16) {
  return argmax_setup(tied_values(std::size_t{4} * 6, 3, rng), 4, 6, 32, dt);
}

// A constant row (index 0), a row of -inf (index 0, value -inf), and the maximum last.
IRON_TEST(iron_argmax, constant_and_infinite_rows, F32, F16, BF16) {
  const std::size_t n = 300;
  std::vector<float> x(3 * n, 7.0f);
  std::fill(x.begin() + n, x.begin() + 2 * n, -std::numeric_limits<float>::infinity());
  for (std::size_t j = 0; j < n; ++j) x[2 * n + j] = static_cast<float>(j) * 0.25f;
  return argmax_setup(testing::round_through(x, dt), 3, n, 64, dt);
}

// One element per row: most threads hold nothing.
IRON_TEST(iron_argmax, single_element_rows, F32, F16, BF16) {
  return argmax_setup(testing::round_through(rng.uniform(6, -5.0f, 5.0f), dt), 6, 1, 32, dt);
}

IRON_BENCH(iron_argmax, rows4096_n32768, F32, F16, BF16) { return argmax_bench(4096, 32768, dt); }

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
