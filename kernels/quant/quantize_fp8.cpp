/// iron_quantize_fp8_e4m3_g128: q[i] = e4m3(x[i] / scale[g]), scale[g] = amax_g / 448 for each
/// group g of 128 consecutive elements (amax_g = max |x| over the group; a group of zeros gets
/// scale 1): the dynamic 1×128 quantization of activations that fp8 inference feeds to its
/// products (x ≈ scale · q), as DeepSeek-V3's recipe (§3.3) and TransformerEngine's block
/// scaling do: with a row length a multiple of 128, the scale_a of iron_gemm_fp8_blockwise_*.
/// iron_quantize_fp8_e4m3_b128x128 does the same for a weight [rows, cols] in 128×128 blocks
/// (scales [ceil(rows / 128), ceil(cols / 128)], the blocks at the edges partial): the scale_b
/// of the blockwise products.
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
/// - b128x128: `w [rows, cols]` T, `q [rows, cols]` f8e4m3, `scales [ceil(rows / 128),
///   ceil(cols / 128)]` f32
///
/// ## Dispatch
/// Reduction: a simdgroup per group, 4 elements a lane (a lane's 4 consecutive elements), the
/// amax by simd_max. Groups of threads of any multiple of 32 up to 1024. b128x128: a group of
/// exactly 256 threads per block (64 elements a thread, consecutive threads on consecutive
/// columns), the amax by reduce_max; a grid of ceil(cols / 128) × ceil(rows / 128).
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

namespace {
constexpr std::uint32_t kWeightBlock = 128;    ///< rows and columns of a weight block
constexpr std::uint32_t kWeightThreads = 256;  ///< threads a weight block
}  // namespace

IRON_KERNEL(iron_quantize_fp8_e4m3_b128x128, (Tensor<T> w, Out<f8e4m3> q, Out<f32> scales,
                                              Constexpr<u32> rows, Constexpr<u32> cols)) {
  dispatch(reduction, {exactly(kWeightThreads)});
  grid("[ceil_div(cols, 128), ceil_div(rows, 128), 1]");
  layout(w, "[rows, cols]");
  layout(q, "[rows, cols]");
  layout(scales, "[ceil_div(rows, 128), ceil_div(cols, 128)]");
  auto row0 = program_id<1>() * kWeightBlock;
  auto col0 = program_id<0>() * kWeightBlock;
  // Calls body(index) for each element of the block inside w.
  const auto each = [&](auto&& body) {
    for (auto v : range(thread_id<0>(), kWeightBlock * kWeightBlock, kWeightThreads)) {
      auto r = row0 + v / kWeightBlock;
      auto c = col0 + v % kWeightBlock;
      IRON_IF(r < rows && c < cols) { body(r * cols + c); }
    }
  };
  Var<f32> amax = 0.0f;
  each([&](const Expr<u32>& i) { amax = max(Expr<f32>(amax), abs(cast<f32>(load(w[i])))); });
  auto peak = reduce_max(Expr<f32>(amax));
  auto scale = select(peak > 0.0f, peak / kLargestE4M3, Expr<f32>(1.0f));
  each([&](const Expr<u32>& i) { store(q[i], cast<f8e4m3>(cast<f32>(load(w[i])) / scale)); });
  IRON_IF(thread_id<0>() == 0u) {
    store(scales[program_id<1>() * grid_groups<0>() + program_id<0>()], scale);
  }
}

