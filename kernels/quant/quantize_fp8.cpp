/// iron_quantize_fp8_e4m3_g128: q[i] = e4m3(x[i] / scale[g]), scale[g] = amax_g / 448 for each
/// group g of 128 consecutive elements (amax_g = max |x| over the group; a group of zeros gets
/// scale 1): the dynamic 1×128 quantization of activations that fp8 inference feeds to its
/// products (x ≈ scale · q), as DeepSeek-V3's recipe (§3.3) and TransformerEngine's block
/// scaling do. iron_gemm_fp8_*_nk takes per-tensor scales; a group's scale applies to its
/// 128 elements of one row when the row length is a multiple of 128.
///
/// ## Error bound
/// The scale is amax / 448 rounded once in f32, the quotient x / scale once in f32, then the
/// rounding to e4m3 (nearest even, saturated: |x / scale| ≤ 448 up to the f32 roundings): the
/// result is the oracle's bit for bit but where an f32 rounding moves a quotient across an e4m3
/// midpoint, one e4m3 unit (2^-4 relative) away.
///
/// ## Layout
/// - `x [blocks * 128]` T, `q [blocks * 128]` f8e4m3, `scales [blocks]` f32 (`blocks` groups of
///   128)
///
/// ## Dispatch
/// Reduction: a simdgroup per group, 4 elements a lane (a lane's 4 consecutive elements), the
/// amax by simd_max. Groups of threads of any multiple of 32 up to 1024.
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr std::uint32_t kGroup = 128;  ///< elements sharing a scale
constexpr std::uint32_t kPerLane = kGroup / 32;
constexpr float kLargestE4M3 = 448.0f;
}  // namespace

IRON_KERNEL(iron_quantize_fp8_e4m3_g128,
            (Tensor<T> x, Out<f8e4m3> q, Out<f32> scales, Constexpr<u32> blocks)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[ceil_div(blocks * 32, tpg), 1, 1]");
  layout(x, "[blocks * 128]");
  layout(q, "[blocks * 128]");
  layout(scales, "[blocks]");
  auto group = program_id<0>() * simdgroup_count() + simdgroup_id();
  IRON_IF(group < blocks) {
    auto first = group * kGroup + lane_id() * kPerLane;
    Var<f32> amax = 0.0f;
    for (std::uint32_t i = 0; i < kPerLane; ++i) {
      amax = max(Expr<f32>(amax), abs(cast<f32>(load(x[first + i]))));
    }
    auto peak = simd_max(Expr<f32>(amax));
    auto scale = select(peak > 0.0f, peak / kLargestE4M3, Expr<f32>(1.0f));
    for (std::uint32_t i = 0; i < kPerLane; ++i) {
      store(q[first + i], cast<f8e4m3>(cast<f32>(load(x[first + i])) / scale));
    }
    IRON_IF(lane_id() == 0u) { store(scales[group], scale); }
  }
}

IRON_GEOMETRY(iron_quantize_fp8_e4m3_g128) {
  const std::uint64_t groups = std::max<std::uint64_t>(q.constant("blocks"), 1);
  const std::uint32_t tpg = q.threads_per_group(whole_simdgroups(32 * groups, 256));
  return Geometry::per_row((32 * groups + tpg - 1) / tpg, tpg);
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <cmath>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/core/fp8.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// The definition: each group's scale and quantized values, in f32 as stated.
struct Quantized {
  std::vector<float> q;
  std::vector<float> scales;
};

Quantized quantize_oracle(const std::vector<float>& x, std::size_t groups) {
  Quantized out;
  for (std::size_t g = 0; g < groups; ++g) {
    float amax = 0.0f;
    for (std::size_t i = 0; i < kGroup; ++i) amax = std::max(amax, std::fabs(x[g * kGroup + i]));
    const float scale = amax > 0.0f ? amax / kLargestE4M3 : 1.0f;
    out.scales.push_back(scale);
    for (std::size_t i = 0; i < kGroup; ++i) {
      out.q.push_back(round_to_f8e4m3(x[g * kGroup + i] / scale));
    }
  }
  return out;
}

/// `groups` groups of values spread over `decades` powers of ten around 1 (both signs), the
/// group `zero_group` all zeros (none when past the end).
testing::TestSetup quantize_setup(std::size_t groups, float decades, std::size_t zero_group,
                                  DType dt, testing::Rng& rng) {
  std::vector<float> x = rng.uniform(groups * kGroup, -1.0f, 1.0f);
  const std::vector<float> exponents = rng.uniform(groups * kGroup, -decades, decades);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] *= std::pow(10.0f, exponents[i]);
  for (std::size_t i = 0; i < kGroup && zero_group < groups; ++i) x[zero_group * kGroup + i] = 0;
  x = testing::round_through(x, dt);
  const Quantized want = quantize_oracle(x, groups);
  testing::TestSetup setup("iron_quantize_fp8_e4m3_g128", dt);
  setup.input("x", x)
      .output("q", groups * kGroup)
      .output("scales", groups)
      .constant("blocks", static_cast<double>(groups))
      .expect("q", want.q)
      .expect("scales", want.scales)
      .tolerance("q", testing::tolerance::stored(DType::F8E4M3, 0.0, testing::tolerance::gamma(2)))
      .tolerance("scales", testing::tolerance::stored(DType::F32, 0.0, 0.0));
  return setup.grid(testing::geometry_grid(setup));
}

}  // namespace

// Activations over four decades, a group of zeros among them; one group; the dtype's extremes.
IRON_TEST(iron_quantize_fp8_e4m3_g128, rows_300_groups, F32, F16, BF16) {
  return quantize_setup(300, 2.0f, 7, dt, rng);
}
IRON_TEST(iron_quantize_fp8_e4m3_g128, one_group, F32, F16, BF16) {
  return quantize_setup(1, 0.5f, 1, dt, rng);
}
IRON_TEST(iron_quantize_fp8_e4m3_g128, wide_range_33_groups, F32, BF16) {
  return quantize_setup(33, 20.0f, 40, dt, rng);
}

// A batch of 4096 tokens' 4096-wide activations: read T, write a byte and a scale per 128.
IRON_BENCH(iron_quantize_fp8_e4m3_g128, x4096x4096, BF16) {
  constexpr std::size_t kElements = std::size_t{4096} * 4096;
  constexpr std::size_t kBlocks = kElements / kGroup;
  bench::BenchSetup setup("iron_quantize_fp8_e4m3_g128", dt);
  setup.random("x", kElements)
      .output("q", kElements)
      .output("scales", kBlocks)
      .constant("blocks", static_cast<double>(kBlocks));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(kElements * (dtype_size(dt) + 1) + kBlocks * 4)
      .peer("quantize_fp8_g128", {{"blocks", static_cast<double>(kBlocks)}});
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
