/// iron_{add,sub,mul,div}: out[i] = a[i] op b[i] for two tensors of one shape, and
/// iron_{add,sub,mul,div}_row: out[r, j] = a[r, j] op b[j], a row vector broadcast over rows.
///
/// Both operands are widened to f32 and the result is rounded once to T, so for f32 it is the
/// correctly rounded IEEE result and for f16/bf16 the f32 result rounded to nearest. The op is
/// a compile-time parameter of one loop body per shape; each op is registered under its own name.
///
/// ## Error bound
/// Exact in f32 against the definition (add, sub, mul and div are correctly rounded), then the
/// rounding to T: 2^-11 (f16) or 2^-8 (bf16) relative, plus half the smallest subnormal of T.
///
/// ## Layout
/// - same shape: `a [n]` T, `b [n]` T, `out [n]` T
/// - row broadcast: `a [rows, n]` T, `b [n]` T, `out [rows, n]` T
///
/// ## Dispatch
/// Same shape: elementwise, grid-stride: any grid; thread t handles i = t, t + T, … (T = threads
/// in the grid). Row broadcast: reduction, one group per row (`rows` groups) of at most 1024
/// threads, each striding over the row by the group size. The vectorizer turns both loops into
/// 16-byte accesses when n allows.
#include <algorithm>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

namespace {

/// The arithmetic operator of a binary kernel.
enum class BinaryOp { Add, Sub, Mul, Div };

/// x op y in f32.
template <BinaryOp OP>
Expr<f32> apply(const Expr<f32>& x, const Expr<f32>& y) {
  if constexpr (OP == BinaryOp::Add) return x + y;
  if constexpr (OP == BinaryOp::Sub) return x - y;
  if constexpr (OP == BinaryOp::Mul) return x * y;
  if constexpr (OP == BinaryOp::Div) return x / y;
}

/// The grid-stride loop of the same-shape kernels.
template <BinaryOp OP, class T>
void binary_same_shape(const Tensor<T>& a, const Tensor<T>& b, const Out<T>& out,
                       const Expr<u32>& n) {
  dispatch(elementwise);
  grid("[<= ceil_div(n, tpg), 1, 1]");
  layout(a, "[n]");
  layout(b, "[n]");
  layout(out, "[n]");
  for (auto i : range(global_id<0>(), n, grid_threads<0>())) {
    store(out[i], cast<T>(apply<OP>(cast<f32>(load(a[i])), cast<f32>(load(b[i])))));
  }
}

/// The per-row loop of the row-broadcast kernels: b is read at j, a and out at base + j.
template <BinaryOp OP, class T>
void binary_row(const Tensor<T>& a, const Tensor<T>& b, const Out<T>& out, const Expr<u32>& n) {
  dispatch(reduction, {at_most(1024)});
  grid("[any, 1, 1]");
  layout(a, "[groups.x, n]");
  layout(b, "[n]");
  layout(out, "[groups.x, n]");
  auto base = program_id<0>() * n;
  for (auto j : range(thread_id<0>(), n, group_size<0>())) {
    store(out[base + j], cast<T>(apply<OP>(cast<f32>(load(a[base + j])), cast<f32>(load(b[j])))));
  }
}

}  // namespace

IRON_KERNEL(iron_add, (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> n)) {
  binary_same_shape<BinaryOp::Add>(a, b, out, n);
}
IRON_KERNEL(iron_sub, (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> n)) {
  binary_same_shape<BinaryOp::Sub>(a, b, out, n);
}
IRON_KERNEL(iron_mul, (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> n)) {
  binary_same_shape<BinaryOp::Mul>(a, b, out, n);
}
IRON_KERNEL(iron_div, (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> n)) {
  binary_same_shape<BinaryOp::Div>(a, b, out, n);
}

