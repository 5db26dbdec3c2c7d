/// iron_scatter_rows: out[idx[r], :] = src[r, :] for each r with idx[r] < out_rows.
///
/// Rows of `out` that no index names keep their contents; a source row whose index is out of
/// range is skipped, so the kernel never writes out of bounds. The in-range indices must be
/// distinct: two source rows sent to one output row race, and which one lands is unspecified.
///
/// The copy loop sits inside the in-range branch, which is uniform across the group: the
/// vectorizer still turns it into 16-byte accesses when dim allows.
///
/// ## Error bound
/// Exact: values of T are copied, no arithmetic.
///
/// ## Layout
/// - `src [rows, dim]`     T
/// - `idx [rows]`          u32
/// - `out [out_rows, dim]` T, written only at the rows idx names
///
/// ## Dispatch
/// Reduction: one group per source row (`rows` groups), any tpg ≤ 1024; each thread strides
/// over the row by tpg.
#include <algorithm>
#include <iron/iron.hpp>
#include <numeric>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_scatter_rows, (Tensor<T> src, Tensor<u32> idx, Out<T> out, Constexpr<u32> out_rows,
                                Constexpr<u32> dim)) {
  dispatch(reduction, {at_most(1024)});
  grid("[any, 1, 1]");
  layout(src, "[groups.x, dim]");
  layout(idx, "[groups.x]");
  layout(out, "[out_rows, dim]");
  auto row = program_id<0>();
  auto target = load(idx[row]);
  IRON_IF(target < out_rows) {
    auto from = row * dim;
    auto to = target * dim;
    for (auto j : range(thread_id<0>(), dim, group_size<0>())) {
      store(out[to + j], load(src[from + j]));
    }
  }
}

// One group per source row, of one thread per 16-byte vector of the row (whole simdgroups, at
// most 512): each thread's loop runs once for rows up to 512 vectors.
IRON_GEOMETRY(iron_scatter_rows) {
  return Geometry::per_row(q.tensor_elements("idx"),
                           whole_simdgroups(vector_count(q.constant("dim"), q.dtype), 512));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// `count` distinct rows of [0, out_rows) in random order.
std::vector<std::uint32_t> distinct_rows(std::size_t count, std::size_t out_rows,
                                         testing::Rng& rng) {
  std::vector<std::uint32_t> rows(out_rows);
  std::iota(rows.begin(), rows.end(), 0u);
  for (std::size_t i = out_rows; i > 1; --i) {  // Fisher-Yates
    std::swap(rows[i - 1], rows[rng.integers(1, 0, static_cast<std::uint32_t>(i))[0]]);
  }
  rows.resize(count);
  return rows;
}

/// The definition: each in-range index receives its source row. The tests' in-range indices
/// cover every output row, so every output element has an expected value.
std::vector<float> scatter_oracle(const std::vector<float>& src,
                                  const std::vector<std::uint32_t>& idx, std::size_t out_rows,
                                  std::size_t dim) {
  std::vector<float> out(out_rows * dim, 0.0f);
  for (std::size_t r = 0; r < idx.size(); ++r) {
    if (idx[r] < out_rows) std::copy_n(&src[r * dim], dim, &out[idx[r] * dim]);
  }
  return out;
}

testing::TestSetup scatter_setup(const std::vector<std::uint32_t>& idx, std::size_t out_rows,
                                 std::size_t dim, std::uint32_t tpg, DType dt, testing::Rng& rng) {
  const auto src = testing::round_through(rng.uniform(idx.size() * dim, -1.0f, 1.0f), dt);
  return testing::TestSetup("iron_scatter_rows", dt)
      .input("src", src)
      .input_u32("idx", idx)
      .output("out", out_rows * dim)
      .constant("out_rows", static_cast<double>(out_rows))
      .constant("dim", static_cast<double>(dim))
      .expect("out", scatter_oracle(src, idx, out_rows, dim))
      .tolerance(testing::tolerance::exact())
      .grid_rows(static_cast<std::uint32_t>(idx.size()), tpg);
}

bench::BenchSetup scatter_bench(std::size_t rows, std::size_t out_rows, std::size_t dim, DType dt) {
  testing::Rng rng(7);
  bench::BenchSetup setup("iron_scatter_rows", dt);
  setup.random("src", rows * dim)
      .input_u32("idx", distinct_rows(rows, out_rows, rng))
      .output("out", out_rows * dim)
      .partial_outputs()
      .constant("out_rows", static_cast<double>(out_rows))
      .constant("dim", static_cast<double>(dim));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * rows * dim * dtype_size(dt) + rows * 4)
      .peer("scatter_rows", {{"rows", static_cast<double>(rows)},
                             {"out_rows", static_cast<double>(out_rows)},
                             {"dim", static_cast<double>(dim)}});
}

}  // namespace

// The test harness poisons every output element and checks all of them, so each test's
// in-range indices are a permutation of the output rows: every row is written exactly once.
IRON_TEST(iron_scatter_rows, permutation, F32, F16, BF16) {
  return scatter_setup(distinct_rows(64, 64, rng), 64, 256, 128, dt, rng);
}

// dim = 33 is ragged; source rows with indices 7, 1000 and 0xFFFFFFFF (out_rows = 7) are
// skipped without an out-of-bounds write, which the simulator would report.
IRON_TEST(iron_scatter_rows, out_of_range_rows_skipped, F32, F16, BF16) {
  return scatter_setup({3, 7, 0, 6, 1000, 2, 5, 0xFFFFFFFFu, 1, 4}, 7, 33, 32, dt, rng);
}

// One element.
IRON_TEST(iron_scatter_rows, single_element, F32, F16, BF16) {
  return scatter_setup({0}, 1, 1, 32, dt, rng);
}

// Half the rows of a 16384-row buffer, in random order.
IRON_BENCH(iron_scatter_rows, rows8192_of16384_dim4096, F32, F16, BF16) {
  return scatter_bench(8192, 16384, 4096, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
