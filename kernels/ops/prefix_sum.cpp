/// iron_prefix_sum: out[r, j] = sum_{k ≤ j} x[r, k], an inclusive scan along each row.
///
/// The row is scanned in chunks of 16·tpg elements, in f32. Each chunk is read with coalesced
/// loads (16 independent ones per thread) into threadgroup memory; thread t then takes the 16
/// consecutive elements 16t … 16t + 15 and scans them serially, so one simdgroup scan (of the
/// threads' totals) serves 16 elements instead of one. A simdgroup adds the totals of the
/// simdgroups before it (read back from threadgroup memory) and the carry of earlier chunks;
/// the results go back to threadgroup memory and out with coalesced stores. Threadgroup rows
/// are padded by one word per 32 so that both the coalesced and the consecutive accesses are
/// free of bank conflicts. Three barriers per chunk: after the loads, after the simdgroup
/// totals, after the results.
///
/// ## Error bound
/// out[r, j] is a sum of its j + 1 terms in which each term passes through at most
/// d = ⌈n/(16·tpg)⌉ + 80 f32 additions: 15 in its thread's serial scan, 31 in the simdgroup's
/// exclusive scan of the thread totals and 1 into its simdgroup's total, 31 in the simd_sum of
/// the simdgroup totals (for the chunk's total, or the part before a simdgroup), one per later
/// chunk into the carry (⌈n/(16·tpg)⌉ − 1), and the three that add carry, the earlier
/// simdgroups, the earlier threads and the thread's own prefix; and at most j. So
/// |err| ≤ γ_d · Σ_{k ≤ j} |x[r, k]| (γ_d = d·u / (1 − d·u), u = 2^-24), then the rounding to T:
/// 2^-11 (f16) or 2^-8 (bf16) relative.
///
/// ## Layout
/// - `inp [rows, n]` T
/// - `out [rows, n]` T
///
/// ## Dispatch
/// Reduction: one group per row (`rows` groups), `tpg` threads with tpg a multiple of 32,
/// 32 ≤ tpg ≤ 256 (a chunk of 16·tpg f32 fills up to 16.5 KB of threadgroup memory). Any n ≥ 1.
#include <algorithm>
#include <iron/iron.hpp>
#include <vector>

namespace iron::kernels {
using namespace iron::dsl;

namespace {

constexpr u32 kPerThread = 16;  ///< consecutive elements a thread scans serially
constexpr u32 kMostThreads = 256;

}  // namespace

IRON_KERNEL(iron_prefix_sum, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(kMostThreads)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(out, "[groups.x, n]");
  constexpr u32 chunk_most = kPerThread * kMostThreads;
  auto base = program_id<0>() * n;
  auto tid = thread_id<0>();
  auto tpg = group_size<0>();
  auto lane = lane_id();
  auto simdgroup = simdgroup_id();
  // Element i of a chunk sits at i + i / 32: one pad word after every 32, so that 32 threads
  // reading 16 consecutive elements each hit 32 different banks. So element k·tpg + t sits at
  // k·(tpg + tpg / 32) + t + t / 32 (tpg is a multiple of 32), and 16t + k (k < 16) at
  // 16t + t / 2 + k.
  auto stage = shared<f32>(chunk_most + chunk_most / 32);
  auto padded_row = tpg + (tpg >> 5u);
  auto coalesced = tid + (tid >> 5u);
  auto own = tid * kPerThread + (tid >> 1u);
  auto totals = shared<f32>(32);  // simdgroup s's total at s

  Var<f32> carry = 0.0f;  // the sum of every earlier chunk, the same in every thread
  for (auto start : range(0u, n, tpg * kPerThread)) {
    // Coalesced: element k·tpg + t of the chunk; past the row's end, 0 (adds nothing). Every
    // load is issued before the first store waits for one.
    std::vector<Expr<f32>> loaded;
    for (u32 k = 0; k < kPerThread; ++k) {
      auto j = start + k * tpg + tid;
      auto v = cast<f32>(load(inp[base + min(j, n - 1u)]));
      loaded.push_back(select(j < n, v, Expr<f32>(0.0f)));
    }
    for (u32 k = 0; k < kPerThread; ++k) store(stage[k * padded_row + coalesced], loaded[k]);
    barrier();

    // This thread's run: elements 16t .. 16t + 15 of the chunk, scanned serially.
    std::vector<Expr<f32>> run;
    for (u32 k = 0; k < kPerThread; ++k) {
      auto v = load(stage[own + k]);
      run.push_back(k == 0 ? v : run.back() + v);
    }
    auto run_total = run.back();
    auto earlier_threads = simd_prefix_exclusive_sum(run_total);
    IRON_IF(lane == 31u) { store(totals[simdgroup], earlier_threads + run_total); }
    barrier();

    Var<f32> total = 0.0f;  // lane l holds simdgroup l's total
    IRON_IF(lane < simdgroup_count()) { total = load(totals[lane]); }
    auto earlier_simdgroups = simd_sum(select(lane < simdgroup, Expr<f32>(total), 0.0f));
    auto chunk = simd_sum(Expr<f32>(total));
    auto offset = carry + earlier_simdgroups + earlier_threads;
    for (u32 k = 0; k < kPerThread; ++k) {
      store(stage[own + k], offset + run[k]);
    }
    barrier();

    for (u32 k = 0; k < kPerThread; ++k) {
      auto j = start + k * tpg + tid;
      IRON_IF(j < n) { store(out[base + j], cast<T>(load(stage[k * padded_row + coalesced]))); }
    }
    carry += chunk;
  }
}

/// One chunk per row where 16 elements per thread cover it in at most 256 threads.
IRON_GEOMETRY(iron_prefix_sum) {
  const std::uint64_t n = q.constant("n");
  const std::uint64_t rows = q.tensor_elements("inp") / std::max<std::uint64_t>(n, 1);
  const std::uint32_t tpg =
      q.threads_per_group(whole_simdgroups((n + kPerThread - 1) / kPerThread, kMostThreads));
  return Geometry::per_row(rows, tpg);
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition, in double.
std::vector<float> prefix_sum_oracle(const std::vector<float>& x, std::size_t rows, std::size_t n) {
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    double acc = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      acc += x[r * n + j];
      y[r * n + j] = static_cast<float>(acc);
    }
  }
  return y;
}

