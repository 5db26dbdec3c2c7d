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
/// A group of 128 threads (4 simdgroups) computes a 128×128 tile of `out` (kernels/gemm/
/// gemm_tiles.hpp; tiles launch in bands of 8 tile rows for L2). For each step of kBK columns of
/// `a`, the group copies the a and b tiles to shared memory (zeros past the edges), then each
/// simdgroup multiplies its 64×64 part with fragments. When the rows of `a` and `b` are whole
/// 16-byte pieces (k, and n for [k, n], multiples of 8), the copies are asynchronous 16-byte ones
/// in a `pipelined` loop of up to 4 stages (80 KB of shared memory for 16-bit tiles on sm_90,
/// fewer stages where the target holds less): later steps' tiles land while this step's are
/// multiplied (bench/NOTES.md §7). The sums then reach `out` through an overlay of the spent a
/// ring, 16 rows of two simdgroups at a time, scaled and written by the whole group from a loop
/// (gemm::staged_epilogue), skipping those past the edges. The knob `slices` (docs/tuning.md)
/// traces a step's 16-column k slices as one loop (1) instead of one copy each (0, the default).
///
/// ## Layout
/// - `a [m, k]` T
/// - `b [k, n]` T (kn) or `[n, k]` T (nk)
/// - `out [m, n]` T
///
/// ## Dispatch
/// Tiled: a grid of ceil(n / 128) × ceil(m / 128) groups of exactly 128 threads.
///
/// ## iron_gemm_warpgroup_nk, iron_gemm_warpgroup_kn
/// The same product for `b` [n, k] (nk) or [k, n] (kn), written on warpgroup products
/// (kernels/gemm/gemm_warpgroup.hpp). With its tuning knobs (docs/tuning.md) at their defaults (bm
/// = 128, bn = 256, stages = 4, lag = 1, band = 8): a group of 384 threads owns a 128×256 tile, two
/// warpgroups multiplying and the third loading (a specialized pipeline); each 64-column step of a
/// and b lands in a ring of 128-byte swizzled rows (kn: b's 64 rows of the step as four 64-column
/// panels, one TMA box each, which wgmma reads MN-major through its descriptor's panel offset). On
/// sm_90a the loading warpgroup's first thread issues each step as TMA copies once the multiplying
/// warpgroups have freed its slot, and each of those multiplies its 64 rows by the 256 columns in
/// one `wgmma` product (a 4-stage ring of 48 KB stages, products in flight one step), and the
/// tile's sums reach `out` through 33 KB of shared memory 32 rows at a time, so that each warp
/// stores 32 consecutive columns of a row; every other target takes the tile's two 128-column
/// halves one after the other through a 3-stage ring of 32 KB stages, as fragment products (a
/// target query picks the path; both sum in the same order). f32 takes iron_gemm_nk's
/// (iron_gemm_kn's) path (no warpgroup instruction reads f32). The error bound is iron_gemm's. The
/// knobs: bm and bn, the tile's rows (128 or 64: two multiplying warpgroups or one) and columns
/// (256, 128 or 64): smaller tiles make more groups for a small m · n; stages and lag, the sm_90a
/// ring; band, the tile rows of the launch order's bands; persistent, a group a multiprocessor
/// (then k, and for kn n, multiples of 8). Dispatch: a grid of ceil(n / bn) × ceil(m / bm) groups
/// of exactly 2 · bm + 128 threads (for f32, ceil(n / 128) × ceil(m / 128) groups of 128).
#include <iron/iron.hpp>

#include "gemm_tiles.hpp"
#include "gemm_warpgroup.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL_TEMPLATE(iron_gemm, (MatrixLayout B_LAYOUT),
                     (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> m, Constexpr<u32> n,
                      Constexpr<u32> k, Constexpr<f32> alpha)) {
  gemm::declare();
  layout(a, "[m, k]");
  layout(b, B_LAYOUT == row_major ? "[k, n]" : "[n, k]");
  layout(out, "[m, n]");
  const auto write = [&](const auto& r, const auto& c, const Expr<f32>& sum) {
    store(out[r * n + c], cast<T>(sum * alpha));
  };
  const gemm::DenseB<T, B_LAYOUT> bsrc{b, Expr<u32>(0u)};
  if (tuned("slices") == 1) {
    gemm::product<gemm::Slices::Rolled>(a, bsrc, m, n, k, Expr<u32>(0u), write);
  } else {
    gemm::product(a, bsrc, m, n, k, Expr<u32>(0u), write);
  }
}
IRON_KERNEL_VARIANT(iron_gemm, kn, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_gemm, nk, MatrixLayout::ColMajor);