IRON_KERNEL(iron_add_row, (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> n)) {
  binary_row<BinaryOp::Add>(a, b, out, n);
}
IRON_KERNEL(iron_sub_row, (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> n)) {
  binary_row<BinaryOp::Sub>(a, b, out, n);
}
IRON_KERNEL(iron_mul_row, (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> n)) {
  binary_row<BinaryOp::Mul>(a, b, out, n);
}
IRON_KERNEL(iron_div_row, (Tensor<T> a, Tensor<T> b, Out<T> out, Constexpr<u32> n)) {
  binary_row<BinaryOp::Div>(a, b, out, n);
}

namespace {

/// One 16-byte access per thread in groups of 256: each thread's loop runs once when n fills
/// whole vectors.
Geometry same_shape_geometry(const GeometryQuery& q) {
  return Geometry::elementwise(vector_count(q.constant("n"), q.dtype), q.threads_per_group(256));
}

/// One group per row, of one thread per 16-byte vector of the row (whole simdgroups, at most
/// 512): each thread's loop runs once for rows up to 512 vectors.
Geometry row_geometry(const GeometryQuery& q) {
  const std::uint64_t n = q.constant("n");
  return Geometry::per_row(q.tensor_elements("a") / std::max<std::uint64_t>(n, 1),
                           whole_simdgroups(vector_count(n, q.dtype), 512));
}

}  // namespace

IRON_GEOMETRY(iron_add) { return same_shape_geometry(q); }
IRON_GEOMETRY(iron_sub) { return same_shape_geometry(q); }
IRON_GEOMETRY(iron_mul) { return same_shape_geometry(q); }
IRON_GEOMETRY(iron_div) { return same_shape_geometry(q); }
IRON_GEOMETRY(iron_add_row) { return row_geometry(q); }
IRON_GEOMETRY(iron_sub_row) { return row_geometry(q); }
IRON_GEOMETRY(iron_mul_row) { return row_geometry(q); }
IRON_GEOMETRY(iron_div_row) { return row_geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

#include "elementwise_oracle.hpp"

namespace iron::kernels {

namespace {

const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "add";
    case BinaryOp::Sub:
      return "sub";
    case BinaryOp::Mul:
      return "mul";
    case BinaryOp::Div:
      return "div";
  }
  return "";
}

std::string kernel_name(BinaryOp op, bool row) {
  return std::string("iron_") + op_name(op) + (row ? "_row" : "");
}

/// The definition, in double: out[r, j] = a[r, j] op b[j mod len(b)] (len(b) = len(a) when
/// the shapes match, n when b is a broadcast row).
std::vector<float> binary_oracle(BinaryOp op, const std::vector<float>& a,
                                 const std::vector<float>& b, DType dt) {
  std::vector<float> y(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a[i];
    const double z = b[i % b.size()];
    const double r = op == BinaryOp::Add   ? x + z
                     : op == BinaryOp::Sub ? x - z
                     : op == BinaryOp::Mul ? x * z
                                           : x / z;
    y[i] = static_cast<float>(r);
  }
  return overflowing_as(std::move(y), dt);
}

/// Values of magnitude in [lo, hi) with random signs.
std::vector<float> magnitudes(std::size_t n, float lo, float hi, testing::Rng& rng) {
  auto v = rng.uniform(n, lo, hi);
  const auto sign = rng.uniform(n, -1.0f, 1.0f);
  for (std::size_t i = 0; i < n; ++i) v[i] = sign[i] < 0.0f ? -v[i] : v[i];
  return v;
}

/// a [rows, n] and b [n] (row) or [rows * n] (same shape) as given, rounded through dt.
testing::TestSetup binary_setup(BinaryOp op, bool row, std::size_t rows, std::size_t n,
                                std::vector<float> a, std::vector<float> b, runtime::Grid grid,
                                DType dt) {
  a = testing::round_through(a, dt);
  b = testing::round_through(b, dt);
  const std::size_t count = rows * n;
  return testing::TestSetup(kernel_name(op, row), dt)
      .input("a", a)
      .input("b", b)
      .output("out", count)
      .constant("n", static_cast<double>(row ? n : count))
      .expect("out", binary_oracle(op, a, b, dt))
      .tolerance(testing::tolerance::correctly_rounded(dt))
      .grid(grid);
}

/// Same shape, n elements uniform in [-8, 8), on `groups` groups of `tpg` threads.
testing::TestSetup same_shape_setup(BinaryOp op, std::size_t n, std::uint32_t groups,
                                    std::uint32_t tpg, DType dt, testing::Rng& rng) {
  auto a = rng.uniform(n, -8.0f, 8.0f);
  auto b = rng.uniform(n, -8.0f, 8.0f);
  return binary_setup(op, false, 1, n, a, b, {{groups}, {tpg}}, dt);
}

/// Same shape with both operands of magnitude in [lo, hi).
testing::TestSetup magnitude_setup(BinaryOp op, std::size_t n, float a_lo, float a_hi, float b_lo,
                                   float b_hi, DType dt, testing::Rng& rng) {
  auto a = magnitudes(n, a_lo, a_hi, rng);
  auto b = magnitudes(n, b_lo, b_hi, rng);
  return binary_setup(op, false, 1, n, a, b, {{4}, {128}}, dt);
}

/// Row broadcast: a [rows, n] and b [n] uniform in [-8, 8), one group of tpg threads per row.
testing::TestSetup row_setup(BinaryOp op, std::size_t rows, std::size_t n, std::uint32_t tpg,
                             DType dt, testing::Rng& rng) {
  auto a = rng.uniform(rows * n, -8.0f, 8.0f);
  auto b = rng.uniform(n, -8.0f, 8.0f);
  return binary_setup(op, true, rows, n, a, b, {{static_cast<std::uint32_t>(rows)}, {tpg}}, dt);
}

bench::BenchSetup same_shape_bench(BinaryOp op, std::size_t n, DType dt) {
  const std::size_t bytes = n * dtype_size(dt);
  bench::BenchSetup setup(kernel_name(op, false), dt);
  setup.random("a", n)
      .random("b", n, 0.5f, 2.0f)
      .output("out", n)
      .constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(3 * bytes)
      .flops(n)
      .peer(op_name(op), {{"n", static_cast<double>(n)}});
}

bench::BenchSetup row_bench(BinaryOp op, std::size_t rows, std::size_t n, DType dt) {
  bench::BenchSetup setup(kernel_name(op, true), dt);
  setup.random("a", rows * n)
      .random("b", n, 0.5f, 2.0f)
      .output("out", rows * n)
      .constant("n", static_cast<double>(n));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((2 * rows * n + n) * dtype_size(dt))
      .flops(rows * n)
      .peer(std::string(op_name(op)) + "_row",
            {{"rows", static_cast<double>(rows)}, {"n", static_cast<double>(n)}});
}

}  // namespace

