/// iron_gemm_kn / iron_gemm_nk: out[i, j] = alpha · Σ_p a[i, p] · b(p, j), on tensor-core
/// fragments (docs/tensor-cores.md).
///
/// `a` is row-major [m, k]; `b` is [k, n] row-major (iron_gemm_kn) or [n, k] (iron_gemm_nk, the
/// layout of a linear layer's weight: out = a · bᵀ). Products accumulate in f32; only the final
/// value is rounded to T.
///
/// ## Error bound
/// Per element, relative to Σ_p |a[i, p] · b(p, j)|: γ_k (u = 2^-24) for the f32 sum of k
/// exact products (the simulator sums them in increasing p; tensor cores in another order),
/// then the scale by alpha and the rounding to T (2^-11 f16, 2^-8 bf16).
///
/// ## How it runs
/// A group of 128 threads (4 simdgroups) computes a 128×64 tile of `out`. For each step of kBK
/// columns of `a`, the group copies the a and b tiles to shared memory (zeros past the edges),
/// then each simdgroup multiplies its 64×32 part with fragments (128×128 tiles took 234
/// registers a thread and ran slower, bench/NOTES.md §5). When the rows of `a` and `b` are whole
/// 16-byte pieces (k, and n for [k, n], multiples of 8), the copies are asynchronous 16-byte ones
/// into two stages of shared memory: the next step's tiles land while this step's are multiplied.
/// Each lane then scales and writes the accumulator elements it holds (the fragment gives each
/// one's row and column), skipping those past the edges.
///
/// ## Layout
/// - `a [m, k]` T
/// - `b [k, n]` T (kn) or `[n, k]` T (nk)
/// - `out [m, n]` T
///
/// ## Dispatch
/// Tiled: a grid of ceil(n / 64) × ceil(m / 128) groups of exactly 128 threads.
#include <algorithm>
#include <array>
#include <cmath>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

namespace {

constexpr std::uint32_t kBM = 128;  // rows of out per group
constexpr std::uint32_t kBN = 64;   // columns of out per group
constexpr std::uint32_t kWM = 64;   // rows per simdgroup
constexpr std::uint32_t kWN = 32;   // columns per simdgroup
constexpr std::uint32_t kThreads = 128;
static_assert((kBM / kWM) * (kBN / kWN) * 32 == kThreads, "one simdgroup per part of the tile");

/// Columns of `a` per step, and the padding of each shared row: 16-bit tiles keep rows of whole
/// 16-byte chunks (the fragment loads read them 8 elements at a time) whose 8-row groups fall
/// in different banks; f32 fragments load element by element.
template <class T>
constexpr std::uint32_t step_k() {
  return lane_bytes<T>() == 2 ? 32 : 16;
}
template <class T>
constexpr std::uint32_t pad() {
  return lane_bytes<T>() == 2 ? 8 : 4;
}
constexpr std::uint32_t kChunk = 8;  // elements per 16-byte copy of f16/bf16 (two of f32)

/// Starts copying rows [row0, row0 + Rows) × columns [col0, col0 + Cols) of the row-major matrix
/// `src` (`height` × `width`) to `tile` at `base` (rows `pitch` elements apart) with 16-byte
/// asynchronous copies, zeros outside the matrix. Needs width % 8 == 0: a 16-byte piece is then
/// in or out of the matrix as a whole.
template <class T, std::uint32_t Rows, std::uint32_t Cols>
void start_tile_copy(const Tensor<T>& src, const Expr<u32>& height, const Expr<u32>& width,
                     const Shared<T>& tile, std::uint32_t pitch, const Expr<u32>& base,
                     const Expr<u32>& row0, const Expr<u32>& col0) {
  constexpr std::uint32_t kW = 16 / lane_bytes<T>();  // elements per copy
  constexpr std::uint32_t kCopies = Rows * Cols / kW / kThreads;
  static_assert(Rows * Cols % (kW * kThreads) == 0, "whole copies per thread");
  for (std::uint32_t j = 0; j < kCopies; ++j) {
    auto v = thread_id<0>() + j * kThreads;
    auto r = v / (Cols / kW);
    auto c = v % (Cols / kW) * kW;
    auto inside = row0 + r < height && col0 + c < width;
    auto at = select(inside, (row0 + r) * width + col0 + c, 0u);
    copy_async<kW>(tile[base + r * pitch + c], src[at], inside);
  }
}

/// Copies rows [row0, row0 + rows) × columns [col0, col0 + cols) of the row-major matrix `src`
/// (`height` × `width`) to `tile` (pitch `pitch`) element by element, zeros outside the matrix:
/// the path for any width.
template <class T>
void copy_tile(const Tensor<T>& src, const Expr<u32>& height, const Expr<u32>& width,
               const Shared<T>& tile, std::uint32_t pitch, const Expr<u32>& row0,
               const Expr<u32>& col0, std::uint32_t rows, std::uint32_t cols) {
  for (auto v : range(thread_id<0>(), rows * cols, group_size<0>())) {
    auto r = v / cols;
    auto c = v % cols;
    IRON_IF(row0 + r < height && col0 + c < width) {
      store(tile[r * pitch + c], load(src[(row0 + r) * width + col0 + c]));
    }
    IRON_ELSE { store(tile[r * pitch + c], 0.0f); }
  }
}

}  // namespace

