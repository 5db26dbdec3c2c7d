/// iron_scale: out[i] = alpha * inp[i], computed in f32 and rounded once to T.
///
/// ## Error bound
/// The f32 product is correctly rounded (exact in f32 against the definition), then rounded to T:
/// 2^-11 (f16) or 2^-8 (bf16) relative.
///
/// ## Layout
/// - `inp [n]` T
/// - `out [n]` T
///
/// ## Dispatch
/// Elementwise, grid-stride: any grid; thread t handles i = t, t + T, … (T = threads in the
/// grid). The vectorizer turns the loop into 16-byte accesses when n allows.
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL(iron_scale, (Tensor<T> inp, Out<T> out, Constexpr<f32> alpha, Constexpr<u32> n)) {
  dispatch(elementwise);
  grid("[<= ceil_div(n, tpg), 1, 1]");
  layout(inp, "[n]");
  layout(out, "[n]");
  for (auto i : range(global_id<0>(), n, grid_threads<0>())) {
    store(out[i], cast<T>(cast<f32>(load(inp[i])) * alpha));
  }
}

// One 16-byte access per thread in groups of 256: each thread's loop runs once when n fills
// whole vectors.
IRON_GEOMETRY(iron_scale) {
  return Geometry::elementwise(vector_count(q.constant("n"), q.dtype), q.threads_per_group(256));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

testing::TestSetup scale_setup(std::size_t n, float alpha, DType dt, testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(n, -8.0f, 8.0f), dt);
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<float>(double{alpha} * x[i]);
  testing::TestSetup setup("iron_scale", dt);
  setup.input("inp", x)
      .output("out", n)
      .constant("alpha", alpha)
      .constant("n", static_cast<double>(n))
      .expect("out", want)
      .tolerance(testing::tolerance::correctly_rounded(dt));
  return setup.grid(testing::geometry_grid(setup));
}

bench::BenchSetup scale_bench(std::size_t n, DType dt) {
  const std::size_t bytes = n * dtype_size(dt);
  bench::BenchSetup setup("iron_scale", dt);
  setup.random("inp", n)
      .output("out", n)
      .constant("alpha", 2.5)
      .constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * bytes)
      .flops(n)
      .peer("scale", {{"n", static_cast<double>(n)}, {"alpha", 2.5}});
}

}  // namespace

IRON_TEST(iron_scale, basic, F32, F16, BF16) { return scale_setup(1 << 16, 2.5f, dt, rng); }

// alpha = 0 must give exact zeros; n = 77 is odd, so only the scalar loop applies.
IRON_TEST(iron_scale, zero_alpha_ragged, F32, F16, BF16) { return scale_setup(77, 0.0f, dt, rng); }

IRON_BENCH(iron_scale, n64m, F32, F16, BF16) { return scale_bench(std::size_t{1} << 26, dt); }

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