IRON_TEST(iron_add, n64k, F32, F16, BF16) {
  return same_shape_setup(BinaryOp::Add, 1 << 16, 64, 256, dt, rng);
}
// n = 1001 is odd (no vector loop) and the grid of 3 x 128 threads loops three times.
IRON_TEST(iron_add, ragged_tail, F32, F16, BF16) {
  return same_shape_setup(BinaryOp::Add, 1001, 3, 128, dt, rng);
}
// Sums past 65504 overflow f16 to inf; f32 and bf16 hold them.
IRON_TEST(iron_add, large_magnitude, F32, F16, BF16) {
  return magnitude_setup(BinaryOp::Add, 999, 2e4f, 6e4f, 2e4f, 6e4f, dt, rng);
}

IRON_TEST(iron_sub, n64k, F32, F16, BF16) {
  return same_shape_setup(BinaryOp::Sub, 1 << 16, 64, 256, dt, rng);
}
// More threads than elements: one thread writes the only element, the rest never loop.
IRON_TEST(iron_sub, single_element, F32, F16, BF16) {
  return same_shape_setup(BinaryOp::Sub, 1, 1, 32, dt, rng);
}
IRON_TEST(iron_sub, ragged_tail, F32, F16, BF16) {
  return same_shape_setup(BinaryOp::Sub, 1001, 3, 128, dt, rng);
}

