/// iron_hadamard_n{64,128,256,512,1024}: out[r, :] = H_N x[r, :] / sqrt(N), the normalized
/// Walsh–Hadamard transform of each row (used to spread outliers before quantization).
///
/// H_N is the Sylvester (natural-order) Hadamard matrix, H_N[i, j] = (-1)^popcount(i & j),
/// H_2N = [[H_N, H_N], [H_N, -H_N]]; no sequency or bit-reversal reordering. With the 1/sqrt(N)
/// factor the transform is orthonormal and its own inverse.
///
/// The fast transform is log2(N) butterfly stages, all in f32: stage h pairs element j with
/// j ^ h as (a + b, a - b). Thread t of the group holds elements j = k * TPG + t (k < N / TPG,
/// in registers), so a row is loaded and stored once with coalesced accesses and the stage h
/// runs where its pairs are: h < 32 across lanes (simd_shuffle_xor), 32 <= h < TPG across
/// simdgroups through threadgroup memory with barriers, h >= TPG inside the thread.
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
/// Reduction: one group per row (`rows` groups) of exactly TPG threads, TPG fixed per variant:
/// n64, n128, n256: 32 (no threadgroup memory); n512: 64; n1024: 128.
#include <algorithm>
#include <bit>
#include <cmath>
#include <iron/iron.hpp>
#include <span>
#include <vector>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL_TEMPLATE(iron_hadamard, (u32 N, u32 TPG), (Tensor<T> inp, Out<T> out)) {
  static_assert(std::has_single_bit(N) && std::has_single_bit(TPG) && TPG >= 32 && TPG <= N);
  constexpr u32 per_thread = N / TPG;
  dispatch(reduction, {exactly(TPG)});
  grid("[any, 1, 1]");
  const std::string rows_of_n = "[groups.x, " + std::to_string(N) + "]";
  layout(inp, rows_of_n);
  layout(out, rows_of_n);
  auto base = program_id<0>() * N;
  auto tid = thread_id<0>();

  std::vector<Expr<f32>> x;
  for (u32 k = 0; k < per_thread; ++k) x.push_back(cast<f32>(load(inp[base + k * TPG + tid])));

  // Stages h = 1 .. 16: the partner of element j is in lane lane ^ h, same k.
  auto lane = lane_id();
  for (u32 h = 1; h < 32; h *= 2) {
    auto upper = (lane & h) != 0u;
    for (auto& v : x) {
      auto partner = simd_shuffle_xor(v, h);
      v = select(upper, partner - v, v + partner);
    }
  }

  // Stages h = 32 .. TPG / 2: the partner is thread tid ^ h of another simdgroup, same k.
  if constexpr (TPG > 32) {
    auto exchange = shared<f32>(N);
    for (u32 h = 32; h < TPG; h *= 2) {
      for (u32 k = 0; k < per_thread; ++k) store(exchange[k * TPG + tid], x[k]);
      barrier();
      auto upper = (tid & h) != 0u;
      for (u32 k = 0; k < per_thread; ++k) {
        auto partner = load(exchange[k * TPG + (tid ^ h)]);
        x[k] = select(upper, partner - x[k], x[k] + partner);
      }
      barrier();
    }
  }

  // Stages h = TPG .. N / 2: both elements are in this thread, k and k + h / TPG.
  for (u32 s = 1; s < per_thread; s *= 2) {
    for (u32 k = 0; k < per_thread; ++k) {
      if ((k & s) != 0) continue;
      auto a = x[k];
      x[k] = a + x[k + s];
      x[k + s] = a - x[k + s];
    }
  }

  const f32 norm = 1.0f / std::sqrt(static_cast<f32>(N));
  for (u32 k = 0; k < per_thread; ++k) store(out[base + k * TPG + tid], cast<T>(x[k] * norm));
}
IRON_KERNEL_VARIANT(iron_hadamard, n64, 64, 32);
IRON_KERNEL_VARIANT(iron_hadamard, n128, 128, 32);
IRON_KERNEL_VARIANT(iron_hadamard, n256, 256, 32);
IRON_KERNEL_VARIANT(iron_hadamard, n512, 512, 64);
IRON_KERNEL_VARIANT(iron_hadamard, n1024, 1024, 128);

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
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
  return testing::TestSetup(kernel, dt)
      .input("inp", xr)
      .output("out", x.size())
      .expect("out", hadamard_oracle(xr, rows, n))
      .tolerance(tol::stored(dt, sum_error, tol::gamma(2)))
      .grid_rows(static_cast<std::uint32_t>(rows), tpg);
}

