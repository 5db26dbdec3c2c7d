/// Probe kernels of the fragment layer: each runs one fragment op of one simdgroup on small
/// integers, whose products and sums are exact in f32, so every target and strategy must give
/// the simulator's result bit for bit (docs/tensor-cores.md).
///
/// - iron_mma_probe_{rr,rc,cr,cc}: out = a·b + c for a 32×32, b 32×16 and c 32×16, with a and b
///   read from shared memory (ldmatrix on the mma.sync strategy) in the layouts the suffix names
///   (r: row-major, c: column-major; a first).
/// - iron_fragment_copy_probe_{a,b,acc}_{row,col}: a fragment of each role read from `inp` and
///   written to `out` in the same layout (accumulators in f32 whatever T is): the lane map's
///   loads and stores are each other's inverse.
/// - iron_fragment_coord_probe: each lane writes, for every accumulator element it holds,
///   row · 32 + col at (row, col): out must be 0, 1, 2, …
///
/// ## Error bound
/// Exact: small integers.
///
/// ## Layout
/// - mma: `a [32, 32]` T (or its transpose), `b [32, 16]` T (or `[16, 32]`), `c [32, 16]` f32,
///   `out [32, 16]` f32
/// - copy: `inp [1024]` T (f32 for acc), `out [1024]` T (f32 for acc)
/// - coord: `out [32 · 32]` f32
///
/// ## Dispatch
/// Tiled: one group of exactly 32 threads.
#include <cmath>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr std::uint32_t kM = 32, kN = 16, kK = 32;

/// Copies `count` elements of `src` to `dst`, one simdgroup.
template <class T>
void to_shared(const Tensor<T>& src, const Shared<T>& dst, std::uint32_t count) {
  for (auto i : range(lane_id(), count, 32u)) store(dst[i], load(src[i]));
}
}  // namespace

IRON_KERNEL_TEMPLATE(iron_mma_probe, (MatrixLayout A_LAYOUT, MatrixLayout B_LAYOUT),
                     (Tensor<T> a, Tensor<T> b, Tensor<f32> c, Out<f32> out)) {
  dispatch(tiled, {exactly(32)});
  grid("[1, 1, 1]");
  layout(a, "[1024]");
  layout(b, "[512]");
  layout(c, "[512]");
  layout(out, "[512]");
  auto shared_a = shared<T>(kM * kK);
  auto shared_b = shared<T>(kK * kN);
  to_shared<T>(a, shared_a, kM * kK);
  to_shared<T>(b, shared_b, kK * kN);
  barrier();
  FragA<T, kM, kK> fa;
  FragB<T, kK, kN> fb;
  FragAcc<kM, kN> acc;
  fa.load(shared_a, 0u, A_LAYOUT == row_major ? kK : kM, A_LAYOUT);
  fb.load(shared_b, 0u, B_LAYOUT == row_major ? kN : kK, B_LAYOUT);
  acc.load(c, 0u, kN);
  mma(acc, fa, fb);
  acc.store(out, 0u, kN);
}
IRON_KERNEL_VARIANT(iron_mma_probe, rr, MatrixLayout::RowMajor, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_mma_probe, rc, MatrixLayout::RowMajor, MatrixLayout::ColMajor);
IRON_KERNEL_VARIANT(iron_mma_probe, cr, MatrixLayout::ColMajor, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_mma_probe, cc, MatrixLayout::ColMajor, MatrixLayout::ColMajor);

IRON_KERNEL_TEMPLATE(iron_fragment_copy_probe, (FragmentRole ROLE, MatrixLayout LAYOUT),
                     (Tensor<T> inp, Out<T> out)) {
  dispatch(tiled, {exactly(32)});
  grid("[1, 1, 1]");
  layout(inp, "[1024]");
  layout(out, "[1024]");
  // 32×32: whole tiles of A (16×16) and B (16×8).
  Fragment<T, ROLE, 32, 32> f;
  f.load(inp, 0u, 32u, LAYOUT);
  f.store(out, 0u, 32u, LAYOUT);
}
IRON_KERNEL_VARIANT(iron_fragment_copy_probe, a_row, FragmentRole::A, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_fragment_copy_probe, a_col, FragmentRole::A, MatrixLayout::ColMajor);
IRON_KERNEL_VARIANT(iron_fragment_copy_probe, b_row, FragmentRole::B, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_fragment_copy_probe, b_col, FragmentRole::B, MatrixLayout::ColMajor);