IRON_TEST(iron_mul, n64k, F32, F16, BF16) {
  return same_shape_setup(BinaryOp::Mul, 1 << 16, 64, 256, dt, rng);
}
// Products up to 1e6 overflow f16 to inf; products near 1e-6 are f16 subnormals.
IRON_TEST(iron_mul, large_and_tiny_magnitude, F32, F16, BF16) {
  return magnitude_setup(BinaryOp::Mul, 1001, 1e-3f, 1e3f, 1e-3f, 1e3f, dt, rng);
}

IRON_TEST(iron_div, n64k, F32, F16, BF16) {
  return same_shape_setup(BinaryOp::Div, 1 << 16, 64, 256, dt, rng);
}
// Divisors of magnitude 1e-6 to 1e-3 (f16 subnormals among them): quotients up to 8e6 overflow
// f16 to inf and must be exact in f32 and bf16.
IRON_TEST(iron_div, near_zero_divisor, F32, F16, BF16) {
  return magnitude_setup(BinaryOp::Div, 1001, 1.0f, 8.0f, 1e-6f, 1e-3f, dt, rng);
}

IRON_TEST(iron_add_row, rows8_n4096, F32, F16, BF16) {
  return row_setup(BinaryOp::Add, 8, 4096, 256, dt, rng);
}
// n = 999 is odd (no vector loop) and not a multiple of the group size.
IRON_TEST(iron_add_row, ragged_rows, F32, F16, BF16) {
  return row_setup(BinaryOp::Add, 3, 999, 64, dt, rng);
}

IRON_TEST(iron_sub_row, rows8_n4096, F32, F16, BF16) {
  return row_setup(BinaryOp::Sub, 8, 4096, 256, dt, rng);
}
// n = 1000 takes the vector loop (a multiple of 8) but is not a multiple of the group size.
IRON_TEST(iron_sub_row, vector_ragged_rows, F32, F16, BF16) {
  return row_setup(BinaryOp::Sub, 3, 1000, 64, dt, rng);
}

IRON_TEST(iron_mul_row, rows8_n4096, F32, F16, BF16) {
  return row_setup(BinaryOp::Mul, 8, 4096, 256, dt, rng);
}
// Rows of one element: b has one element, read by thread 0 of every group.
IRON_TEST(iron_mul_row, single_element_rows, F32, F16, BF16) {
  return row_setup(BinaryOp::Mul, 5, 1, 32, dt, rng);
}

IRON_TEST(iron_div_row, rows8_n4096, F32, F16, BF16) {
  return row_setup(BinaryOp::Div, 8, 4096, 256, dt, rng);
}
IRON_TEST(iron_div_row, ragged_rows, F32, F16, BF16) {
  return row_setup(BinaryOp::Div, 3, 999, 64, dt, rng);
}

IRON_BENCH(iron_add, n64m, F32, F16, BF16) {
  return same_shape_bench(BinaryOp::Add, std::size_t{1} << 26, dt);
}
IRON_BENCH(iron_sub, n64m, F32, F16, BF16) {
  return same_shape_bench(BinaryOp::Sub, std::size_t{1} << 26, dt);
}
IRON_BENCH(iron_mul, n64m, F32, F16, BF16) {
  return same_shape_bench(BinaryOp::Mul, std::size_t{1} << 26, dt);
}
IRON_BENCH(iron_div, n64m, F32, F16, BF16) {
  return same_shape_bench(BinaryOp::Div, std::size_t{1} << 26, dt);
}

IRON_BENCH(iron_add_row, rows16384_n4096, F32, F16, BF16) {
  return row_bench(BinaryOp::Add, 16384, 4096, dt);
}
IRON_BENCH(iron_sub_row, rows16384_n4096, F32, F16, BF16) {
  return row_bench(BinaryOp::Sub, 16384, 4096, dt);
}
IRON_BENCH(iron_mul_row, rows16384_n4096, F32, F16, BF16) {
  return row_bench(BinaryOp::Mul, 16384, 4096, dt);
}
IRON_BENCH(iron_div_row, rows16384_n4096, F32, F16, BF16) {
  return row_bench(BinaryOp::Div, 16384, 4096, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
