/// iron_copy_async_probe_b{4,8,16}: 1024 elements through shared memory by asynchronous copies of
/// 4, 8 or 16 bytes in two commit groups (waited for one at a time), every fifth piece replaced by
/// zeros: out[i] = inp[i], or 0 in those pieces. Checks cp.async (.ca for the narrow sizes, .cg
/// for 16 bytes), its zero fill and the group accounting against the simulator bit for bit.
///
/// ## Error bound
/// Exact: values are moved.
///
/// ## Layout
/// - `inp [1024]` T
/// - `out [1024]` T
///
/// ## Dispatch
/// Tiled: one group of exactly 64 threads.
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL_TEMPLATE(iron_copy_async_probe, (std::uint32_t BYTES), (Tensor<T> inp, Out<T> out)) {
  dispatch(tiled, {exactly(64)});
  grid("[1, 1, 1]");
  layout(inp, "[1024]");
  layout(out, "[1024]");
  constexpr std::uint32_t kW = BYTES / lane_bytes<T>();  // elements per copy
  constexpr std::uint32_t kPieces = 1024 / kW;
  auto s = shared<T>(1024);
  auto t = thread_id<0>();
  // Two groups: the first half of the pieces, then the second.
  for (std::uint32_t half = 0; half < 2; ++half) {
    for (auto p : range(t + half * kPieces / 2, (half + 1) * kPieces / 2, 64u)) {
      copy_async<kW>(s[p * kW], inp[p * kW], p % 5u != 4u);
    }
    async_commit();
  }
  async_wait(1);  // the first half has landed
  barrier();
  for (auto i : range(t, 512u, 64u)) store(out[i], load(s[i]));
  async_wait(0);
  barrier();
  for (auto i : range(t + 512u, 1024u, 64u)) store(out[i], load(s[i]));
}

IRON_KERNEL_VARIANT(iron_copy_async_probe, b4, 4);
IRON_KERNEL_VARIANT(iron_copy_async_probe, b8, 8);
IRON_KERNEL_VARIANT(iron_copy_async_probe, b16, 16);

// One group of 64 threads.
IRON_GEOMETRY(iron_copy_async_probe_b4) { return {{1, 1, 1}, {64, 1, 1}}; }
IRON_GEOMETRY(iron_copy_async_probe_b8) { return {{1, 1, 1}, {64, 1, 1}}; }
IRON_GEOMETRY(iron_copy_async_probe_b16) { return {{1, 1, 1}, {64, 1, 1}}; }

}  // namespace iron::kernels

#if IRON_KERNEL_TESTS
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {
namespace {

testing::TestSetup copy_async_probe(std::size_t bytes, DType dt, float lo, float hi,
                                    testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(1024, lo, hi), dt);
  const std::size_t width = bytes / dtype_size(dt);
  std::vector<float> want = x;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (i / width % 5 == 4) want[i] = 0.0f;
  }
  testing::TestSetup setup("iron_copy_async_probe_b" + std::to_string(bytes), dt);
  setup.input("inp", x).output("out", 1024).expect("out", want);
  setup.tolerance(testing::tolerance::exact());
  return setup.grid(testing::geometry_grid(setup));
}

}  // namespace

#define IRON_COPY_ASYNC_PROBE_TESTS(BYTES)                                        \
  IRON_TEST(iron_copy_async_probe_b##BYTES, values, F32, F16, BF16) {             \
    return copy_async_probe(BYTES, dt, -100.0f, 100.0f, rng);                     \
  }                                                                               \
  /* Tiny values: a zero-filled piece must be +0 bits, not a rounding of them. */ \
  IRON_TEST(iron_copy_async_probe_b##BYTES, tiny_values, F32, F16, BF16) {        \
    return copy_async_probe(BYTES, dt, 1e-3f, 2e-3f, rng);                        \
  }
IRON_COPY_ASYNC_PROBE_TESTS(4)
IRON_COPY_ASYNC_PROBE_TESTS(8)
IRON_COPY_ASYNC_PROBE_TESTS(16)
#undef IRON_COPY_ASYNC_PROBE_TESTS

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
