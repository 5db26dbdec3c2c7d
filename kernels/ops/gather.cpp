/// iron_gather: out[r, :] = table[idx[r], :], an embedding lookup; a row of zeros where
/// idx[r] ≥ vocab.
///
/// An out-of-range index is a padding or sentinel token (e.g. 0xFFFFFFFF), not a reason to read
/// outside the table: the load is clamped to the last row and its value replaced by zero, so
/// the kernel never reads out of bounds and every output row is defined. The clamp and the
/// select are uniform across the group and keep the copy loop straight-line, so it is still
/// turned into 16-byte accesses.
///
/// ## Error bound
/// Exact: values of T are copied (or zeros written), no arithmetic.
///
/// ## Layout
/// - `table [vocab, dim]` T
/// - `idx   [rows]`       u32
/// - `out   [rows, dim]`  T
///
/// ## Dispatch
/// Reduction: one group per output row (`rows` groups), any tpg ≤ 1024; each thread strides
/// over the row by tpg. vocab ≥ 1.
#include <algorithm>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_gather, (Tensor<T> table, Tensor<u32> idx, Out<T> out, Constexpr<u32> vocab,
                          Constexpr<u32> dim)) {
  dispatch(reduction, {at_most(1024)});
  grid("[any, 1, 1]");
  layout_at_least(table, "[vocab, dim]");
  layout(idx, "[groups.x]");
  layout(out, "[groups.x, dim]");
  auto row = program_id<0>();
  auto token = load(idx[row]);
  auto valid = token < vocab;
  auto from = min(token, vocab - 1u) * dim;
  auto to = row * dim;
  Expr<T> zero = 0.0f;
  for (auto j : range(thread_id<0>(), dim, group_size<0>())) {
    store(out[to + j], select(valid, load(table[from + j]), zero));
  }
}

// One group per index, of one thread per 16-byte vector of a row (whole simdgroups, at most
// 512): each thread's loop runs once for rows up to 512 vectors.
IRON_GEOMETRY(iron_gather) {
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

/// The definition: the indexed row of the table, or zeros for an index past its end.
std::vector<float> gather_oracle(const std::vector<float>& table,
                                 const std::vector<std::uint32_t>& idx, std::size_t vocab,
                                 std::size_t dim) {
  std::vector<float> out(idx.size() * dim, 0.0f);
  for (std::size_t r = 0; r < idx.size(); ++r) {
    if (idx[r] >= vocab) continue;
    std::copy_n(&table[idx[r] * dim], dim, &out[r * dim]);
  }
  return out;
}

testing::TestSetup gather_setup(const std::vector<std::uint32_t>& idx, std::size_t vocab,
                                std::size_t dim, std::uint32_t tpg, DType dt, testing::Rng& rng) {
  const auto table = testing::round_through(rng.uniform(vocab * dim, -1.0f, 1.0f), dt);
  return testing::TestSetup("iron_gather", dt)
      .input("table", table)
      .input_u32("idx", idx)
      .output("out", idx.size() * dim)
      .constant("vocab", static_cast<double>(vocab))
      .constant("dim", static_cast<double>(dim))
      .expect("out", gather_oracle(table, idx, vocab, dim))
      .tolerance(testing::tolerance::exact())
      .grid_rows(static_cast<std::uint32_t>(idx.size()), tpg);
}

bench::BenchSetup gather_bench(std::size_t rows, std::size_t vocab, std::size_t dim, DType dt) {
  bench::BenchSetup setup("iron_gather", dt);
  setup.random("table", vocab * dim)
      .random_u32("idx", rows, 0, static_cast<std::uint32_t>(vocab))
      .output("out", rows * dim)
      .constant("vocab", static_cast<double>(vocab))
      .constant("dim", static_cast<double>(dim));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * rows * dim * dtype_size(dt) + rows * 4)
      .peer("embedding", {{"rows", static_cast<double>(rows)},
                          {"vocab", static_cast<double>(vocab)},
                          {"dim", static_cast<double>(dim)}});
}

}  // namespace

// Random tokens, repeats included.
IRON_TEST(iron_gather, tokens, F32, F16, BF16) {
  return gather_setup(rng.integers(64, 0, 1000), 1000, 256, 128, dt, rng);
}

// dim = 99 is odd and not a multiple of the group size: only the scalar loop applies.
IRON_TEST(iron_gather, ragged_dim, F32, F16, BF16) {
  return gather_setup(rng.integers(9, 0, 50), 50, 99, 32, dt, rng);
}

// Indices vocab, vocab + 1 and 0xFFFFFFFF give zero rows (and no out-of-bounds read, which the
// simulator would report); 0 and vocab - 1 are the first and last rows.
IRON_TEST(iron_gather, out_of_range_index_gives_zeros, F32, F16, BF16) {
  return gather_setup({0, 17, 16, 18, 0xFFFFFFFFu, 3}, 17, 40, 32, dt, rng);
}

// Llama 3's vocabulary and hidden size: an 8192-token prefill reads 8192 random table rows.
IRON_BENCH(iron_gather, rows8192_vocab128256_dim4096, F32, F16, BF16) {
  return gather_bench(8192, 128256, 4096, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
