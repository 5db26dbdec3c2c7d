/// iron_prefix_sum: out[r, j] = sum_{k ≤ j} x[r, k], an inclusive scan along each row.
///
/// The row is scanned in chunks of tpg elements, one element per thread, in f32: a simdgroup
/// prefix sum, then each simdgroup adds the totals of the simdgroups before it (read back from
/// threadgroup memory after one barrier), then the carry of all earlier chunks. The totals
/// alternate between two buffers by chunk, so one barrier per chunk suffices: a buffer is
/// rewritten two chunks later, after the next chunk's barrier has ordered every read of it.
///
/// ## Error bound
/// out[r, j] is a sum of its j + 1 terms in which each term passes through at most
/// d = ⌈n/tpg⌉ + 63 f32 additions: 31 in the simdgroup prefix sum, 31 in the simd_sum of the
/// simdgroup totals, one per later chunk into the carry (⌈n/tpg⌉ − 1), and the two that add carry,
/// the earlier simdgroups and the prefix; and at most j. So |err| ≤ γ_d · Σ_{k ≤ j} |x[r, k]|
/// (γ_d = d·u / (1 − d·u), u = 2^-24), then the rounding to T: 2^-11 (f16) or 2^-8 (bf16)
/// relative.
///
/// ## Layout
/// - `inp [rows, n]` T
/// - `out [rows, n]` T
///
/// ## Dispatch
/// Reduction: one group per row (`rows` groups), `tpg` threads with tpg a multiple of 32,
/// 32 ≤ tpg ≤ 1024. Any n ≥ 1.
#include <algorithm>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_prefix_sum, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(out, "[groups.x, n]");
  auto base = program_id<0>() * n;
  auto tid = thread_id<0>();
  auto lane = lane_id();
  auto simdgroup = simdgroup_id();
  auto totals = shared<f32>(64);  // two buffers of 32 simdgroup totals, alternating by chunk

  Var<f32> carry = 0.0f;  // the sum of every earlier chunk, the same in every thread
  Var<u32> buffer = 0u;
  for (auto start : range(0u, n, group_size<0>())) {
    auto j = start + tid;
    Var<f32> v = 0.0f;
    IRON_IF(j < n) { v = cast<f32>(load(inp[base + j])); }
    auto inclusive = simd_prefix_sum(Expr<f32>(v));
    auto slot = Expr<u32>(buffer) * 32u;
    IRON_IF(lane == 31u) { store(totals[slot + simdgroup], inclusive); }
    barrier();

    Var<f32> total = 0.0f;  // lane l holds simdgroup l's total
    IRON_IF(lane < simdgroup_count()) { total = load(totals[slot + lane]); }
    auto before = simd_sum(select(lane < simdgroup, Expr<f32>(total), 0.0f));
    auto chunk = simd_sum(Expr<f32>(total));
    IRON_IF(j < n) { store(out[base + j], cast<T>(carry + before + inclusive)); }
    carry += chunk;
    buffer = 1u - buffer;
  }
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
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
  const std::size_t depth = std::min((n + tpg - 1) / tpg + 63, n - 1);
  return testing::TestSetup("iron_prefix_sum", dt)
      .input("inp", x)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n))
      .expect("out", prefix_sum_oracle(x, rows, n))
      .tolerance(tol::stored(dt, tol::sum_error(depth, tol::max_row_abs_sum(x, rows, n)), 0.0))
      .grid_rows(static_cast<std::uint32_t>(rows), tpg);
}

bench::BenchSetup prefix_sum_bench(std::size_t rows, std::size_t n, DType dt) {
  return bench::BenchSetup("iron_prefix_sum", dt)
      .random("inp", rows * n)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n))
      .grid_rows(static_cast<std::uint32_t>(rows), 1024)
      .bytes_moved(2 * rows * n * dtype_size(dt))
      .flops(rows * n)
      .peer("cumsum", {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}});
}

}  // namespace

// Signed terms: partial sums pass near zero, so the bound is absolute (Σ|x|, not the sum).
IRON_TEST(iron_prefix_sum, rows_4096, F32, F16, BF16) {
  return prefix_sum_setup(4, 4096, 256, -1.0f, 1.0f, dt, rng);
}

// A ragged last chunk (1000 = 7 * 128 + 104), and a row shorter than the group: simdgroups
// with no element at all must contribute zero.
IRON_TEST(iron_prefix_sum, ragged_rows, F32, F16, BF16) {
  return prefix_sum_setup(3, 1000, 128, -1.0f, 1.0f, dt, rng);
}
IRON_TEST(iron_prefix_sum, row_shorter_than_group, F32, F16, BF16) {
  return prefix_sum_setup(2, 70, 1024, -1.0f, 1.0f, dt, rng);
}
IRON_TEST(iron_prefix_sum, single_element_rows, F32, F16, BF16) {
  return prefix_sum_setup(5, 1, 32, -1.0f, 1.0f, dt, rng);
}

// 3000 terms near 1 over 32 simdgroups and three chunks: an f16 or bf16 running sum would
// stall at 2048 or 256, far outside the f32 bound.
IRON_TEST(iron_prefix_sum, f32_accumulation, F32, F16, BF16) {
  return prefix_sum_setup(2, 3000, 1024, 0.9f, 1.1f, dt, rng);
}

IRON_BENCH(iron_prefix_sum, rows16384_n4096, F32, F16, BF16) {
  return prefix_sum_bench(16384, 4096, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