IRON_KERNEL_TEMPLATE(iron_gemm, (MatrixLayout B_LAYOUT),
                     (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> m, Constexpr<u32> n,
                      Constexpr<u32> k, Constexpr<f32> alpha)) {
  constexpr std::uint32_t kBK = step_k<T>();
  constexpr std::uint32_t kPitchA = kBK + pad<T>();
  constexpr bool kb_rows = B_LAYOUT == row_major;  // b is [k, n]
  constexpr std::uint32_t kPitchB = kb_rows ? kBN + pad<T>() : kBK + pad<T>();
  dispatch(tiled, {exactly(kThreads)});
  static_assert(kBM == 128 && kBN == 64, "the grid rule below counts tiles of 64 x 128");
  grid("[ceil_div(n, 64), ceil_div(m, 128), 1]");
  layout(a, "[m, k]");
  layout(b, kb_rows ? "[k, n]" : "[n, k]");
  layout(out, "[m, n]");

  // Two stages of each tile: one being multiplied while the next one's copies land.
  constexpr std::uint32_t kStageA = kBM * kPitchA;
  constexpr std::uint32_t kStageB = kb_rows ? kBK * kPitchB : kBN * kPitchB;
  auto tile_a = shared<T>(2 * kStageA);
  auto tile_b = shared<T>(2 * kStageB);
  auto row0 = program_id<1>() * kBM;
  auto col0 = program_id<0>() * kBN;
  auto warp = simdgroup_id();
  auto warp_row = warp / (kBN / kWN) * kWM;
  auto warp_col = warp % (kBN / kWN) * kWN;

  FragAcc<kWM, kWN> acc;
  FragA<T, kWM, 16> fa;
  FragB<T, 16, kWN> fb;
  // Multiplies the stage at `a0`, `b0` in shared memory into each simdgroup's accumulator.
  const auto multiply = [&](const Expr<u32>& a0, const Expr<u32>& b0) {
    for (std::uint32_t kk = 0; kk < kBK; kk += 16) {
      fa.load(tile_a, a0 + warp_row * kPitchA + kk, kPitchA);
      if constexpr (kb_rows) {
        fb.load(tile_b, b0 + kk * kPitchB + warp_col, kPitchB);
      } else {
        fb.load(tile_b, b0 + warp_col * kPitchB + kk, kPitchB, col_major);
      }
      mma(acc, fa, fb);
    }
  };
  auto b_width = kb_rows ? Expr<u32>(n) : Expr<u32>(k);
  IRON_IF(k % kChunk == 0u && b_width % kChunk == 0u) {
    // Whole 16-byte pieces: step p0 + kBK's tiles are copied asynchronously while step p0's
    // are multiplied.
    const auto start = [&](const Expr<u32>& p0, const Expr<u32>& stage) {
      start_tile_copy<T, kBM, kBK>(a, m, k, tile_a, kPitchA, stage * kStageA, row0, p0);
      if constexpr (kb_rows) {
        start_tile_copy<T, kBK, kBN>(b, k, n, tile_b, kPitchB, stage * kStageB, p0, col0);
      } else {
        start_tile_copy<T, kBN, kBK>(b, n, k, tile_b, kPitchB, stage * kStageB, col0, p0);
      }
    };
    start(Expr<u32>(0u), Expr<u32>(0u));
    async_commit();
    for (auto p0 : range(0u, k, kBK)) {
      auto stage = p0 / kBK % 2u;
      IRON_IF(p0 + kBK < k) { start(p0 + kBK, 1u - stage); }
      async_commit();  // a group every step, empty at the last: the wait below counts on it
      async_wait(1);   // this step's tiles have landed
      barrier();
      multiply(stage * kStageA, stage * kStageB);
      barrier();  // every simdgroup is done with the stage the next step copies into
    }
  }
  IRON_ELSE {
    for (auto p0 : range(0u, k, kBK)) {
      copy_tile<T>(a, m, k, tile_a, kPitchA, row0, p0, kBM, kBK);
      if constexpr (kb_rows) {
        copy_tile<T>(b, k, n, tile_b, kPitchB, p0, col0, kBK, kBN);
      } else {
        copy_tile<T>(b, n, k, tile_b, kPitchB, col0, p0, kBN, kBK);
      }
      barrier();
      multiply(Expr<u32>(0u), Expr<u32>(0u));
      barrier();
    }
  }
  // Each lane writes the elements it holds, where they fall inside out.
  for (std::uint32_t slot = 0; slot < FragAcc<kWM, kWN>::elements; ++slot) {
    auto r = row0 + warp_row + acc.row(slot);
    auto c = col0 + warp_col + acc.col(slot);
    IRON_IF(r < m && c < n) { store(out[r * n + c], cast<T>(acc.get(slot) * alpha)); }
  }
}
IRON_KERNEL_VARIANT(iron_gemm, kn, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_gemm, nk, MatrixLayout::ColMajor);

