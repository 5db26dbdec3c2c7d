/// iron_transpose: out[c, r] = inp[r, c], a 2-D transpose through threadgroup memory.
///
/// Each group moves one 32x32 tile: it reads tile rows of `inp` (consecutive lanes, consecutive
/// columns: coalesced), and after a barrier writes tile columns as rows of `out` (coalesced
/// again). The tile is stored in f32 with rows of 33: reading a column then touches 32
/// different banks instead of one. Elements past the edges of a ragged tile are neither read
/// nor written.
///
/// ## Error bound
/// Exact: values of T are moved, no arithmetic.
///
/// ## Layout
/// - `inp [rows, cols]` T
/// - `out [cols, rows]` T
///
/// ## Dispatch
/// Tiled: a 2-D grid of ceil(cols / 32) x ceil(rows / 32) groups (x walks the columns of
/// `inp`), `tpg` threads with tpg a multiple of 32, 32 ≤ tpg ≤ 1024: simdgroup s handles tile
/// rows s, s + tpg / 32, …
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr std::uint32_t kTile = 32;
constexpr std::uint32_t kPitch = kTile + 1;  // one padding column: no bank conflicts
}  // namespace

IRON_KERNEL(iron_transpose, (Tensor<T> inp, Out<T> out, Constexpr<u32> rows, Constexpr<u32> cols)) {
  dispatch(tiled, {multiple_of(32), at_least(32), at_most(1024)});
  static_assert(kTile == 32, "the grid rule below counts tiles of 32");
  grid("[ceil_div(cols, 32), ceil_div(rows, 32), 1]");
  layout(inp, "[rows, cols]");
  layout(out, "[cols, rows]");
  auto tile = shared<f32>(kTile * kPitch);
  auto row0 = program_id<1>() * kTile;
  auto col0 = program_id<0>() * kTile;
  auto lane = lane_id();

  for (auto i : range(simdgroup_id(), kTile, simdgroup_count())) {
    auto r = row0 + i;
    auto c = col0 + lane;
    IRON_IF(r < rows && c < cols) {
      store(tile[i * kPitch + lane], cast<f32>(load(inp[r * cols + c])));
    }
  }
  barrier();
  for (auto i : range(simdgroup_id(), kTile, simdgroup_count())) {
    auto r = col0 + i;  // a row of out is a column of inp
    auto c = row0 + lane;
    IRON_IF(r < cols && c < rows) {
      store(out[r * rows + c], cast<T>(load(tile[lane * kPitch + i])));
    }
  }
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition.
std::vector<float> transpose_oracle(const std::vector<float>& x, std::size_t rows,
                                    std::size_t cols) {
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) y[c * rows + r] = x[r * cols + c];
  }
  return y;
}

runtime::Grid tile_grid(std::size_t rows, std::size_t cols, std::uint32_t tpg) {
  return {{static_cast<std::uint32_t>((cols + kTile - 1) / kTile),
           static_cast<std::uint32_t>((rows + kTile - 1) / kTile), 1},
          {tpg, 1, 1}};
}

testing::TestSetup transpose_setup(std::size_t rows, std::size_t cols, std::uint32_t tpg, DType dt,
                                   testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(rows * cols, -100.0f, 100.0f), dt);
  return testing::TestSetup("iron_transpose", dt)
      .input("inp", x)
      .output("out", rows * cols)
      .constant("rows", static_cast<double>(rows))
      .constant("cols", static_cast<double>(cols))
      .expect("out", transpose_oracle(x, rows, cols))
      .tolerance(testing::tolerance::exact())
      .grid(tile_grid(rows, cols, tpg));
}

bench::BenchSetup transpose_bench(std::size_t rows, std::size_t cols, DType dt) {
  return bench::BenchSetup("iron_transpose", dt)
      .random("inp", rows * cols)
      .output("out", rows * cols)
      .constant("rows", static_cast<double>(rows))
      .constant("cols", static_cast<double>(cols))
      .grid(tile_grid(rows, cols, 256))
      .bytes_moved(2 * rows * cols * dtype_size(dt))
      .peer("transpose",
            {{"rows", static_cast<double>(rows)}, {"cols", static_cast<double>(cols)}});
}

}  // namespace

IRON_TEST(iron_transpose, tiles_64x96, F32, F16, BF16) {
  return transpose_setup(64, 96, 256, dt, rng);
}

// Ragged tiles on both edges; 128 threads handle each tile in eight passes of four rows.
IRON_TEST(iron_transpose, ragged_37x70, F32, F16, BF16) {
  return transpose_setup(37, 70, 128, dt, rng);
}

// A row becomes a column and back: one tile row (or column) of 32 tiles.
IRON_TEST(iron_transpose, one_row, F32, F16, BF16) {
  return transpose_setup(1, 1000, 256, dt, rng);
}
IRON_TEST(iron_transpose, one_column, F32, F16, BF16) {
  return transpose_setup(1000, 1, 1024, dt, rng);
}
IRON_TEST(iron_transpose, single_element, F32, F16, BF16) {
  return transpose_setup(1, 1, 32, dt, rng);
}

IRON_BENCH(iron_transpose, rows8192_cols8192, F32, F16, BF16) {
  return transpose_bench(8192, 8192, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
