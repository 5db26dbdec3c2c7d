/// iron_fp8_convert_probe: each f32 input rounded to e4m3 and to e5m2 and read back as f32, so
/// that every target's conversion (CUDA's instruction on sm_89 and later, the prelude's
/// arithmetic elsewhere, Metal's, the simulator's) is checked against the formats' definition on
/// the cases where they could part: ties to even in normal and subnormal ranges, the largest
/// finite values and what lies past them, infinities, signed values, NaN.
///
/// ## Error bound
/// Exact: every output is the one value the definition gives (nearest, ties to even; magnitudes
/// past the largest finite value, infinities included, saturate to it). A NaN result is written
/// as kNanMark, a value neither format holds, since a NaN never compares equal.
///
/// ## Layout
/// - `x [n]` f32, `e4m3 [n]` f32, `e5m2 [n]` f32
///
/// ## Dispatch
/// Elementwise: `ceil(n / tpg)` groups of `tpg` threads; threads past `n` do nothing.
#include <iron/iron.hpp>
#include <limits>

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr float kNanMark = 1.0e30f;  ///< stands for a NaN result

/// v rounded to F and back, NaN as kNanMark.
template <class F>
Expr<f32> round_trip(const Expr<f32>& v) {
  auto r = cast<f32>(cast<F>(v));
  return select(r != r, Expr<f32>(kNanMark), r);
}
}  // namespace

IRON_KERNEL(iron_fp8_convert_probe,
            (Tensor<f32> x, Out<f32> e4m3, Out<f32> e5m2, Constexpr<u32> n)) {
  dispatch(elementwise);
  grid("[ceil_div(n, tpg), 1, 1]");
  layout(x, "[n]");
  layout(e4m3, "[n]");
  layout(e5m2, "[n]");
  auto i = program_id<0>();
  IRON_IF(i < n) {
    auto v = load(x[i]);
    store(e4m3[i], round_trip<f8e4m3>(v));
    store(e5m2[i], round_trip<f8e5m2>(v));
  }
}

IRON_GEOMETRY(iron_fp8_convert_probe) {
  return Geometry::elementwise(q.constant("n"), q.threads_per_group(64));
}

}  // namespace iron::kernels

#if IRON_KERNEL_TESTS
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// An input and what each format makes of it, worked out from the formats: e4m3 (OCP e4m3fn)
/// has 3 mantissa bits, normals from 2^-6, subnormal steps of 2^-9 and 448 as its largest
/// value; e5m2 has 2 mantissa bits, normals from 2^-14, steps of 2^-16 below and 57344 largest.
struct Case {
  float x, e4m3, e5m2;
};

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

const std::vector<Case>& cases() {
  static const std::vector<Case> table = {
      {0.0f, 0.0f, 0.0f},
      {1.0f, 1.0f, 1.0f},
      {-2.5f, -2.5f, -2.5f},
      // 1 + 1/16: an e4m3 tie between 1 and 1.125 (to 1, the even one); e5m2 rounds it to 1.
      {1.0625f, 1.0f, 1.0f},
      // 1 + 3/16: an e4m3 tie between 1.125 and 1.25 (to 1.25); e5m2: nearer 1.25.
      {1.1875f, 1.25f, 1.25f},
      // 1.125: an e5m2 tie between 1 and 1.25 (to 1); e4m3 holds it.
      {1.125f, 1.125f, 1.0f},
      // 1.375: an e5m2 tie between 1.25 and 1.5 (to 1.5); e4m3 holds it.
      {1.375f, 1.375f, 1.5f},
      // Just above the e4m3 tie at 1.0625.
      {1.0625001f, 1.125f, 1.0f},
      {448.0f, 448.0f, 448.0f},
      // 464: e4m3's tie between 448 and 480 (past the largest: to 448, even, as saturation
      // would); e5m2 holds 448 and 512 around it, nearer 448.
      {464.0f, 448.0f, 448.0f},
      // 481 rounds past 448 in e4m3 and saturates; e5m2: past its tie at 480, to 512.
      {481.0f, 448.0f, 512.0f},
      {-1.0e6f, -448.0f, -57344.0f},
      {57344.0f, 448.0f, 57344.0f},
      // 61440: e5m2's tie between 57344 and 65536 (past the largest): saturated.
      {61440.0f, 448.0f, 57344.0f},
      {kInf, 448.0f, 57344.0f},
      {-kInf, -448.0f, -57344.0f},
      {kNan, kNanMark, kNanMark},
      {-kNan, kNanMark, kNanMark},
      // e4m3 subnormals: one step; half a step (a tie, to 0); a step and a half (a tie, to two).
      {0.001953125f, 0.001953125f, 0.001953125f},
      {0.0009765625f, 0.0f, 0.0009765625f},
      {0.0029296875f, 0.00390625f, 0.0029296875f},
      // 7.5 steps (1.111b · 2^-7): in e4m3 a tie between 7 steps and the smallest normal, in
      // e5m2 between 1.11b · 2^-7 and 2^-6: both to 2^-6, the even one.
      {0.0146484375f, 0.015625f, 0.015625f},
      {-0.0146484375f, -0.015625f, -0.015625f},
      // e5m2 subnormals: one step (2^-16); half a step (to 0); a step and a half (to two).
      {1.52587890625e-05f, 0.0f, 1.52587890625e-05f},
      {7.62939453125e-06f, 0.0f, 0.0f},
      {2.288818359375e-05f, 0.0f, 3.0517578125e-05f},
  };
  return table;
}

/// Every case `repeats` times over, expected exactly.
testing::TestSetup convert_setup(int repeats, DType dt) {
  std::vector<float> x;
  std::vector<float> want_e4m3;
  std::vector<float> want_e5m2;
  for (int rep = 0; rep < repeats; ++rep) {
    for (const Case& c : cases()) {
      x.push_back(c.x);
      want_e4m3.push_back(c.e4m3);
      want_e5m2.push_back(c.e5m2);
    }
  }
  testing::TestSetup setup("iron_fp8_convert_probe", dt);
  setup.input("x", x)
      .output("e4m3", x.size())
      .output("e5m2", x.size())
      .constant("n", static_cast<double>(x.size()))
      .expect("e4m3", want_e4m3)
      .expect("e5m2", want_e5m2)
      .tolerance(testing::tolerance::exact());
  return setup.grid(testing::geometry_grid(setup));
}

}  // namespace

IRON_TEST(iron_fp8_convert_probe, rounding_and_saturation, F32) { return convert_setup(1, dt); }

// The same cases over many groups.
IRON_TEST(iron_fp8_convert_probe, many_groups, F32) { return convert_setup(40, dt); }

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