namespace {
/// A group per 128×64 tile of out, in both layouts.
dsl::Geometry gemm_geometry(const dsl::GeometryQuery& q) {
  const auto tiles = [](std::uint64_t size, std::uint64_t tile) {
    return static_cast<std::uint32_t>(std::max<std::uint64_t>((size + tile - 1) / tile, 1));
  };
  return {{tiles(q.constant("n"), kBN), tiles(q.constant("m"), kBM), 1}, {kThreads, 1, 1}};
}
}  // namespace
IRON_GEOMETRY(iron_gemm_kn) { return gemm_geometry(q); }
IRON_GEOMETRY(iron_gemm_nk) { return gemm_geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition, in double: out[i, j] = alpha · Σ_p a[i, p] · b(p, j).
std::vector<float> gemm_oracle(const std::vector<float>& a, const std::vector<float>& b,
                               std::size_t m, std::size_t n, std::size_t k, bool b_rows,
                               double alpha) {
  std::vector<float> out(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        sum += double(a[i * k + p]) * double(b_rows ? b[p * n + j] : b[j * k + p]);
      }
      out[i * n + j] = static_cast<float>(alpha * sum);
    }
  }
  return out;
}

/// The largest Σ_p |a[i, p] · b(p, j)|: the scale of the error bound.
double max_abs_dot(const std::vector<float>& a, const std::vector<float>& b, std::size_t m,
                   std::size_t n, std::size_t k, bool b_rows) {
  std::vector<float> abs_a(a.size());
  std::vector<float> abs_b(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) abs_a[i] = std::fabs(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) abs_b[i] = std::fabs(b[i]);
  const std::vector<float> sums = gemm_oracle(abs_a, abs_b, m, n, k, b_rows, 1.0);
  return sums.empty() ? 0.0 : *std::max_element(sums.begin(), sums.end());
}

testing::TestSetup gemm_setup(bool b_rows, std::size_t m, std::size_t n, std::size_t k, DType dt,
                              testing::Rng& rng, double alpha = 1.0) {
  const auto a = testing::round_through(rng.uniform(m * k, -1.0f, 1.0f), dt);
  const auto b = testing::round_through(rng.uniform(k * n, -1.0f, 1.0f), dt);
  testing::TestSetup setup(b_rows ? "iron_gemm_kn" : "iron_gemm_nk", dt);
  setup.input("a", a)
      .input("b", b)
      .output("out", m * n)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .constant("alpha", alpha)
      .expect("out", gemm_oracle(a, b, m, n, k, b_rows, alpha))
      .tolerance(testing::tolerance::stored(
          dt, testing::tolerance::gamma(k) * alpha * max_abs_dot(a, b, m, n, k, b_rows),
          testing::tolerance::gamma(1)));
  return setup.grid(testing::geometry_grid(setup));
}

