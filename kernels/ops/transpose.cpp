/// iron_transpose: out[c, r] = inp[r, c], a 2-D transpose through threadgroup memory.
///
/// Each group moves one 32x32 tile through threadgroup memory: it reads tile rows of `inp`
/// (coalesced), and after a barrier writes tile columns as rows of `out` (coalesced again). The
/// tile is stored in f32 with rows of 33. Two paths, by a branch on the launch's sizes:
/// - rows and cols multiples of 8 (the wide path): a thread moves 8 consecutive elements of a tile
///   row with one 16-byte load (f16/bf16; two in f32) and 8 consecutive elements of an out row
///   with one 16-byte store, reading them from a tile column; 4 threads cover 32 elements (64
///   contiguous bytes in f16/bf16), and each simdgroup's tile accesses, 8 rows (columns) by 4
///   runs, fall in 32 different banks (row or column + 8 · run + element, modulo 32).
/// - otherwise: each lane moves one element per pass, a simdgroup a row of the tile.
/// Elements past the edges of a ragged tile are neither read nor written.
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
/// `inp`), `tpg` threads with tpg a multiple of 32, 32 ≤ tpg ≤ 1024. The wide path has 128
/// chunks of 8 per tile and phase (thread t takes chunks t, t + tpg, …), so 128 threads keep
/// every thread busy; the narrow path gives simdgroup s tile rows s, s + tpg / 32, …
#include <algorithm>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr std::uint32_t kTile = 32;
constexpr std::uint32_t kPitch = kTile + 1;  // one padding column: no bank conflicts
constexpr std::uint32_t kRun = 8;            // elements per 16-byte access of f16/bf16
constexpr std::uint32_t kRuns = kTile / kRun;

/// The wide path: 8 consecutive elements per access on both sides (rows and cols multiples of 8,
/// so a run that starts inside the matrix ends inside it).
template <class T>
void transpose_runs(const Tensor<T>& inp, const Out<T>& out, const Expr<u32>& rows,
                    const Expr<u32>& cols, const Shared<f32>& tile, const Expr<u32>& row0,
                    const Expr<u32>& col0) {
  for (auto v : range(thread_id<0>(), kTile * kRuns, group_size<0>())) {
    auto r = v / kRuns;
    auto first = v % kRuns * kRun;
    auto at = (row0 + r) * cols + col0 + first;
    IRON_IF(row0 + r < rows && col0 + first < cols) {
      for (std::uint32_t e = 0; e < kRun; ++e) {
        store(tile[r * kPitch + first + e], cast<f32>(load(inp[at + e])));
      }
    }
  }
  barrier();
  for (auto v : range(thread_id<0>(), kTile * kRuns, group_size<0>())) {
    auto c = v / kRuns;  // a row of out is a column of the tile
    auto first = v % kRuns * kRun;
    auto at = (col0 + c) * rows + row0 + first;
    IRON_IF(col0 + c < cols && row0 + first < rows) {
      for (std::uint32_t e = 0; e < kRun; ++e) {
        store(out[at + e], cast<T>(load(tile[(first + e) * kPitch + c])));
      }
    }
  }
}

/// The narrow path: one element per lane, a simdgroup a tile row at a time.
template <class T>
void transpose_elements(const Tensor<T>& inp, const Out<T>& out, const Expr<u32>& rows,
                        const Expr<u32>& cols, const Shared<f32>& tile, const Expr<u32>& row0,
                        const Expr<u32>& col0) {
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
  IRON_IF((rows | cols) % kRun == 0u) { transpose_runs<T>(inp, out, rows, cols, tile, row0, col0); }
  IRON_ELSE { transpose_elements<T>(inp, out, rows, cols, tile, row0, col0); }
}

// A group per tile, of 128 threads: one run of 8 per thread and phase on the wide path.
IRON_GEOMETRY(iron_transpose) {
  return {{tile_count(q.constant("cols"), kTile), tile_count(q.constant("rows"), kTile), 1},
          {q.threads_per_group(128), 1, 1}};
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
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
  bench::BenchSetup setup("iron_transpose", dt);
  setup.random("inp", rows * cols)
      .output("out", rows * cols)
      .constant("rows", static_cast<double>(rows))
      .constant("cols", static_cast<double>(cols));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * rows * cols * dtype_size(dt))
      .peer("transpose",
            {{"rows", static_cast<double>(rows)}, {"cols", static_cast<double>(cols)}});
}

}  // namespace

// The wide path: whole tiles, 8-element runs, on 128 threads (one run each per phase).
IRON_TEST(iron_transpose, tiles_64x96, F32, F16, BF16) {
  return transpose_setup(64, 96, 128, dt, rng);
}

// The wide path on ragged tiles (sizes multiples of 8, not of 32), 32 threads taking four runs
// each per phase and 256 leaving half the threads idle.
IRON_TEST(iron_transpose, ragged_runs_40x72, F32, F16, BF16) {
  return transpose_setup(40, 72, 32, dt, rng);
}
IRON_TEST(iron_transpose, ragged_runs_72x40, F32, F16, BF16) {
  return transpose_setup(72, 40, 256, dt, rng);
}

// The narrow path (cols not a multiple of 8): ragged tiles on both edges; 128 threads handle
// each tile in eight passes of four rows.
IRON_TEST(iron_transpose, ragged_37x70, F32, F16, BF16) {
  return transpose_setup(37, 70, 128, dt, rng);
}

// rows a multiple of 8 but not cols: the narrow path.
IRON_TEST(iron_transpose, narrow_64x36, F32, F16, BF16) {
  return transpose_setup(64, 36, 64, dt, rng);
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