/// Accumulators hold f32 whatever T is.
IRON_KERNEL_TEMPLATE(iron_fragment_copy_probe_acc, (MatrixLayout LAYOUT),
                     (Tensor<f32> inp, Out<f32> out)) {
  dispatch(tiled, {exactly(32)});
  grid("[1, 1, 1]");
  layout(inp, "[1024]");
  layout(out, "[1024]");
  FragAcc<32, 32> f;
  f.load(inp, 0u, 32u, LAYOUT);
  f.store(out, 0u, 32u, LAYOUT);
}
IRON_KERNEL_VARIANT(iron_fragment_copy_probe_acc, row, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_fragment_copy_probe_acc, col, MatrixLayout::ColMajor);

IRON_KERNEL(iron_fragment_coord_probe, (Out<T> out)) {
  dispatch(tiled, {exactly(32)});
  grid("[1, 1, 1]");
  layout(out, "[1024]");
  FragAcc<32, 32> f;
  f.map([&](const Expr<f32>&, const Expr<u32>& r, const Expr<u32>& c) {
    return cast<f32>(r * 32u + c);
  });
  for (std::uint32_t slot = 0; slot < FragAcc<32, 32>::elements; ++slot) {
    store(out[f.row(slot) * 32u + f.col(slot)], cast<T>(f.get(slot)));
  }
}

// Every probe is one simdgroup.
IRON_GEOMETRY(iron_mma_probe_rr) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_mma_probe_rc) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_mma_probe_cr) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_mma_probe_cc) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_fragment_copy_probe_a_row) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_fragment_copy_probe_a_col) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_fragment_copy_probe_b_row) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_fragment_copy_probe_b_col) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_fragment_copy_probe_acc_row) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_fragment_copy_probe_acc_col) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_fragment_coord_probe) { return {{1, 1, 1}, {32, 1, 1}}; }

}  // namespace iron::kernels

// The tests: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// Integers in [-4, 4]: every product and every sum of 32 of them is exact in f32.
std::vector<float> small_integers(std::size_t n, testing::Rng& rng) {
  std::vector<float> x = rng.uniform(n, -4.0f, 5.0f);
  for (float& v : x) v = std::floor(v);
  return x;
}

/// ±2^j for j in -3 … 3 (and zeros): exact in every dtype, and so are their products and the
/// sums of 32 products (at most 2^11 apart).
std::vector<float> powers_of_two(std::size_t n, testing::Rng& rng) {
  std::vector<float> x = rng.uniform(n, -4.0f, 4.0f);
  for (float& v : x) {
    const float e = std::floor(std::fabs(v) * 2.0f) - 3.0f;  // -3 … 4; 4 stands for zero
    v = e > 3.0f ? 0.0f : std::copysign(std::ldexp(1.0f, static_cast<int>(e)), v);
  }
  return x;
}

using Values = std::vector<float> (*)(std::size_t, testing::Rng&);

/// Element (r, c) of an r × c matrix held row-major (`col` false) or column-major.
float at(const std::vector<float>& x, std::size_t rows, std::size_t cols, bool col, std::size_t r,
         std::size_t c) {
  return col ? x[c * rows + r] : x[r * cols + c];
}

testing::TestSetup mma_probe(const std::string& kernel, bool a_col, bool b_col, DType dt,
                             testing::Rng& rng, Values values) {
  constexpr std::size_t kSizeA = std::size_t{kM} * kK;
  constexpr std::size_t kSizeB = std::size_t{kK} * kN;
  constexpr std::size_t kSizeC = std::size_t{kM} * kN;
  const auto a = values(kSizeA, rng);
  const auto b = values(kSizeB, rng);
  const auto c = values(kSizeC, rng);
  std::vector<float> want(kSizeC);
  for (std::size_t i = 0; i < kM; ++i) {
    for (std::size_t j = 0; j < kN; ++j) {
      double sum = c[i * kN + j];
      for (std::size_t p = 0; p < kK; ++p)
        sum += at(a, kM, kK, a_col, i, p) * at(b, kK, kN, b_col, p, j);
      want[i * kN + j] = static_cast<float>(sum);
    }
  }
  return testing::TestSetup(kernel, dt)
      .input("a", a)
      .input("b", b)
      .input("c", c)
      .output("out", kSizeC)
      .expect("out", want)
      .tolerance(testing::tolerance::exact())
      .grid({{1, 1, 1}, {32, 1, 1}});
}

