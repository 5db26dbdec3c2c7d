/// iron_argmax: values[r] = max_j x[r, j] and indices[r] = the smallest j where x[r, j] is it.
///
/// One pass over the row. Each thread walks its elements in increasing j (eight loads in flight
/// at a time) and keeps the first strictly greater one, so it holds its own (maximum, smallest
/// index). The group then takes the maximum of the values (reduce_max) and, among the threads that
/// hold it, the smallest index (reduce_min over the index, or 0xFFFFFFFF for threads that do not
/// hold it): ties go to the smallest index, deterministically. A thread with no element of the row
/// holds -inf at its own thread id, which is never below the index of a real -inf element (thread 0
/// holds index 0), so a row of -inf gives index 0. NaN compares false and never wins (unlike
/// torch.argmax, which returns a NaN's index); a row of NaN gives value -inf, index 0.
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
#include <array>
#include <cmath>
#include <iron/iron.hpp>
#include <limits>

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr std::uint32_t kUnroll = 8;  // elements per thread per iteration
}  // namespace

IRON_KERNEL(iron_argmax, (Tensor<T> inp, Out<T> values, Out<u32> indices, Constexpr<u32> n)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(values, "[groups.x]");
  layout(indices, "[groups.x]");
  auto row = program_id<0>();
  auto base = row * n;
  auto tid = thread_id<0>();

  // Each iteration loads kUnroll elements (tid + e * tpg) before comparing any: the loads are
  // in flight together. Indices past the row are clamped for the load and their value is -inf.
  auto tpg = group_size<0>();
  auto last = n - 1u;
  Var<f32> best = -infinity;
  Var<u32> best_index = tid;
  for (auto first : range(tid, n, tpg * kUnroll)) {
    std::array<Expr<f32>, kUnroll> v;
    for (std::uint32_t e = 0; e < kUnroll; ++e) {
      auto j = first + e * tpg;
      v[e] = select(j < n, cast<f32>(load(inp[base + min(j, last)])), -infinity);
    }
    for (std::uint32_t e = 0; e < kUnroll; ++e) {
      auto better = v[e] > best;  // strict: a thread keeps the first of equal values
      best_index = select(better, first + e * tpg, best_index);
      best = select(better, v[e], best);
    }
  }
  auto row_max = reduce_max(best);
  auto index = reduce_min(select(best == row_max, Expr<u32>(best_index), 0xFFFFFFFFu));
  IRON_IF(tid == 0u) {
    store(values[row], cast<T>(row_max));
    store(indices[row], index);
  }
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
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
  return bench::BenchSetup("iron_argmax", dt)
      .random("inp", rows * n)
      .output("values", rows)
      .output("indices", rows)
      .constant("n", static_cast<double>(n))
      .grid_rows(static_cast<std::uint32_t>(rows), 1024)
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

// Every row's maximum occurs ~n/4 times in every thread and unrolled iteration (999 = 3 * 256
// + 231 with 32 threads): the smallest index must win.
IRON_TEST(iron_argmax, ties_smallest_index, F32, F16, BF16) {
  return argmax_setup(tied_values(std::size_t{5} * 999, 4, rng), 5, 999, 32, dt);
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
