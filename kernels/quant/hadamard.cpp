/// iron_hadamard_n{64,128,256,512,1024}: out[r, :] = H_N x[r, :] / sqrt(N), the normalized
/// Walsh–Hadamard transform of each row (used to spread outliers before quantization).
///
/// H_N is the Sylvester (natural-order) Hadamard matrix, H_N[i, j] = (-1)^popcount(i & j),
/// H_2N = [[H_N, H_N], [H_N, -H_N]]; no sequency or bit-reversal reordering. With the 1/sqrt(N)
/// factor the transform is orthonormal and its own inverse.
///
/// The fast transform is log2(N) butterfly stages, all in f32: stage h pairs element j with
/// j ^ h as (a + b, a - b). Each stage acts on one bit of j, so the stages commute and run in
/// whichever order suits where their pairs are. A row belongs to L = max(2, N / 32) consecutive
/// lanes of one simdgroup, each holding K = N / L = 32 of its elements as runs of V consecutive
/// ones (V = 16 bytes of T): lane l holds j = (c·L + l)·V + v for c < K / V, v < V. So every
/// access is 16 bytes wide, a row's L lanes read and write whole 32-byte sectors, and a group of
/// tpg threads transforms tpg / L rows with no threadgroup memory and no barrier. Stage h runs
/// inside the thread when h < V or h ≥ L·V, and across lanes (simd_shuffle_xor by h / V)
/// otherwise: log2(L) stages of one shuffle per element (1 for n64, 5 for n1024).
///
/// ## Error bound
/// Each output is a sum of the row's N terms ±x_j through log2(N) butterfly additions (fewer when
/// the row has fewer nonzero terms: adding 0 is exact), then one product by the rounded
/// 1/sqrt(N): |err| ≤ γ_{log2 N}·Σ_j |x[r, j]| / sqrt(N) + γ_2·|out| (u = 2^-24), then the
/// rounding to T: 2^-11 (f16) or 2^-8 (bf16) relative.
///
/// ## Layout
/// - `inp [rows, N]` T
/// - `out [rows, N]` T
///
/// ## Dispatch
/// Reduction: ceil(rows · L / tpg) groups of tpg threads, tpg a multiple of 32 up to 1024
/// (L = 2, 4, 8, 16, 32 for n64 … n1024); the geometry picks tpg. Lanes past the last row
/// transform the last row again (their shuffles need every lane) and store nothing.
#include <algorithm>
#include <bit>
#include <cmath>
#include <iron/iron.hpp>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace iron::kernels {
using namespace iron::dsl;

namespace {

/// Lanes sharing one row of N: each holds 32 elements, and a row has at least two lanes, whose
/// 16-byte accesses then fill a 32-byte sector.
constexpr u32 hadamard_lanes(u32 n) { return std::max<u32>(2, n / 32); }

}  // namespace

