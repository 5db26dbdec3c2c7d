/// iron_copy: out[i] = inp[i], one thread per element.
///
/// ## Layout
/// - `inp [n]` T
/// - `out [n]` T
///
/// ## Dispatch
/// Elementwise: `ceil(n / tpg)` groups of `tpg` threads; threads past `n` do nothing.
#include <iron/iron.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_copy, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  auto i = program_id<0>();
  IRON_IF(i < n) { store(out[i], load(inp[i])); }
}

namespace {

testing::TestSetup copy_setup(std::size_t n, std::uint32_t tpg, DType dt, testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(n, -100.0f, 100.0f), dt);
  return testing::TestSetup("iron_copy", dt)
      .input("inp", x)
      .output("out", n)
      .constant("n", static_cast<double>(n))
      .expect("out", x)
      .grid_1d(n, tpg);
}

}  // namespace

IRON_TEST(iron_copy, contiguous, F32(0.0), F16(0.0), BF16(0.0)) {
  return copy_setup(1 << 16, 256, dt, rng);
}

// n = 1000 leaves 24 idle threads in the last group; they must not write past the end.
IRON_TEST(iron_copy, ragged_tail, F32(0.0), F16(0.0), BF16(0.0)) {
  return copy_setup(1000, 256, dt, rng);
}

IRON_TEST(iron_copy, single_element, F32(0.0), F16(0.0), BF16(0.0)) {
  return copy_setup(1, 32, dt, rng);
}

}  // namespace iron::kernels
