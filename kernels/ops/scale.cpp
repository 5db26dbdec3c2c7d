/// iron_scale: out[i] = alpha * inp[i], computed in f32 and rounded once to T.
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

IRON_KERNEL(iron_scale, (Tensor<T> inp, Out<T> out, Constexpr<f32> alpha, Constexpr<u32> n)) {
  auto i = program_id<0>();
  IRON_IF(i < n) { store(out[i], cast<T>(cast<f32>(load(inp[i])) * alpha)); }
}

namespace {

testing::TestSetup scale_setup(std::size_t n, float alpha, DType dt, testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(n, -8.0f, 8.0f), dt);
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<float>(double{alpha} * x[i]);
  return testing::TestSetup("iron_scale", dt)
      .input("inp", x)
      .output("out", n)
      .constant("alpha", alpha)
      .constant("n", static_cast<double>(n))
      .expect("out", want)
      .grid_1d(n, 256);
}

}  // namespace

IRON_TEST(iron_scale, basic, F32(1e-6, 1e-6), F16(1e-3, 1e-3), BF16(1e-2, 8e-3)) {
  return scale_setup(1 << 16, 2.5f, dt, rng);
}

// alpha = 0 must give exact zeros; n = 77 leaves a ragged last group.
IRON_TEST(iron_scale, zero_alpha_ragged, F32(0.0), F16(0.0), BF16(0.0)) {
  return scale_setup(77, 0.0f, dt, rng);
}

}  // namespace iron::kernels
