/// iron_copy: out[i] = inp[i].
///
/// ## Error bound
/// Exact: values of T are copied, no arithmetic.
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

IRON_KERNEL(iron_copy, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  dispatch(elementwise);
  grid("[<= ceil_div(n, tpg), 1, 1]");
  layout(inp, "[n]");
  layout(out, "[n]");
  for (auto i : range(global_id<0>(), n, grid_threads<0>())) store(out[i], load(inp[i]));
}

// One 16-byte access per thread in groups of 256: each thread's loop runs once when n fills
// whole vectors.
IRON_GEOMETRY(iron_copy) {
  return Geometry::elementwise(vector_count(q.constant("n"), q.dtype), q.threads_per_group(256));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

testing::TestSetup copy_setup(std::size_t n, std::uint32_t groups, std::uint32_t tpg, DType dt,
                              testing::Rng& rng) {
  const auto x = testing::round_through(rng.uniform(n, -100.0f, 100.0f), dt);
  return testing::TestSetup("iron_copy", dt)
      .input("inp", x)
      .output("out", n)
      .constant("n", static_cast<double>(n))
      .expect("out", x)
      .tolerance(testing::tolerance::exact())
      .grid({{groups}, {tpg}});
}

/// A hand-written 16-byte copy: what a CUDA programmer would write instead.
constexpr const char* kCopyReference = R"(
extern "C" __global__ void reference_copy(const uint4* __restrict__ in, uint4* __restrict__ out,
                                          unsigned int vectors) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < vectors;
       i += gridDim.x * blockDim.x)
    out[i] = in[i];
}
)";

bench::BenchSetup copy_bench(std::size_t n, DType dt) {
  const std::size_t bytes = n * dtype_size(dt);
  const auto vectors = static_cast<std::uint32_t>(bytes / 16);
  bench::BenchSetup setup("iron_copy", dt);
  setup.random("inp", n).output("out", n).constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(2 * bytes)
      .peer("copy", {{"n", static_cast<double>(n)}})
      .reference({"hand-written CUDA",
                  kCopyReference,
                  "reference_copy",
                  {"inp", "out", bench::u32_arg(vectors)},
                  runtime::Grid::elementwise(vectors, 256),
                  {0.0, 0.0}});
}

}  // namespace

IRON_TEST(iron_copy, contiguous, F32, F16, BF16) { return copy_setup(1 << 16, 64, 256, dt, rng); }

// n = 1001 is odd: no vector version applies, and the last thread's tail must be written.
IRON_TEST(iron_copy, ragged_tail, F32, F16, BF16) { return copy_setup(1001, 3, 128, dt, rng); }

// More threads than elements: most threads never enter the loop.
IRON_TEST(iron_copy, single_element, F32, F16, BF16) { return copy_setup(1, 1, 32, dt, rng); }

// A size sweep from inside L2 to far past it: time must grow with n and bandwidth level off.
IRON_BENCH(iron_copy, n1m, F32) { return copy_bench(std::size_t{1} << 20, dt); }
IRON_BENCH(iron_copy, n4m, F32) { return copy_bench(std::size_t{1} << 22, dt); }
IRON_BENCH(iron_copy, n16m, F32, F16, BF16) { return copy_bench(std::size_t{1} << 24, dt); }
IRON_BENCH(iron_copy, n64m, F32, F16, BF16) { return copy_bench(std::size_t{1} << 26, dt); }
IRON_BENCH(iron_copy, n256m, F32) { return copy_bench(std::size_t{1} << 28, dt); }

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