testing::TestSetup prefix_sum_setup(std::size_t rows, std::size_t n, std::uint32_t tpg, float lo,
                                    float hi, DType dt, testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(rows * n, lo, hi), dt);
  namespace tol = testing::tolerance;
  const std::size_t chunk = std::size_t{kPerThread} * tpg;
  const std::size_t depth = std::min((n + chunk - 1) / chunk + 80, n - 1);
  return testing::TestSetup("iron_prefix_sum", dt)
      .input("inp", x)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n))
      .expect("out", prefix_sum_oracle(x, rows, n))
      .tolerance(tol::stored(dt, tol::sum_error(depth, tol::max_row_abs_sum(x, rows, n)), 0.0))
      .grid_rows(static_cast<std::uint32_t>(rows), tpg);
}

bench::BenchSetup prefix_sum_bench(std::size_t rows, std::size_t n, DType dt) {
  bench::BenchSetup setup("iron_prefix_sum", dt);
  setup.random("inp", rows * n).output("out", rows * n).constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * rows * n * dtype_size(dt))
      .flops(rows * n)
      .peer("cumsum", {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}});
}

}  // namespace

// Signed terms: partial sums pass near zero, so the bound is absolute (Σ|x|, not the sum).
IRON_TEST(iron_prefix_sum, rows_4096, F32, F16, BF16) {
  return prefix_sum_setup(4, 4096, 256, -1.0f, 1.0f, dt, rng);
}

// A ragged chunk (1000 of 2048), and a row shorter than the group: threads and simdgroups with
// no element at all must contribute zero.
IRON_TEST(iron_prefix_sum, ragged_rows, F32, F16, BF16) {
  return prefix_sum_setup(3, 1000, 128, -1.0f, 1.0f, dt, rng);
}
IRON_TEST(iron_prefix_sum, row_shorter_than_group, F32, F16, BF16) {
  return prefix_sum_setup(2, 70, 256, -1.0f, 1.0f, dt, rng);
}
IRON_TEST(iron_prefix_sum, single_element_rows, F32, F16, BF16) {
  return prefix_sum_setup(5, 1, 32, -1.0f, 1.0f, dt, rng);
}

// Ten chunks of 512 (5000 = 9 · 512 + 392): the carry crosses chunks, the last one ragged.
IRON_TEST(iron_prefix_sum, many_chunks, F32, F16, BF16) {
  return prefix_sum_setup(3, 5000, 32, -1.0f, 1.0f, dt, rng);
}

// 3000 terms near 1 over 4 simdgroups and two chunks: an f16 or bf16 running sum would stall
// at 2048 or 256, far outside the f32 bound.
IRON_TEST(iron_prefix_sum, f32_accumulation, F32, F16, BF16) {
  return prefix_sum_setup(2, 3000, 128, 0.9f, 1.1f, dt, rng);
}

IRON_BENCH(iron_prefix_sum, rows16384_n4096, F32, F16, BF16) {
  return prefix_sum_bench(16384, 4096, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