testing::TestSetup copy_probe(const std::string& kernel, DType dt, testing::Rng& rng,
                              Values values) {
  const auto x = values(1024, rng);
  return testing::TestSetup(kernel, dt)
      .input("inp", x)
      .output("out", 1024)
      .expect("out", x)
      .tolerance(testing::tolerance::exact())
      .grid({{1, 1, 1}, {32, 1, 1}});
}

}  // namespace

IRON_TEST(iron_mma_probe_rr, small_integers, F32, F16, BF16) {
  return mma_probe("iron_mma_probe_rr", false, false, dt, rng, small_integers);
}
IRON_TEST(iron_mma_probe_rr, powers_of_two, F32, F16, BF16) {
  return mma_probe("iron_mma_probe_rr", false, false, dt, rng, powers_of_two);
}
IRON_TEST(iron_mma_probe_rc, small_integers, F32, F16, BF16) {
  return mma_probe("iron_mma_probe_rc", false, true, dt, rng, small_integers);
}
IRON_TEST(iron_mma_probe_rc, powers_of_two, F32, F16, BF16) {
  return mma_probe("iron_mma_probe_rc", false, true, dt, rng, powers_of_two);
}
IRON_TEST(iron_mma_probe_cr, small_integers, F32, F16, BF16) {
  return mma_probe("iron_mma_probe_cr", true, false, dt, rng, small_integers);
}
IRON_TEST(iron_mma_probe_cr, powers_of_two, F32, F16, BF16) {
  return mma_probe("iron_mma_probe_cr", true, false, dt, rng, powers_of_two);
}
IRON_TEST(iron_mma_probe_cc, small_integers, F32, F16, BF16) {
  return mma_probe("iron_mma_probe_cc", true, true, dt, rng, small_integers);
}
IRON_TEST(iron_mma_probe_cc, powers_of_two, F32, F16, BF16) {
  return mma_probe("iron_mma_probe_cc", true, true, dt, rng, powers_of_two);
}
IRON_TEST(iron_fragment_copy_probe_a_row, small_integers, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_a_row", dt, rng, small_integers);
}
IRON_TEST(iron_fragment_copy_probe_a_row, powers_of_two, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_a_row", dt, rng, powers_of_two);
}
IRON_TEST(iron_fragment_copy_probe_a_col, small_integers, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_a_col", dt, rng, small_integers);
}
IRON_TEST(iron_fragment_copy_probe_a_col, powers_of_two, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_a_col", dt, rng, powers_of_two);
}
IRON_TEST(iron_fragment_copy_probe_b_row, small_integers, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_b_row", dt, rng, small_integers);
}
IRON_TEST(iron_fragment_copy_probe_b_row, powers_of_two, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_b_row", dt, rng, powers_of_two);
}
IRON_TEST(iron_fragment_copy_probe_b_col, small_integers, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_b_col", dt, rng, small_integers);
}
IRON_TEST(iron_fragment_copy_probe_b_col, powers_of_two, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_b_col", dt, rng, powers_of_two);
}
IRON_TEST(iron_fragment_copy_probe_acc_row, small_integers, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_acc_row", dt, rng, small_integers);
}
IRON_TEST(iron_fragment_copy_probe_acc_row, powers_of_two, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_acc_row", dt, rng, powers_of_two);
}
IRON_TEST(iron_fragment_copy_probe_acc_col, small_integers, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_acc_col", dt, rng, small_integers);
}
IRON_TEST(iron_fragment_copy_probe_acc_col, powers_of_two, F32, F16, BF16) {
  return copy_probe("iron_fragment_copy_probe_acc_col", dt, rng, powers_of_two);
}
IRON_TEST(iron_fragment_coord_probe, positions, F32, F16, BF16) {
  std::vector<float> want(1024);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<float>(i);
  return testing::TestSetup("iron_fragment_coord_probe", dt)
      .output("out", 1024)
      .expect("out", want)
      .tolerance(testing::tolerance::stored(dt, 0.0, 0.0))
      .grid({{1, 1, 1}, {32, 1, 1}});
}
// The same, launched on the grid its geometry chooses.
IRON_TEST(iron_fragment_coord_probe, positions_by_geometry, F32, F16, BF16) {
  std::vector<float> want(1024);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<float>(i);
  testing::TestSetup setup("iron_fragment_coord_probe", dt);
  setup.output("out", 1024).expect("out", want).tolerance(testing::tolerance::stored(dt, 0.0, 0.0));
  return setup.grid(testing::geometry_grid(setup));
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
