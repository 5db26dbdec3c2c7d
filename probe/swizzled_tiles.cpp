/// iron_swizzled_tile_probe_<role>_<layout>: a 32×64 matrix copied into shared memory in swizzled
/// rows (16-byte asynchronous copies), then the 32×32 matrix at column 32 read from there into a
/// fragment in `layout` and stored: out[i·32 + j] = inp[i·64 + 32 + j]. Checks that the copies,
/// the fragment loads (ldmatrix on CUDA) and the simulator agree on where every element lives,
/// bit for bit.
///
/// ## Error bound
/// Exact: values are moved.
///
/// ## Layout
/// - `inp [2048]` T (32 rows of 64)
/// - `out [1024]` T (32 rows of 32)
///
/// ## Dispatch
/// Tiled: one group of exactly 32 threads.
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL_TEMPLATE(iron_swizzled_tile_probe, (FragmentRole ROLE, MatrixLayout LAYOUT),
                     (Tensor<T> inp, Out<T> out)) {
  dispatch(tiled, {exactly(32)});
  grid("[1, 1, 1]");
  layout(inp, "[2048]");
  layout(out, "[1024]");
  constexpr std::uint32_t kW = 16 / lane_bytes<T>();  // elements per copy
  auto tile = shared<T>(2048, Swizzled{64});
  for (auto p : range(thread_id<0>(), 2048u / kW, 32u)) {
    copy_async<kW>(tile[p * kW], inp[p * kW], true);
  }
  async_commit();
  async_wait(0);
  barrier();
  Fragment<T, ROLE, 32, 32> f;
  f.load(tile, 32u, 64u, LAYOUT);
  f.store(out, 0u, 32u, LAYOUT);
}
IRON_KERNEL_VARIANT(iron_swizzled_tile_probe, a_row, FragmentRole::A, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_swizzled_tile_probe, a_col, FragmentRole::A, MatrixLayout::ColMajor);
IRON_KERNEL_VARIANT(iron_swizzled_tile_probe, b_row, FragmentRole::B, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_swizzled_tile_probe, b_col, FragmentRole::B, MatrixLayout::ColMajor);

// One group of 32 threads.
IRON_GEOMETRY(iron_swizzled_tile_probe_a_row) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_swizzled_tile_probe_a_col) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_swizzled_tile_probe_b_row) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_swizzled_tile_probe_b_col) { return {{1, 1, 1}, {32, 1, 1}}; }

}  // namespace iron::kernels

#if IRON_KERNEL_TESTS
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {
namespace {

testing::TestSetup swizzled_tile_probe(const char* kernel, DType dt, testing::Rng& rng,
                                       float lo = -100.0f, float hi = 100.0f) {
  const auto x = testing::round_through(rng.uniform(2048, lo, hi), dt);
  std::vector<float> want(1024);
  for (std::size_t i = 0; i < 32; ++i) {
    for (std::size_t j = 0; j < 32; ++j) want[i * 32 + j] = x[i * 64 + 32 + j];
  }
  testing::TestSetup setup(kernel, dt);
  setup.input("inp", x).output("out", 1024).expect("out", want);
  setup.tolerance(testing::tolerance::exact());
  return setup.grid(testing::geometry_grid(setup));
}

}  // namespace

IRON_TEST(iron_swizzled_tile_probe_a_row, values, F32, F16, BF16) {
  return swizzled_tile_probe("iron_swizzled_tile_probe_a_row", dt, rng);
}
// Values of one binade: neighbours differ in their low mantissa bits only.
IRON_TEST(iron_swizzled_tile_probe_a_row, tiny_values, F32, F16, BF16) {
  return swizzled_tile_probe("iron_swizzled_tile_probe_a_row", dt, rng, 1e-3f, 2e-3f);
}
IRON_TEST(iron_swizzled_tile_probe_a_col, values, F32, F16, BF16) {
  return swizzled_tile_probe("iron_swizzled_tile_probe_a_col", dt, rng);
}
// Values of one binade: neighbours differ in their low mantissa bits only.
IRON_TEST(iron_swizzled_tile_probe_a_col, tiny_values, F32, F16, BF16) {
  return swizzled_tile_probe("iron_swizzled_tile_probe_a_col", dt, rng, 1e-3f, 2e-3f);
}
IRON_TEST(iron_swizzled_tile_probe_b_row, values, F32, F16, BF16) {
  return swizzled_tile_probe("iron_swizzled_tile_probe_b_row", dt, rng);
}
// Values of one binade: neighbours differ in their low mantissa bits only.
IRON_TEST(iron_swizzled_tile_probe_b_row, tiny_values, F32, F16, BF16) {
  return swizzled_tile_probe("iron_swizzled_tile_probe_b_row", dt, rng, 1e-3f, 2e-3f);
}
IRON_TEST(iron_swizzled_tile_probe_b_col, values, F32, F16, BF16) {
  return swizzled_tile_probe("iron_swizzled_tile_probe_b_col", dt, rng);
}
// Values of one binade: neighbours differ in their low mantissa bits only.
IRON_TEST(iron_swizzled_tile_probe_b_col, tiny_values, F32, F16, BF16) {
  return swizzled_tile_probe("iron_swizzled_tile_probe_b_col", dt, rng, 1e-3f, 2e-3f);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