IRON_KERNEL_TEMPLATE(iron_gemm_warpgroup, (MatrixLayout B_LAYOUT),
                     (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> m, Constexpr<u32> n,
                      Constexpr<u32> k, Constexpr<f32> alpha)) {
  layout(a, "[m, k]");
  layout(b, B_LAYOUT == row_major ? "[k, n]" : "[n, k]");
  layout(out, "[m, n]");
  const auto write = [&](const auto& r, const auto& c, const Expr<f32>& sum) {
    store(out[r * n + c], cast<T>(sum * alpha));
  };
  if constexpr (lane_bytes<T>() == 2) {
    const gemm::warpgroup::Shape shape = gemm::warpgroup::tuned_shape();
    gemm::warpgroup::declare<T>(shape, k);
    if constexpr (B_LAYOUT == row_major) {
      // A persistent launch's copies of b's rows are TMA's too.
      if (shape.persistent) require_multiple_of(n, 16 / lane_bytes<T>());
      gemm::warpgroup::tile_product(a, gemm::warpgroup::RowsB<T>{b}, m, n, k, write, shape);
    } else {
      gemm::warpgroup::tile_product(a, b, m, n, k, write, shape);
    }
  } else {
    gemm::declare();
    gemm::product(a, gemm::DenseB<T, B_LAYOUT>{b, Expr<u32>(0u)}, m, n, k, Expr<u32>(0u), write);
  }
}
IRON_KERNEL_VARIANT(iron_gemm_warpgroup, nk, MatrixLayout::ColMajor);
IRON_KERNEL_VARIANT(iron_gemm_warpgroup, kn, MatrixLayout::RowMajor);

IRON_KERNEL_TEMPLATE(iron_gemm_batched, (MatrixLayout B_LAYOUT),
                     (Tensor<T> a, Tensor<T> b, Out<T> out, [[maybe_unused]] Constexpr<u32> batch,
                      Constexpr<u32> m, Constexpr<u32> n, Constexpr<u32> k, Constexpr<u32> stride_a,
                      Constexpr<u32> stride_b, Constexpr<f32> alpha)) {
  gemm::declare("batch");
  layout_at_least(a, "[(batch - 1) * stride_a + m * k]");
  layout_at_least(b, "[(batch - 1) * stride_b + k * n]");
  layout(out, "[batch, m, n]");
  auto z = program_id<2>();
  // Each batch's operands start at multiples of the strides: their alignment is the strides'.
  const auto [row0, col0] = gemm::banded_tile(gemm::kBM, gemm::kBN);
  gemm::product_from(gemm::DenseA<T>{a, z * stride_a, stride_a},
                     gemm::DenseB<T, B_LAYOUT>{b, z * stride_b, stride_b}, m, n, k, row0, col0,
                     [&](const auto& r, const auto& c, const Expr<f32>& sum) {
                       store(out[(z * m + r) * n + c], cast<T>(sum * alpha));
                     });
}
IRON_KERNEL_VARIANT(iron_gemm_batched, kn, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_gemm_batched, nk, MatrixLayout::ColMajor);

