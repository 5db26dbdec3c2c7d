/// Probe kernels of warpgroup products (docs/tensor-cores.md, "Warpgroup products"), on small
/// integers whose products and sums are exact in f32, so every target must give the simulator's
/// result bit for bit: wgmma on sm_90a, each simdgroup's own fragment products elsewhere.
///
/// - iron_wg_mma_probe_n<N>: out = a · bᵀ for a [64·G, 128] and b [N, 128] (a weight's [n, k]),
///   by G warpgroups of 128 threads, warpgroup g owning rows 64g … 64g + 63. Each of two 64-column
///   steps (16-bit; see below for f32) copies its tiles into shared memory in 128-byte swizzled
///   rows (asynchronous copies, then fence_async_proxy and a barrier) and multiplies them as two K
///   = 32 products, the second from column 32 of the rows. N = 192 with one warpgroup (the widest
///   whose tiles fit Metal's 32 KB), 64 with two, 8 (the narrowest) with one.
///
/// f32 operands (always fragment products, by the software strategy on CUDA) take 32-column
/// steps in 128-byte rows, one K = 32 product each, with N at most 64: wider f32 B fragments
/// spill.
///
/// ## Error bound
/// Exact: small integers.
///
/// ## Layout
/// - `a [64·G · 128]` T, `b [N · 128]` T, `out [64·G · N]` f32 (N = 64 for f32 in n192)
///
/// ## Dispatch
/// Tiled: one group of exactly 128·G threads.
#include <algorithm>
#include <iron/iron.hpp>
#include <string>

namespace iron::kernels {
using namespace iron::dsl;

namespace {

constexpr std::uint32_t kDepth = 128;  ///< k of the whole product: two steps
/// k of one step: one 128-byte row (64 16-bit elements, 32 f32 ones, so f32 tiles fit Metal).
template <class T>
constexpr std::uint32_t kStep = 128 / lane_bytes<T>();

/// Copies rows × kStep<T> elements of `src` (rows of kDepth, from column col0) into `tile`.
template <class T>
void copy_step(const Tensor<T>& src, const Shared<T>& tile, std::uint32_t rows,
               const Expr<u32>& col0, std::uint32_t threads) {
  constexpr std::uint32_t kW = 16 / lane_bytes<T>();  // elements of a 16-byte copy
  constexpr std::uint32_t kCols = kStep<T>;
  for (auto v : range(thread_id<0>(), rows * kCols / kW, threads)) {
    auto r = v / (kCols / kW);
    auto c = v % (kCols / kW) * kW;
    copy_async<kW>(tile[r * kCols + c], src[r * kDepth + col0 + c], true);
  }
}

}  // namespace

IRON_KERNEL_TEMPLATE(iron_wg_mma_probe, (std::uint32_t WIDTH, std::uint32_t GROUPS),
                     (Tensor<T> a, Tensor<T> b, Out<f32> out)) {
  constexpr std::uint32_t N = lane_bytes<T>() == 2 ? WIDTH : std::min(WIDTH, 64u);
  constexpr std::uint32_t kThreads = 128 * GROUPS;
  constexpr std::uint32_t kRows = 64 * GROUPS;
  dispatch(tiled, {exactly(kThreads)});
  grid("[1, 1, 1]");
  layout(a, "[" + std::to_string(kRows * kDepth) + "]");
  layout(b, "[" + std::to_string(N * kDepth) + "]");
  layout(out, "[" + std::to_string(kRows * N) + "]");
  constexpr std::uint32_t kCols = kStep<T>;
  auto tile_a = shared<T>(kRows * kCols, Swizzled{kCols});
  auto tile_b = shared<T>(N * kCols, Swizzled{kCols});
  auto group = simdgroup_id() / 4u;
  FragAcc<16, N> acc;
  for (auto k0 : range(0u, kDepth, kCols)) {
    copy_step<T>(a, tile_a, kRows, k0, kThreads);
    copy_step<T>(b, tile_b, N, k0, kThreads);
    async_commit();
    async_wait(0);
    fence_async_proxy();
    barrier();
    for (std::uint32_t half = 0; half < kCols; half += 32) {
      warpgroup_mma<32>(acc, tile_a, group * 64u * kCols + half, kCols, tile_b, half, kCols);
    }
    warpgroup_commit();
    warpgroup_wait(0, acc);
    barrier();
  }
  auto row0 = group * 64u + simdgroup_id() % 4u * 16u;
  for (std::uint32_t slot = 0; slot < FragAcc<16, N>::elements; ++slot) {
    store(out[(row0 + acc.row(slot)) * N + acc.col(slot)], acc.get(slot));
  }
}
IRON_KERNEL_VARIANT(iron_wg_mma_probe, n192, 192u, 1u);
IRON_KERNEL_VARIANT(iron_wg_mma_probe, n64, 64u, 2u);
IRON_KERNEL_VARIANT(iron_wg_mma_probe, n8, 8u, 1u);

IRON_GEOMETRY(iron_wg_mma_probe_n192) { return {{1, 1, 1}, {128, 1, 1}}; }
IRON_GEOMETRY(iron_wg_mma_probe_n64) { return {{1, 1, 1}, {256, 1, 1}}; }
IRON_GEOMETRY(iron_wg_mma_probe_n8) { return {{1, 1, 1}, {128, 1, 1}}; }

}  // namespace iron::kernels

// The tests: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <cmath>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {
namespace {

/// Integers in [-4, 4]: every product and every sum of 128 of them is exact in f32.
std::vector<float> small_integers(std::size_t n, testing::Rng& rng) {
  std::vector<float> x = rng.uniform(n, -4.0f, 5.0f);
  for (float& v : x) v = std::floor(v);
  return x;
}

testing::TestSetup wg_mma_probe(const std::string& kernel, std::size_t n, std::size_t groups,
                                DType dt, testing::Rng& rng) {
  const std::size_t rows = 64 * groups;
  const auto a = small_integers(rows * kDepth, rng);
  const auto b = small_integers(n * kDepth, rng);
  std::vector<float> want(rows * n);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (std::size_t p = 0; p < kDepth; ++p) sum += double{a[i * kDepth + p]} * b[j * kDepth + p];
      want[i * n + j] = static_cast<float>(sum);
    }
  }
  testing::TestSetup setup(kernel, dt);
  setup.input("a", a).input("b", b).output("out", rows * n).expect("out", want);
  setup.tolerance(testing::tolerance::exact());
  return setup.grid(testing::geometry_grid(setup));
}

}  // namespace

IRON_TEST(iron_wg_mma_probe_n192, small_integers, F32, F16, BF16) {
  return wg_mma_probe("iron_wg_mma_probe_n192", dt == DType::F32 ? 64 : 192, 1, dt, rng);
}
IRON_TEST(iron_wg_mma_probe_n64, two_warpgroups, F32, F16, BF16) {
  return wg_mma_probe("iron_wg_mma_probe_n64", 64, 2, dt, rng);
}
IRON_TEST(iron_wg_mma_probe_n8, narrowest, F16, BF16) {
  return wg_mma_probe("iron_wg_mma_probe_n8", 8, 1, dt, rng);
}

}  // namespace iron::kernels
#endif