IRON_GEOMETRY(iron_quantize_fp8_e4m3_b128x128) {
  return {{tile_count(q.constant("cols"), kWeightBlock),
           tile_count(q.constant("rows"), kWeightBlock), 1},
          {kWeightThreads, 1, 1}};
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

/// The weight form's definition: each 128×128 block's scale (amax / 448 in f32, 1 for zeros)
/// and the quantized values.
Quantized weight_oracle(const std::vector<float>& w, std::size_t rows, std::size_t cols) {
  const std::size_t blocks_r = (rows + kWeightBlock - 1) / kWeightBlock;
  const std::size_t blocks_c = (cols + kWeightBlock - 1) / kWeightBlock;
  Quantized out{std::vector<float>(rows * cols), std::vector<float>(blocks_r * blocks_c)};
  for (std::size_t br = 0; br < blocks_r; ++br) {
    for (std::size_t bc = 0; bc < blocks_c; ++bc) {
      const std::size_t r_end = std::min(rows, (br + 1) * kWeightBlock);
      const std::size_t c_end = std::min(cols, (bc + 1) * kWeightBlock);
      float amax = 0.0f;
      for (std::size_t r = br * kWeightBlock; r < r_end; ++r) {
        for (std::size_t c = bc * kWeightBlock; c < c_end; ++c) {
          amax = std::max(amax, std::fabs(w[r * cols + c]));
        }
      }
      const float scale = amax > 0.0f ? amax / kLargestE4M3 : 1.0f;
      out.scales[br * blocks_c + bc] = scale;
      for (std::size_t r = br * kWeightBlock; r < r_end; ++r) {
        for (std::size_t c = bc * kWeightBlock; c < c_end; ++c) {
          out.q[r * cols + c] = round_to_f8e4m3(w[r * cols + c] / scale);
        }
      }
    }
  }
  return out;
}

/// A weight of rows × cols over `decades` powers of ten, its first block all zeros when asked.
testing::TestSetup weight_setup(std::size_t rows, std::size_t cols, float decades, bool zero_block,
                                DType dt, testing::Rng& rng) {
  std::vector<float> w = rng.uniform(rows * cols, -1.0f, 1.0f);
  const std::vector<float> exponents = rng.uniform(rows * cols, -decades, decades);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] *= std::pow(10.0f, exponents[i]);
  for (std::size_t r = 0; zero_block && r < std::min<std::size_t>(rows, kWeightBlock); ++r) {
    for (std::size_t c = 0; c < std::min<std::size_t>(cols, kWeightBlock); ++c) w[r * cols + c] = 0;
  }
  w = testing::round_through(w, dt);
  const Quantized want = weight_oracle(w, rows, cols);
  testing::TestSetup setup("iron_quantize_fp8_e4m3_b128x128", dt);
  setup.input("w", w)
      .output("q", rows * cols)
      .output("scales", want.scales.size())
      .constant("rows", static_cast<double>(rows))
      .constant("cols", static_cast<double>(cols))
      .expect("q", want.q)
      .expect("scales", want.scales)
      .tolerance("q", testing::tolerance::stored(DType::F8E4M3, 0.0, testing::tolerance::gamma(2)))
      .tolerance("scales", testing::tolerance::stored(DType::F32, 0.0, 0.0));
  return setup.grid(testing::geometry_grid(setup));
}

}  // namespace

// Weights: partial blocks at both edges with a block of zeros; one whole block; a wide range.
IRON_TEST(iron_quantize_fp8_e4m3_b128x128, partial_blocks_300x200, F32, F16, BF16) {
  return weight_setup(300, 200, 2.0f, true, dt, rng);
}
IRON_TEST(iron_quantize_fp8_e4m3_b128x128, one_block_128x128, F32, BF16) {
  return weight_setup(128, 128, 0.5f, false, dt, rng);
}
IRON_TEST(iron_quantize_fp8_e4m3_b128x128, wide_range_1x130, F32, BF16) {
  return weight_setup(1, 130, 20.0f, false, dt, rng);
}

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

// An FFN weight (14336 × 4096), as a checkpoint is quantized for the blockwise products.
IRON_BENCH(iron_quantize_fp8_e4m3_b128x128, w14336x4096, BF16) {
  constexpr std::size_t kRows = 14336;
  constexpr std::size_t kCols = 4096;
  constexpr std::size_t kBlocks = (kRows / kWeightBlock) * (kCols / kWeightBlock);
  bench::BenchSetup setup("iron_quantize_fp8_e4m3_b128x128", dt);
  setup.random("w", kRows * kCols)
      .output("q", kRows * kCols)
      .output("scales", kBlocks)
      .constant("rows", static_cast<double>(kRows))
      .constant("cols", static_cast<double>(kCols));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(kRows * kCols * (dtype_size(dt) + 1) + kBlocks * 4)
      .peer("quantize_fp8_b128x128",
            {{"rows", static_cast<double>(kRows)}, {"cols", static_cast<double>(kCols)}});
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
