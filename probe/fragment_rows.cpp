/// Probe kernels of the fragment row ops and conversion: each runs one op on one simdgroup's
/// 32×32 accumulator, whose values are small integers (or halves, for the conversion) so that
/// every target and strategy must give the simulator's result bit for bit
/// (docs/tensor-cores.md).
///
/// - iron_fragment_rowreduce_probe_{max,sum}: row r of `out` (32×8) holds, in every column, the
///   max (sum) of row r of `inp`.
/// - iron_fragment_rowvalue_probe: out = (inp − row max)·256 + row sum, element by element, the
///   row values read with row_value() in a map.
/// - iron_fragment_convert_probe: out = inp rounded to nearest T through an A fragment.
///
/// ## Error bound
/// Exact: small integers, and one rounding to T for the conversion.
///
/// ## Layout
/// - rowreduce: `inp [32, 32]` T, `out [32, 8]` f32
/// - rowvalue: `inp [32, 32]` T, `out [32, 32]` f32
/// - convert: `inp [32, 32]` f32, `out [32, 32]` T
///
/// ## Dispatch
/// Tiled: one group of exactly 32 threads.
#include <cmath>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr std::uint32_t kRows = 32, kCols = 32;

/// An accumulator holding inp (row-major, T) element by element.
template <class T>
void load_rows(FragAcc<kRows, kCols>& acc, const Tensor<T>& inp) {
  acc.map([&](const Expr<f32>&, const Expr<u32>& r, const Expr<u32>& c) {
    return cast<f32>(load(inp[r * kCols + c]));
  });
}
}  // namespace

IRON_KERNEL_TEMPLATE(iron_fragment_rowreduce_probe, (RowReduction REDUCTION),
                     (Tensor<T> inp, Out<f32> out)) {
  dispatch(tiled, {exactly(32)});
  grid("[1, 1, 1]");
  layout(inp, "[1024]");
  layout(out, "[256]");
  FragAcc<kRows, kCols> acc;
  load_rows<T>(acc, inp);
  if constexpr (REDUCTION == RowReduction::Max) {
    acc.row_max().store(out, 0u, 8u);
  } else {
    acc.row_sum().store(out, 0u, 8u);
  }
}
IRON_KERNEL_VARIANT(iron_fragment_rowreduce_probe, max, RowReduction::Max);
IRON_KERNEL_VARIANT(iron_fragment_rowreduce_probe, sum, RowReduction::Sum);

IRON_KERNEL(iron_fragment_rowvalue_probe, (Tensor<T> inp, Out<f32> out)) {
  dispatch(tiled, {exactly(32)});
  grid("[1, 1, 1]");
  layout(inp, "[1024]");
  layout(out, "[1024]");
  FragAcc<kRows, kCols> acc;
  load_rows<T>(acc, inp);
  const auto maxima = acc.row_max();
  const auto sums = acc.row_sum();
  acc.map([&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>&, std::uint32_t slot) {
    return (x - acc.row_value(maxima, slot)) * 256.0f + acc.row_value(sums, slot);
  });
  acc.store(out, 0u, kCols);
}

IRON_KERNEL(iron_fragment_convert_probe, (Tensor<f32> inp, Out<T> out)) {
  dispatch(tiled, {exactly(32)});
  grid("[1, 1, 1]");
  layout(inp, "[1024]");
  layout(out, "[1024]");
  FragAcc<kRows, kCols> acc;
  acc.load(inp, 0u, kCols);
  acc.to_a<T>().store(out, 0u, kCols);
}

// Every probe is one simdgroup.
IRON_GEOMETRY(iron_fragment_rowreduce_probe_max) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_fragment_rowreduce_probe_sum) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_fragment_rowvalue_probe) { return {{1, 1, 1}, {32, 1, 1}}; }
IRON_GEOMETRY(iron_fragment_convert_probe) { return {{1, 1, 1}, {32, 1, 1}}; }

}  // namespace iron::kernels

// The tests: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// Integers in [-4, 4]: exact in every dtype, and so are the sums of 32 of them.
std::vector<float> small_integers(std::size_t n, testing::Rng& rng) {
  std::vector<float> x = rng.uniform(n, -4.0f, 5.0f);
  for (float& v : x) v = std::floor(v);
  return x;
}

/// Row r's max and sum of a row-major kRows × kCols matrix.
float row_max(const std::vector<float>& x, std::size_t r) {
  float m = x[r * kCols];
  for (std::size_t c = 1; c < kCols; ++c) m = std::max(m, x[r * kCols + c]);
  return m;
}
float row_sum(const std::vector<float>& x, std::size_t r) {
  double s = 0.0;
  for (std::size_t c = 0; c < kCols; ++c) s += x[r * kCols + c];
  return static_cast<float>(s);
}

testing::TestSetup rowreduce_probe(const std::string& kernel, bool sum, DType dt,
                                   testing::Rng& rng) {
  const auto x = small_integers(std::size_t{kRows} * kCols, rng);
  std::vector<float> want(std::size_t{kRows} * 8);
  for (std::size_t i = 0; i < want.size(); ++i) {
    want[i] = sum ? row_sum(x, i / 8) : row_max(x, i / 8);
  }
  return testing::TestSetup(kernel, dt)
      .input("inp", x)
      .output("out", want.size())
      .expect("out", want)
      .tolerance(testing::tolerance::exact())
      .grid({{1, 1, 1}, {32, 1, 1}});
}

/// x rounded to the nearest number of `bits` significant bits, ties to the even one (the
/// magnitudes here are far from overflow and subnormals).
float round_to_bits(double x, int bits) {
  if (x == 0.0) return 0.0f;
  const double spacing = std::ldexp(1.0, std::ilogb(x) - (bits - 1));
  return static_cast<float>(std::nearbyint(x / spacing) * spacing);
}

}  // namespace

IRON_TEST(iron_fragment_rowreduce_probe_max, small_integers, F32, F16, BF16) {
  return rowreduce_probe("iron_fragment_rowreduce_probe_max", false, dt, rng);
}
IRON_TEST(iron_fragment_rowreduce_probe_sum, small_integers, F32, F16, BF16) {
  return rowreduce_probe("iron_fragment_rowreduce_probe_sum", true, dt, rng);
}
IRON_TEST(iron_fragment_rowvalue_probe, small_integers, F32, F16, BF16) {
  const auto x = small_integers(std::size_t{kRows} * kCols, rng);
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    want[i] = (x[i] - row_max(x, i / kCols)) * 256.0f + row_sum(x, i / kCols);
  }
  return testing::TestSetup("iron_fragment_rowvalue_probe", dt)
      .input("inp", x)
      .output("out", x.size())
      .expect("out", want)
      .tolerance(testing::tolerance::exact())
      .grid({{1, 1, 1}, {32, 1, 1}});
}
// Halves up to ±4096: ties and inexact values for f16 (11 bits) and bf16 (8 bits).
IRON_TEST(iron_fragment_convert_probe, halves, F32, F16, BF16) {
  std::vector<float> x = rng.uniform(std::size_t{kRows} * kCols, -4096.0f, 4096.0f);
  for (float& v : x) v = std::floor(v * 2.0f) / 2.0f;
  const int bits = dt == DType::F16 ? 11 : dt == DType::BF16 ? 8 : 24;
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = round_to_bits(x[i], bits);
  return testing::TestSetup("iron_fragment_convert_probe", dt)
      .input("inp", x)
      .output("out", x.size())
      .expect("out", want)
      .tolerance(testing::tolerance::exact())
      .grid({{1, 1, 1}, {32, 1, 1}});
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