/// 5 rows of standard normal values.
testing::TestSetup random_rows(const std::string& kernel, std::size_t n, std::uint32_t tpg,
                               DType dt, testing::Rng& rng) {
  return hadamard_setup(kernel, n, tpg, rng.normal(5 * n), dt);
}

/// Row i is the unit vector e_p for p = 0, 1, N - 1 and a few in between, scaled by 1000: the
/// output row is column p of H_N times 1000 / sqrt(N), which pins the ordering, every sign and
/// the normalization.
testing::TestSetup basis_rows(const std::string& kernel, std::size_t n, std::uint32_t tpg,
                              DType dt) {
  const std::vector<std::size_t> positions = {0, 1, n - 1, n / 2, n / 2 - 1, 33 % n, 37 % n};
  std::vector<float> x(positions.size() * n, 0.0f);
  for (std::size_t r = 0; r < positions.size(); ++r) x[r * n + positions[r]] = 1000.0f;
  return hadamard_setup(kernel, n, tpg, x, dt);
}

bench::BenchSetup hadamard_bench(const std::string& kernel, std::size_t n, std::uint32_t tpg,
                                 DType dt) {
  const std::size_t rows = 16384;
  return bench::BenchSetup(kernel, dt)
      .random("inp", rows * n)
      .output("out", rows * n)
      .grid_rows(static_cast<std::uint32_t>(rows), tpg)
      .bytes_moved(2 * rows * n * dtype_size(dt))
      // log2(N) additions and one multiplication per element.
      .flops(rows * n * static_cast<std::size_t>(std::bit_width(n)))
      .peer("hadamard", {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}});
}

}  // namespace

IRON_TEST(iron_hadamard_n64, rows_5, F32, F16, BF16) {
  return random_rows("iron_hadamard_n64", 64, 32, dt, rng);
}
IRON_TEST(iron_hadamard_n64, basis_rows, F32, F16, BF16) {
  return basis_rows("iron_hadamard_n64", 64, 32, dt);
}
IRON_TEST(iron_hadamard_n128, rows_5, F32, F16, BF16) {
  return random_rows("iron_hadamard_n128", 128, 32, dt, rng);
}
IRON_TEST(iron_hadamard_n128, basis_rows, F32, F16, BF16) {
  return basis_rows("iron_hadamard_n128", 128, 32, dt);
}
IRON_TEST(iron_hadamard_n256, rows_5, F32, F16, BF16) {
  return random_rows("iron_hadamard_n256", 256, 32, dt, rng);
}
IRON_TEST(iron_hadamard_n256, basis_rows, F32, F16, BF16) {
  return basis_rows("iron_hadamard_n256", 256, 32, dt);
}
IRON_TEST(iron_hadamard_n512, rows_5, F32, F16, BF16) {
  return random_rows("iron_hadamard_n512", 512, 64, dt, rng);
}
IRON_TEST(iron_hadamard_n512, basis_rows, F32, F16, BF16) {
  return basis_rows("iron_hadamard_n512", 512, 64, dt);
}
IRON_TEST(iron_hadamard_n1024, rows_5, F32, F16, BF16) {
  return random_rows("iron_hadamard_n1024", 1024, 128, dt, rng);
}
IRON_TEST(iron_hadamard_n1024, basis_rows, F32, F16, BF16) {
  return basis_rows("iron_hadamard_n1024", 1024, 128, dt);
}

// One row of values up to ±1e4 (outputs near 2e4 stay inside f16): the absolute error grows
// with the magnitude, and the shared-memory stages of n1024 see a single group.
IRON_TEST(iron_hadamard_n1024, single_row_large_magnitude, F32, F16, BF16) {
  return hadamard_setup("iron_hadamard_n1024", 1024, 128, rng.uniform(1024, -1e4f, 1e4f), dt);
}
IRON_TEST(iron_hadamard_n64, single_row_large_magnitude, F32, F16, BF16) {
  return hadamard_setup("iron_hadamard_n64", 64, 32, rng.uniform(64, -1e4f, 1e4f), dt);
}

IRON_BENCH(iron_hadamard_n64, rows16384, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n64", 64, 32, dt);
}
IRON_BENCH(iron_hadamard_n128, rows16384, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n128", 128, 32, dt);
}
IRON_BENCH(iron_hadamard_n256, rows16384, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n256", 256, 32, dt);
}
IRON_BENCH(iron_hadamard_n512, rows16384, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n512", 512, 64, dt);
}
IRON_BENCH(iron_hadamard_n1024, rows16384, F32, F16, BF16) {
  return hadamard_bench("iron_hadamard_n1024", 1024, 128, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