/// The bench: random a and b, the grid from the geometry, cuBLAS computing the same product.
bench::BenchSetup gemm_bench(bool b_rows, std::size_t m, std::size_t n, std::size_t k, DType dt) {
  bench::BenchSetup setup(b_rows ? "iron_gemm_kn" : "iron_gemm_nk", dt);
  setup.random("a", m * k)
      .random("b", k * n)
      .output("out", m * n)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .constant("alpha", 1.0);
  bench::LibraryReference gemm;
  gemm.name = b_rows ? "a @ b (cuBLAS)" : "a @ bT (cuBLAS)";
  gemm.m = static_cast<std::uint32_t>(m);
  gemm.n = static_cast<std::uint32_t>(n);
  gemm.k = static_cast<std::uint32_t>(k);
  gemm.a.input = "a";
  gemm.b.input = "b";
  gemm.b_transposed = !b_rows;
  gemm.output = "out";
  // Both round one f32 sum of k products, summed in different orders, to T.
  gemm.tolerance = {0.05, 0.02};
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((m * k + k * n + m * n) * dtype_size(dt))
      .flops(2 * m * n * k)
      .peer(b_rows ? "gemm_kn" : "gemm_nk", {{"m", static_cast<double>(m)},
                                             {"n", static_cast<double>(n)},
                                             {"k", static_cast<double>(k)}})
      .library_reference(std::move(gemm));
}

}  // namespace

// Whole tiles, several steps of k.
IRON_TEST(iron_gemm_kn, tiles_256x128x96, F32, F16, BF16) {
  return gemm_setup(true, 256, 128, 96, dt, rng);
}
IRON_TEST(iron_gemm_nk, tiles_256x128x96, F32, F16, BF16) {
  return gemm_setup(false, 256, 128, 96, dt, rng);
}
// Sizes just past a tile (and k past a step) with a scale.
IRON_TEST(iron_gemm_kn, past_a_tile_129x65x40, F32, F16, BF16) {
  return gemm_setup(true, 129, 65, 40, dt, rng, 0.5);
}
IRON_TEST(iron_gemm_nk, past_a_tile_129x65x40, F32, F16, BF16) {
  return gemm_setup(false, 129, 65, 40, dt, rng, 0.5);
}
// Primes: every copy takes the element-by-element path.
IRON_TEST(iron_gemm_kn, primes_37x23x19, F32, F16, BF16) {
  return gemm_setup(true, 37, 23, 19, dt, rng);
}
IRON_TEST(iron_gemm_nk, primes_37x23x19, F32, F16, BF16) {
  return gemm_setup(false, 37, 23, 19, dt, rng);
}
// One row, one column, one step of k of one.
IRON_TEST(iron_gemm_kn, ones_1x1x1, F32, F16, BF16) { return gemm_setup(true, 1, 1, 1, dt, rng); }
IRON_TEST(iron_gemm_nk, vector_1x200x8, F32, F16, BF16) {
  return gemm_setup(false, 1, 200, 8, dt, rng);
}

// Square products.
IRON_BENCH(iron_gemm_kn, m4096_n4096_k4096, F16, BF16) {
  return gemm_bench(true, 4096, 4096, 4096, dt);
}
IRON_BENCH(iron_gemm_nk, m4096_n4096_k4096, F16, BF16) {
  return gemm_bench(false, 4096, 4096, 4096, dt);
}
IRON_BENCH(iron_gemm_nk, m8192_n8192_k8192, BF16) {
  return gemm_bench(false, 8192, 8192, 8192, dt);
}
// A linear layer's shapes (weight [n, k]): decode (16 tokens), a small and a large batch.
IRON_BENCH(iron_gemm_nk, m16_n14336_k4096, BF16) { return gemm_bench(false, 16, 14336, 4096, dt); }
IRON_BENCH(iron_gemm_nk, m128_n14336_k4096, BF16) {
  return gemm_bench(false, 128, 14336, 4096, dt);
}
IRON_BENCH(iron_gemm_nk, m4096_n14336_k4096, BF16) {
  return gemm_bench(false, 4096, 14336, 4096, dt);
}
IRON_BENCH(iron_gemm_nk, m16_n4096_k14336, BF16) { return gemm_bench(false, 16, 4096, 14336, dt); }
IRON_BENCH(iron_gemm_nk, m128_n4096_k14336, BF16) {
  return gemm_bench(false, 128, 4096, 14336, dt);
}
IRON_BENCH(iron_gemm_nk, m4096_n4096_k14336, BF16) {
  return gemm_bench(false, 4096, 4096, 14336, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