IRON_GEOMETRY(iron_gemm_kn) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_nk) { return gemm::geometry(q); }
IRON_TUNING(iron_gemm_kn) { return gemm::slices_tuning_space(); }
IRON_TUNING(iron_gemm_nk) { return gemm::slices_tuning_space(); }
IRON_GEOMETRY(iron_gemm_warpgroup_nk) {
  return q.dtype == DType::F32 ? gemm::geometry(q) : gemm::warpgroup::tuned_geometry(q);
}
IRON_TUNING(iron_gemm_warpgroup_nk) { return gemm::warpgroup::tuning_space(); }
IRON_GEOMETRY(iron_gemm_warpgroup_kn) {
  return q.dtype == DType::F32 ? gemm::geometry(q) : gemm::warpgroup::tuned_geometry(q);
}
IRON_TUNING(iron_gemm_warpgroup_kn) { return gemm::warpgroup::tuning_space<0, true>(); }
IRON_GEOMETRY(iron_gemm_batched_kn) {
  return gemm::geometry(q, static_cast<std::uint32_t>(q.constant("batch")));
}
IRON_GEOMETRY(iron_gemm_batched_nk) {
  return gemm::geometry(q, static_cast<std::uint32_t>(q.constant("batch")));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "gemm_oracle.hpp"

namespace iron::kernels {

namespace {

testing::TestSetup gemm_setup(bool b_rows, std::size_t m, std::size_t n, std::size_t k, DType dt,
                              testing::Rng& rng, double alpha = 1.0, const char* kernel = nullptr,
                              const dsl::TuningConfig& config = {}) {
  const auto a = testing::round_through(rng.uniform(m * k, -1.0f, 1.0f), dt);
  const auto b = testing::round_through(rng.uniform(k * n, -1.0f, 1.0f), dt);
  testing::TestSetup setup(kernel != nullptr ? kernel
                           : b_rows          ? "iron_gemm_kn"
                                             : "iron_gemm_nk",
                           dt, config);
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

/// `batch` products a_z · op(b_z), a_z at a[z · stride_a …] and b_z at b[z · stride_b …]: the
/// oracle runs the plain product on each batch's slices.
testing::TestSetup batched_setup(bool b_rows, std::size_t batch, std::size_t m, std::size_t n,
                                 std::size_t k, std::size_t stride_a, std::size_t stride_b,
                                 DType dt, testing::Rng& rng) {
  const auto a =
      testing::round_through(rng.uniform((batch - 1) * stride_a + m * k, -1.0f, 1.0f), dt);
  const auto b =
      testing::round_through(rng.uniform((batch - 1) * stride_b + k * n, -1.0f, 1.0f), dt);
  std::vector<float> want;
  double scale = 0.0;
  for (std::size_t z = 0; z < batch; ++z) {
    const auto slice = [](const std::vector<float>& v, std::size_t first, std::size_t count) {
      const auto begin = v.begin() + static_cast<std::ptrdiff_t>(first);
      return std::vector<float>(begin, begin + static_cast<std::ptrdiff_t>(count));
    };
    const std::vector<float> az = slice(a, z * stride_a, m * k);
    const std::vector<float> bz = slice(b, z * stride_b, k * n);
    const auto out = gemm_oracle(az, bz, m, n, k, b_rows, 0.5);
    want.insert(want.end(), out.begin(), out.end());
    scale = std::max(scale, max_abs_dot(az, bz, m, n, k, b_rows));
  }
  testing::TestSetup setup(b_rows ? "iron_gemm_batched_kn" : "iron_gemm_batched_nk", dt);
  setup.input("a", a)
      .input("b", b)
      .output("out", batch * m * n)
      .constant("batch", static_cast<double>(batch))
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .constant("stride_a", static_cast<double>(stride_a))
      .constant("stride_b", static_cast<double>(stride_b))
      .constant("alpha", 0.5)
      .expect("out", want)
      .tolerance(testing::tolerance::stored(dt, testing::tolerance::gamma(k) * 0.5 * scale,
                                            testing::tolerance::gamma(1)));
  return setup.grid(testing::geometry_grid(setup));
}

/// `batch` contiguous products (strides m·k and the size of b).
bench::BenchSetup batched_bench(bool b_rows, std::size_t batch, std::size_t m, std::size_t n,
                                std::size_t k, DType dt) {
  bench::BenchSetup setup(b_rows ? "iron_gemm_batched_kn" : "iron_gemm_batched_nk", dt);
  setup.random("a", batch * m * k)
      .random("b", batch * k * n)
      .output("out", batch * m * n)
      .constant("batch", static_cast<double>(batch))
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .constant("stride_a", static_cast<double>(m * k))
      .constant("stride_b", static_cast<double>(k * n))
      .constant("alpha", 1.0);
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(batch * (m * k + k * n + m * n) * dtype_size(dt))
      .flops(2 * batch * m * n * k)
      .peer("gemm_batched", {{"batch", static_cast<double>(batch)},
                             {"m", static_cast<double>(m)},
                             {"n", static_cast<double>(n)},
                             {"k", static_cast<double>(k)},
                             {"b_rows", b_rows ? 1.0 : 0.0}});
}

/// The bench: random a and b, the grid from the geometry, cuBLAS computing the same product.
bench::BenchSetup gemm_bench(bool b_rows, std::size_t m, std::size_t n, std::size_t k, DType dt,
                             const char* kernel = nullptr) {
  bench::BenchSetup setup(kernel != nullptr ? kernel
                          : b_rows          ? "iron_gemm_kn"
                                            : "iron_gemm_nk",
                          dt);
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
// k past three 64-column steps: the ring's slots are reused, and the last step is partial.
IRON_TEST(iron_gemm_kn, ring_wrap_130x136x328, F32, F16, BF16) {
  return gemm_setup(true, 130, 136, 328, dt, rng);
}
IRON_TEST(iron_gemm_nk, ring_wrap_130x136x328, F32, F16, BF16) {
  return gemm_setup(false, 130, 136, 328, dt, rng);
}
IRON_TEST(iron_gemm_kn, primes_37x23x19, F32, F16, BF16) {
  return gemm_setup(true, 37, 23, 19, dt, rng);
}
IRON_TEST(iron_gemm_nk, primes_37x23x19, F32, F16, BF16) {
  return gemm_setup(false, 37, 23, 19, dt, rng);
}
// Ten tile rows and three tile columns: a whole band of 8 tile rows and a short band of 2 in the
// launch order, which must still cover every tile once.
IRON_TEST(iron_gemm_nk, bands_1153x300x16, BF16) {
  return gemm_setup(false, 1153, 300, 16, dt, rng);
}
// One row, one column, one step of k of one.
IRON_TEST(iron_gemm_kn, ones_1x1x1, F32, F16, BF16) { return gemm_setup(true, 1, 1, 1, dt, rng); }
IRON_TEST(iron_gemm_nk, vector_1x200x8, F32, F16, BF16) {
  return gemm_setup(false, 1, 200, 8, dt, rng);
}
// The k slices as one loop (knob `slices`): whole tiles over several steps, and a ring that wraps
// with a partial last step past the tile edges.
IRON_TEST(iron_gemm_kn, tuned_rolled_slices_256x128x96, F32, F16, BF16) {
  return gemm_setup(true, 256, 128, 96, dt, rng, 1.0, nullptr, {{"slices", 1}});
}
IRON_TEST(iron_gemm_nk, tuned_rolled_slices_130x136x328, F32, F16, BF16) {
  return gemm_setup(false, 130, 136, 328, dt, rng, 0.5, nullptr, {{"slices", 1}});
}

// The warpgroup form: whole tiles over five steps (both rings wrap), sizes past a tile with a
// partial last step and a half tile wholly outside, k not a multiple of 8 (the element-by-element
// path), one row.
constexpr const char* kWarpgroup = "iron_gemm_warpgroup_nk";
constexpr const char* kWarpgroupRows = "iron_gemm_warpgroup_kn";
IRON_TEST(iron_gemm_warpgroup_nk, tiles_256x512x320, F32, F16, BF16) {
  return gemm_setup(false, 256, 512, 320, dt, rng, 1.0, kWarpgroup);
}
IRON_TEST(iron_gemm_warpgroup_nk, past_a_tile_129x300x72, F32, F16, BF16) {
  return gemm_setup(false, 129, 300, 72, dt, rng, 0.5, kWarpgroup);
}
IRON_TEST(iron_gemm_warpgroup_nk, primes_37x23x19, F32, F16, BF16) {
  return gemm_setup(false, 37, 23, 19, dt, rng, 1.0, kWarpgroup);
}
IRON_TEST(iron_gemm_warpgroup_nk, vector_1x130x16, F16, BF16) {
  return gemm_setup(false, 1, 130, 16, dt, rng, 1.0, kWarpgroup);
}
// Its tuning knobs away from their defaults (`iron tune` times each configuration): 128-column
// tiles past the edges; those with a 6-stage ring that wraps and no product in flight; a 3-stage
// ring of 256-column tiles with a partial last step; 64-column tiles; bands of 4 tile rows over 5
// rows of tiles.
IRON_TEST(iron_gemm_warpgroup_nk, tuned_narrow_129x300x136, F16, BF16) {
  return gemm_setup(false, 129, 300, 136, dt, rng, 1.0, kWarpgroup, {{"bn", 128}});
}
IRON_TEST(iron_gemm_warpgroup_nk, tuned_narrow_deep_ring_70x130x520, F16, BF16) {
  return gemm_setup(false, 70, 130, 520, dt, rng, 1.0, kWarpgroup,
                    {{"bn", 128}, {"stages", 6}, {"lag", 0}});
}
// The small-m rule's choice: 64×64 tiles on a ring as deep as fits (13 stages on sm_90a, 8 of
// copy groups on sm_90), wrapping twice, k a partial last step; and a ring deeper than the
// whole k (one partial step).
IRON_TEST(iron_gemm_warpgroup_nk, tuned_fill_stages_70x130x1800, F16, BF16) {
  return gemm_setup(false, 70, 130, 1800, dt, rng, 1.0, kWarpgroup,
                    {{"bm", 64}, {"bn", 64}, {"stages", 16}});
}
IRON_TEST(iron_gemm_warpgroup_nk, tuned_fill_stages_short_k_70x130x40, F16, BF16) {
  return gemm_setup(false, 70, 130, 40, dt, rng, 1.0, kWarpgroup,
                    {{"bm", 64}, {"bn", 64}, {"stages", 16}});
}
IRON_TEST(iron_gemm_warpgroup_nk, tuned_three_stages_129x260x200, F16, BF16) {
  return gemm_setup(false, 129, 260, 200, dt, rng, 0.5, kWarpgroup, {{"stages", 3}});
}
IRON_TEST(iron_gemm_warpgroup_nk, tuned_quarter_129x200x136, F16, BF16) {
  return gemm_setup(false, 129, 200, 136, dt, rng, 1.0, kWarpgroup, {{"bn", 64}, {"lag", 0}});
}
IRON_TEST(iron_gemm_warpgroup_nk, tuned_one_warpgroup_129x200x136, F16, BF16) {
  return gemm_setup(false, 129, 200, 136, dt, rng, 1.0, kWarpgroup, {{"bm", 64}, {"bn", 128}});
}
IRON_TEST(iron_gemm_warpgroup_nk, tuned_one_warpgroup_wide_70x300x72, F16, BF16) {
  return gemm_setup(false, 70, 300, 72, dt, rng, 0.5, kWarpgroup, {{"bm", 64}, {"stages", 3}});
}
IRON_TEST(iron_gemm_warpgroup_nk, tuned_bands_of_4_640x260x64, F16, BF16) {
  return gemm_setup(false, 640, 260, 64, dt, rng, 1.0, kWarpgroup, {{"bn", 128}, {"band", 4}});
}
// Persistent groups, fewer than the tiles so that each runs on from tile to tile through one
// ring: 4 tiles over 3 groups (one takes two, its second a partial tile past both edges, k a
// partial last step); 50 tiles of 64×64 in bands of 4 over 7 groups (uneven shares, a ring of 6
// that wraps mid-tile, no product in flight); one group taking every tile of 128-column tiles.
testing::TestSetup persistent_setup(std::size_t m, std::size_t n, std::size_t k, DType dt,
                                    testing::Rng& rng, std::uint32_t groups,
                                    dsl::TuningConfig config, bool b_rows = false) {
  config["persistent"] = 1;
  testing::TestSetup setup =
      gemm_setup(b_rows, m, n, k, dt, rng, 1.0, b_rows ? kWarpgroupRows : kWarpgroup, config);
  setup.groups(groups);
  return setup;
}
IRON_TEST(iron_gemm_warpgroup_nk, tuned_persistent_129x300x136, F16, BF16) {
  return persistent_setup(129, 300, 136, dt, rng, 3, {});
}
IRON_TEST(iron_gemm_warpgroup_nk, tuned_persistent_small_tiles_640x300x72, F16, BF16) {
  return persistent_setup(640, 300, 72, dt, rng, 7,
                          {{"bm", 64}, {"bn", 64}, {"band", 4}, {"stages", 6}, {"lag", 0}});
}
IRON_TEST(iron_gemm_warpgroup_nk, tuned_persistent_one_group_200x260x64, F16, BF16) {
  return persistent_setup(200, 260, 64, dt, rng, 1, {{"bn", 128}});
}
// Two groups a multiprocessor (knob `resident`: each half the registers and shared memory) of
// 64×128 tiles: 30 tiles over 5 groups, edges past m and n, k two steps and a partial one.
IRON_TEST(iron_gemm_warpgroup_nk, tuned_persistent_resident_2_330x600x136, F16, BF16) {
  return persistent_setup(330, 600, 136, dt, rng, 5, {{"bm", 64}, {"bn", 128}, {"resident", 2}});
}

// b as [k, n]: whole tiles over five steps, each step's b four 64-column panels; n past a tile
// with rows of whole 16-byte pieces (the TMA path) and without (n = 300: element by element);
// primes; one row; 128- and 64-column tiles (two panels, one); the small-m rule's 64×64 tiles on
// a ring as deep as fits; persistent groups running on from tile to tile.
IRON_TEST(iron_gemm_warpgroup_kn, tiles_256x512x320, F32, F16, BF16) {
  return gemm_setup(true, 256, 512, 320, dt, rng, 1.0, kWarpgroupRows);
}
IRON_TEST(iron_gemm_warpgroup_kn, past_a_tile_129x264x72, F16, BF16) {
  return gemm_setup(true, 129, 264, 72, dt, rng, 0.5, kWarpgroupRows);
}
IRON_TEST(iron_gemm_warpgroup_kn, unaligned_rows_129x300x72, F16, BF16) {
  return gemm_setup(true, 129, 300, 72, dt, rng, 1.0, kWarpgroupRows);
}
IRON_TEST(iron_gemm_warpgroup_kn, primes_37x23x19, F32, F16, BF16) {
  return gemm_setup(true, 37, 23, 19, dt, rng, 1.0, kWarpgroupRows);
}
IRON_TEST(iron_gemm_warpgroup_kn, vector_1x136x16, F16, BF16) {
  return gemm_setup(true, 1, 136, 16, dt, rng, 1.0, kWarpgroupRows);
}
IRON_TEST(iron_gemm_warpgroup_kn, tuned_narrow_129x200x136, F16, BF16) {
  return gemm_setup(true, 129, 200, 136, dt, rng, 1.0, kWarpgroupRows, {{"bn", 128}});
}
IRON_TEST(iron_gemm_warpgroup_kn, tuned_fill_stages_70x136x1800, F16, BF16) {
  return gemm_setup(true, 70, 136, 1800, dt, rng, 1.0, kWarpgroupRows,
                    {{"bm", 64}, {"bn", 64}, {"stages", 16}});
}
IRON_TEST(iron_gemm_warpgroup_kn, tuned_persistent_129x296x136, F16, BF16) {
  return persistent_setup(129, 296, 136, dt, rng, 3, {}, true);
}

// Batches: the weight shared by every batch (stride 0), and batches with a gap between them.
IRON_TEST(iron_gemm_batched_nk, shared_weight_3x70x40x24, F32, F16, BF16) {
  return batched_setup(false, 3, 70, 40, 24, std::size_t{70} * 24, 0, dt, rng);
}
IRON_TEST(iron_gemm_batched_kn, gapped_2x129x65x16, F32, F16, BF16) {
  return batched_setup(true, 2, 129, 65, 16, std::size_t{129} * 16 + 8, std::size_t{16} * 65 + 8,
                       dt, rng);
}
IRON_TEST(iron_gemm_batched_kn, shared_weight_4x1x33x40, F32, F16, BF16) {
  return batched_setup(true, 4, 1, 33, 40, 40, 0, dt, rng);
}
IRON_TEST(iron_gemm_batched_nk, odd_strides_2x9x5x7, F32, F16, BF16) {
  return batched_setup(false, 2, 9, 5, 7, std::size_t{9} * 7 + 1, std::size_t{5} * 7 + 3, dt, rng);
}

// Batches of an attention-sized product (32 heads of 1024 x 1024 x 128).
IRON_BENCH(iron_gemm_batched_nk, b32_m1024_n1024_k128, BF16) {
  return batched_bench(false, 32, 1024, 1024, 128, dt);
}
IRON_BENCH(iron_gemm_batched_kn, b32_m1024_n128_k1024, BF16) {
  return batched_bench(true, 32, 1024, 128, 1024, dt);
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
IRON_BENCH(iron_gemm_warpgroup_nk, m4096_n4096_k4096, F16, BF16) {
  return gemm_bench(false, 4096, 4096, 4096, dt, kWarpgroup);
}
IRON_BENCH(iron_gemm_warpgroup_nk, m8192_n8192_k8192, BF16) {
  return gemm_bench(false, 8192, 8192, 8192, dt, kWarpgroup);
}
IRON_BENCH(iron_gemm_warpgroup_kn, m4096_n4096_k4096, F16, BF16) {
  return gemm_bench(true, 4096, 4096, 4096, dt, kWarpgroupRows);
}
IRON_BENCH(iron_gemm_warpgroup_kn, m8192_n8192_k8192, BF16) {
  return gemm_bench(true, 8192, 8192, 8192, dt, kWarpgroupRows);
}
IRON_BENCH(iron_gemm_warpgroup_nk, m4096_n14336_k4096, BF16) {
  return gemm_bench(false, 4096, 14336, 4096, dt, kWarpgroup);
}
// The linear layers of an 8B model on the warpgroup form, for 128, 4096 and 16384 tokens: the
// FFN's up (14336 × 4096) and down (4096 × 14336) projections, attention's 4096 × 4096, and the
// 128256-word output projection (not at 16384 tokens: a 4 GB output). Tuning matters here
// (docs/tuning.md): at 128 tokens a 128×256 tile leaves most multiprocessors idle.
IRON_BENCH(iron_gemm_warpgroup_nk, m128_n14336_k4096, BF16) {
  return gemm_bench(false, 128, 14336, 4096, dt, kWarpgroup);
}
IRON_BENCH(iron_gemm_warpgroup_nk, m128_n4096_k14336, BF16) {
  return gemm_bench(false, 128, 4096, 14336, dt, kWarpgroup);
}
IRON_BENCH(iron_gemm_warpgroup_nk, m128_n4096_k4096, BF16) {
  return gemm_bench(false, 128, 4096, 4096, dt, kWarpgroup);
}
IRON_BENCH(iron_gemm_warpgroup_nk, m128_n128256_k4096, BF16) {
  return gemm_bench(false, 128, 128256, 4096, dt, kWarpgroup);
}
IRON_BENCH(iron_gemm_warpgroup_nk, m4096_n4096_k14336, BF16) {
  return gemm_bench(false, 4096, 4096, 14336, dt, kWarpgroup);
}
IRON_BENCH(iron_gemm_warpgroup_nk, m4096_n128256_k4096, BF16) {
  return gemm_bench(false, 4096, 128256, 4096, dt, kWarpgroup);
}
IRON_BENCH(iron_gemm_warpgroup_nk, m16384_n14336_k4096, BF16) {
  return gemm_bench(false, 16384, 14336, 4096, dt, kWarpgroup);
}
IRON_BENCH(iron_gemm_warpgroup_nk, m16384_n4096_k14336, BF16) {
  return gemm_bench(false, 16384, 4096, 14336, dt, kWarpgroup);
}
IRON_BENCH(iron_gemm_warpgroup_nk, m16384_n4096_k4096, BF16) {
  return gemm_bench(false, 16384, 4096, 4096, dt, kWarpgroup);
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