IRON_KERNEL_TEMPLATE(iron_hadamard, (u32 N), (Tensor<T> inp, Out<T> out, Constexpr<u32> rows)) {
  constexpr u32 V = std::is_same_v<T, f32> ? 4 : 8;  // elements in 16 bytes
  constexpr u32 L = hadamard_lanes(N);
  constexpr u32 K = N / L;
  static_assert(std::has_single_bit(N) && N >= 64 && N <= 1024 && K % V == 0);
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[ceil_div(rows * " + std::to_string(L) + ", tpg), 1, 1]");
  const std::string rows_of_n = "[rows, " + std::to_string(N) + "]";
  layout(inp, rows_of_n);
  layout(out, rows_of_n);
  auto tid = thread_id<0>();
  auto row = program_id<0>() * (group_size<0>() / L) + tid / L;
  // Lanes past the last row read the last row: every lane must join the shuffles.
  auto first = min(row, rows - 1u) * N + (tid & (L - 1)) * V;

  std::vector<Expr<f32>> x;  // x[c * V + v] is element (c * L + l) * V + v of the row
  for (u32 c = 0; c < K / V; ++c) {
    for (u32 v = 0; v < V; ++v) x.push_back(cast<f32>(load(inp[first + (c * L * V + v)])));
  }

  // Stages inside the thread: bit s of c * V + v is bit s of j below V, a bit above the lanes'
  // from V on.
  for (u32 s = 1; s < K; s *= 2) {
    for (u32 e = 0; e < K; ++e) {
      if ((e & s) != 0) continue;
      auto a = x[e];
      x[e] = a + x[e + s];
      x[e + s] = a - x[e + s];
    }
  }

  // Stages across the row's lanes: the partner of lane l is lane l ^ h, same element. The upper
  // lane keeps partner - own, the lower own + partner: fma(own, ±1, partner), exact.
  auto lane = lane_id();
  for (u32 h = 1; h < L; h *= 2) {
    auto sign = select((lane & h) != 0u, Expr<f32>(-1.0f), Expr<f32>(1.0f));
    for (auto& v : x) v = fma(v, sign, simd_shuffle_xor(v, h));
  }

  const f32 norm = 1.0f / std::sqrt(static_cast<f32>(N));
  IRON_IF(row < rows) {
    for (u32 c = 0; c < K / V; ++c) {
      for (u32 v = 0; v < V; ++v) {
        store(out[first + (c * L * V + v)], cast<T>(x[c * V + v] * norm));
      }
    }
  }
}
IRON_KERNEL_VARIANT(iron_hadamard, n64, 64);
IRON_KERNEL_VARIANT(iron_hadamard, n128, 128);
IRON_KERNEL_VARIANT(iron_hadamard, n256, 256);
IRON_KERNEL_VARIANT(iron_hadamard, n512, 512);
IRON_KERNEL_VARIANT(iron_hadamard, n1024, 1024);

namespace {

/// Groups of 256 threads (256 / L rows each), fewer threads when that leaves the device with
/// under two groups per multiprocessor, down to one simdgroup.
Geometry hadamard_geometry(const GeometryQuery& q, u32 n) {
  const std::uint64_t threads = q.constant("rows") * hadamard_lanes(n);
  std::uint32_t tpg = 256;
  while (tpg > 32 && threads < std::uint64_t{2} * q.device.multiprocessors * tpg) tpg /= 2;
  tpg = q.threads_per_group(tpg);
  return Geometry::elementwise(threads, tpg);
}

}  // namespace

IRON_GEOMETRY(iron_hadamard_n64) { return hadamard_geometry(q, 64); }
IRON_GEOMETRY(iron_hadamard_n128) { return hadamard_geometry(q, 128); }
IRON_GEOMETRY(iron_hadamard_n256) { return hadamard_geometry(q, 256); }
IRON_GEOMETRY(iron_hadamard_n512) { return hadamard_geometry(q, 512); }
IRON_GEOMETRY(iron_hadamard_n1024) { return hadamard_geometry(q, 1024); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition, in double: a plain O(N^2) sum with the Sylvester sign (-1)^popcount(i & j).
std::vector<float> hadamard_oracle(const std::vector<float>& x, std::size_t rows, std::size_t n) {
  std::vector<float> y(x.size());
  const double norm = 1.0 / std::sqrt(static_cast<double>(n));
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        const double v = x[r * n + j];
        sum += std::popcount(i & j) % 2 == 0 ? v : -v;
      }
      y[r * n + i] = static_cast<float>(sum * norm);
    }
  }
  return y;
}

/// The Sylvester matrix H_n itself, row-major, entries ±1: the library reference's operand.
std::vector<float> sylvester(std::size_t n) {
  std::vector<float> h(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) h[i * n + j] = std::popcount(i & j) % 2 == 0 ? 1.0f : -1.0f;
  }
  return h;
}

/// `x` (whole rows of n) transformed by `kernel` in groups of `tpg` threads: ceil(rows · L / tpg)
/// groups, the last one partly past the last row unless rows · L is a multiple of tpg.
testing::TestSetup hadamard_setup(const std::string& kernel, std::size_t n, std::uint32_t tpg,
                                  const std::vector<float>& x, DType dt) {
  const std::size_t rows = x.size() / n;
  const auto xr = testing::round_through(x, dt);
  namespace tol = testing::tolerance;
  std::size_t nonzeros = 0;  // the most in a row
  for (std::size_t r = 0; r < rows; ++r) {
    const auto row = std::span(xr).subspan(r * n, n);
    nonzeros = std::max<std::size_t>(
        nonzeros, std::count_if(row.begin(), row.end(), [](float v) { return v != 0.0f; }));
  }
  const std::size_t depth =
      std::min<std::size_t>(std::bit_width(n) - 1, std::max<std::size_t>(nonzeros, 1) - 1);
  const double sum_error =
      tol::sum_error(depth, tol::max_row_abs_sum(xr, rows, n)) / std::sqrt(static_cast<double>(n));
  const std::size_t threads = rows * hadamard_lanes(static_cast<u32>(n));
  return testing::TestSetup(kernel, dt)
      .input("inp", xr)
      .output("out", x.size())
      .constant("rows", static_cast<double>(rows))
      .expect("out", hadamard_oracle(xr, rows, n))
      .tolerance(tol::stored(dt, sum_error, tol::gamma(2)))
      .grid(runtime::Grid::elementwise(threads, tpg));
}

/// `rows` rows of standard normal values.
testing::TestSetup random_rows(const std::string& kernel, std::size_t n, std::size_t rows,
                               std::uint32_t tpg, DType dt, testing::Rng& rng) {
  return hadamard_setup(kernel, n, tpg, rng.normal(rows * n), dt);
}

/// Row i is the unit vector e_p for p = 0, 1, N - 1 and a few in between, scaled by 1000: the
/// output row is column p of H_N times 1000 / sqrt(N), which pins the ordering, every sign and
/// the normalization.
testing::TestSetup basis_rows(const std::string& kernel, std::size_t n, DType dt) {
  const std::vector<std::size_t> positions = {0, 1, n - 1, n / 2, n / 2 - 1, 33 % n, 37 % n};
  std::vector<float> x(positions.size() * n, 0.0f);
  for (std::size_t r = 0; r < positions.size(); ++r) x[r * n + positions[r]] = 1000.0f;
  return hadamard_setup(kernel, n, 32, x, dt);
}

/// The bench: `rows` rows of n, the grid from the geometry, and cuBLAS computing the same
/// transform as a product with H_n (entries ±1, exact in every dtype; 1/sqrt(n) as alpha).
bench::BenchSetup hadamard_bench(const std::string& kernel, std::size_t n, std::size_t rows,
                                 DType dt) {
  bench::BenchSetup setup(kernel, dt);
  setup.random("inp", rows * n).output("out", rows * n).constant("rows", static_cast<double>(rows));
  const auto size = static_cast<std::uint32_t>(n);
  bench::LibraryReference gemm;
  gemm.name = "x @ H (cuBLAS)";
  gemm.m = static_cast<std::uint32_t>(rows);
  gemm.n = size;
  gemm.k = size;
  gemm.a.input = "inp";
  gemm.b.values = sylvester(n);
  gemm.output = "out";
  gemm.alpha = static_cast<float>(1.0 / std::sqrt(static_cast<double>(n)));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * rows * n * dtype_size(dt))
      // log2(N) additions and one multiplication per element.
      .flops(rows * n * static_cast<std::size_t>(std::bit_width(n)))
      .peer("hadamard", {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}})
      .library_reference(std::move(gemm));
}

}  // namespace

// 5 rows in groups of 32 threads (32 / L rows each: 16 for n64 down to 2 for n512) and, for
// n1024, of 64 (two rows each): the last group partly past the last row.
IRON_TEST(iron_hadamard_n64, rows_5, F32, F16, BF16) {
  return random_rows("iron_hadamard_n64", 64, 5, 32, dt, rng);
}
IRON_TEST(iron_hadamard_n64, basis_rows, F32, F16, BF16) {
  return basis_rows("iron_hadamard_n64", 64, dt);
}
IRON_TEST(iron_hadamard_n128, rows_5, F32, F16, BF16) {
  return random_rows("iron_hadamard_n128", 128, 5, 32, dt, rng);
}
IRON_TEST(iron_hadamard_n128, basis_rows, F32, F16, BF16) {
  return basis_rows("iron_hadamard_n128", 128, dt);
}
IRON_TEST(iron_hadamard_n256, rows_5, F32, F16, BF16) {
  return random_rows("iron_hadamard_n256", 256, 5, 32, dt, rng);
}
IRON_TEST(iron_hadamard_n256, basis_rows, F32, F16, BF16) {
  return basis_rows("iron_hadamard_n256", 256, dt);
}
IRON_TEST(iron_hadamard_n512, rows_5, F32, F16, BF16) {
  return random_rows("iron_hadamard_n512", 512, 5, 32, dt, rng);
}
IRON_TEST(iron_hadamard_n512, basis_rows, F32, F16, BF16) {
  return basis_rows("iron_hadamard_n512", 512, dt);
}
IRON_TEST(iron_hadamard_n1024, rows_5, F32, F16, BF16) {
  return random_rows("iron_hadamard_n1024", 1024, 5, 64, dt, rng);
}
IRON_TEST(iron_hadamard_n1024, basis_rows, F32, F16, BF16) {
  return basis_rows("iron_hadamard_n1024", 1024, dt);
}

// Several full groups and a ragged last one: 37 rows of n64 in groups of 32 threads (16 rows
// each: 3 groups, the last with 5 rows); 13 rows of n256 (L = 8) in groups of 32 (4 rows each).
IRON_TEST(iron_hadamard_n64, rows_37_in_groups_of_32, F32, F16, BF16) {
  return random_rows("iron_hadamard_n64", 64, 37, 32, dt, rng);
}
IRON_TEST(iron_hadamard_n256, rows_13_in_groups_of_32, F32, F16, BF16) {
  return random_rows("iron_hadamard_n256", 256, 13, 32, dt, rng);
}

// One row of values up to ±1e4 (outputs near 2e4 stay inside f16): the absolute error grows
// with the magnitude, and every lane but the row's own transforms it again and stores nothing.
IRON_TEST(iron_hadamard_n1024, single_row_large_magnitude, F32, F16, BF16) {
  return hadamard_setup("iron_hadamard_n1024", 1024, 32, rng.uniform(1024, -1e4f, 1e4f), dt);
}
IRON_TEST(iron_hadamard_n64, single_row_large_magnitude, F32, F16, BF16) {
  return hadamard_setup("iron_hadamard_n64", 64, 32, rng.uniform(64, -1e4f, 1e4f), dt);
}

// 16384 rows: 4 MB (n64 bf16) to 128 MB (n1024 f32) moved, mostly too little for bandwidth to
// decide (iron_copy moving 8 MB reaches a third of the copy ceiling). 2^26 elements: 8192
// tokens × 8192 features in blocks of N, where it does.
IRON_BENCH(iron_hadamard_n64, rows16384, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n64", 64, 16384, dt);
}
IRON_BENCH(iron_hadamard_n128, rows16384, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n128", 128, 16384, dt);
}
IRON_BENCH(iron_hadamard_n256, rows16384, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n256", 256, 16384, dt);
}
IRON_BENCH(iron_hadamard_n512, rows16384, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n512", 512, 16384, dt);
}
IRON_BENCH(iron_hadamard_n1024, rows16384, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n1024", 1024, 16384, dt);
}
IRON_BENCH(iron_hadamard_n64, n64m, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n64", 64, (std::size_t{1} << 26) / 64, dt);
}
IRON_BENCH(iron_hadamard_n128, n64m, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n128", 128, (std::size_t{1} << 26) / 128, dt);
}
IRON_BENCH(iron_hadamard_n256, n64m, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n256", 256, (std::size_t{1} << 26) / 256, dt);
}
IRON_BENCH(iron_hadamard_n512, n64m, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n512", 512, (std::size_t{1} << 26) / 512, dt);
}
IRON_BENCH(iron_hadamard_n1024, n64m, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n1024", 1024, (std::size_t{1} << 26) / 1024, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
