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
/// Reduction: 16 lanes a group (8 consecutive elements a lane, read in 16-byte loads), a
/// simdgroup taking 4 groups in two rounds whose loads are issued together; the amax by four
/// shuffles. Groups of threads of any multiple of 32 up to 1024. b128x128: a group of exactly 512
/// threads per block, the block held in registers (thread t: 8 consecutive columns, (t % 16) · 8
/// …, of rows t / 16 + 32 j: four pieces; eight at 256 threads made ptxas spill 16 bytes in the
/// f16 form), read once, the amax by reduce_max; a grid of ceil(cols / 128) × ceil(rows / 128).
/// A width that is not a multiple of 8 takes an element-by-element path that reads the block
/// twice.
#include <array>
#include <iron/iron.hpp>

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr std::uint32_t kGroup = 128;  ///< elements sharing a scale
constexpr float kLargestE4M3 = 448.0f;
/// Elements a thread holds of a group or a weight block's row: 16 bytes of a 16-bit T.
constexpr std::uint32_t kPiece = 8;
/// Lanes that share an activation group (kGroup / kPiece), and the groups a simdgroup takes:
/// two at a time (one a half), kRounds times, every round's loads issued before any reduction.
constexpr std::uint32_t kLanesAGroup = kGroup / kPiece;
constexpr std::uint32_t kRounds = 2;
constexpr std::uint32_t kGroupsASimdgroup = 32 / kLanesAGroup * kRounds;

/// The kPiece elements of `t` from `first` (a multiple of kPiece), as f32, in 16-byte loads.
template <class T>
std::array<Expr<f32>, kPiece> load_piece(const Tensor<T>& t, const Expr<u32>& first) {
  constexpr std::size_t kW = 16 / lane_bytes<T>();
  std::array<Expr<f32>, kPiece> values;
  for (std::uint32_t a = 0; a < kPiece; a += kW) {
    const auto lanes = load_lanes<kW>(t[first + a]);
    for (std::size_t i = 0; i < kW; ++i) values[a + i] = cast<f32>(lanes[i]);
  }
  return values;
}

/// The largest |v| of `values`.
Expr<f32> piece_amax(const std::array<Expr<f32>, kPiece>& values) {
  Expr<f32> amax = abs(values[0]);
  for (std::uint32_t i = 1; i < kPiece; ++i) amax = max(amax, abs(values[i]));
  return amax;
}

/// The scale of a group or block whose largest |x| is `peak`: peak / 448, 1 for all zeros.
Expr<f32> scale_of(const Expr<f32>& peak) {
  return select(peak > 0.0f, peak / kLargestE4M3, Expr<f32>(1.0f));
}

/// q[first …] = e4m3(values / scale), element by element (the compiler joins the stores where
/// the target has vectors of the 8-bit type).
void store_piece(const Out<f8e4m3>& q, const Expr<u32>& first,
                 const std::array<Expr<f32>, kPiece>& values, const Expr<f32>& scale) {
  for (std::uint32_t i = 0; i < kPiece; ++i) store(q[first + i], cast<f8e4m3>(values[i] / scale));
}
}  // namespace

IRON_KERNEL(iron_quantize_fp8_e4m3_g128,
            (Tensor<T> x, Out<f8e4m3> q, Out<f32> scales, Constexpr<u32> blocks)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[ceil_div(blocks * 8, tpg), 1, 1]");
  layout(x, "[blocks * 128]");
  layout(q, "[blocks * 128]");
  layout(scales, "[blocks]");
  auto first_group = (program_id<0>() * simdgroup_count() + simdgroup_id()) * kGroupsASimdgroup +
                     lane_id() / kLanesAGroup;
  auto offset = lane_id() % kLanesAGroup * kPiece;
  // Every round's loads first (a group past the end reads group 0 and stores nothing), then
  // each group's amax over its 16 lanes: the shuffles run in every lane.
  std::array<std::array<Expr<f32>, kPiece>, kRounds> pieces;
  for (std::uint32_t j = 0; j < kRounds; ++j) {
    auto group = first_group + j * (32 / kLanesAGroup);
    pieces[j] = load_piece(x, select(group < blocks, group * kGroup + offset, Expr<u32>(0u)));
  }
  for (std::uint32_t j = 0; j < kRounds; ++j) {
    auto group = first_group + j * (32 / kLanesAGroup);
    Expr<f32> peak = piece_amax(pieces[j]);
    for (std::uint32_t m = kLanesAGroup / 2; m >= 1; m /= 2) {
      peak = max(peak, simd_shuffle_xor(peak, Expr<u32>(m)));
    }
    auto scale = scale_of(peak);
    IRON_IF(group < blocks) {
      store_piece(q, group * kGroup + offset, pieces[j], scale);
      IRON_IF(offset == 0u) { store(scales[group], scale); }
    }
  }
}

namespace {
constexpr std::uint32_t kWeightBlock = 128;    ///< rows and columns of a weight block
constexpr std::uint32_t kWeightThreads = 512;  ///< threads a weight block
/// Threads along a block's row (a piece each), and the rows a thread holds (kBlockRows apart).
constexpr std::uint32_t kRowThreads = kWeightBlock / kPiece;
constexpr std::uint32_t kBlockRows = kWeightThreads / kRowThreads;
constexpr std::uint32_t kPiecesAThread = kWeightBlock / kBlockRows;
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
  const auto write_scale = [&](const Expr<f32>& scale) {
    IRON_IF(thread_id<0>() == 0u) {
      store(scales[program_id<1>() * grid_groups<0>() + program_id<0>()], scale);
    }
  };
  IRON_IF(specialized(cols % kPiece == 0u)) {
    // The block in registers: thread t holds the pieces of columns col0 + (t % 16) · 8 … in rows
    // t / 16 + 16 j; a piece lies wholly inside w or wholly outside it (cols % 8 == 0).
    auto c = col0 + thread_id<0>() % kRowThreads * kPiece;
    std::array<std::array<Expr<f32>, kPiece>, kPiecesAThread> pieces;
    std::array<Expr<bool>, kPiecesAThread> inside;
    std::array<Expr<u32>, kPiecesAThread> first;
    Expr<f32> amax = 0.0f;
    for (std::uint32_t j = 0; j < kPiecesAThread; ++j) {
      auto r = row0 + thread_id<0>() / kRowThreads + j * kBlockRows;
      inside[j] = r < rows && c < cols;
      // r · cols + c, written as a multiple of kPiece so that the stores' alignment is plain.
      first[j] = select(inside[j], (r * (cols / kPiece) + c / kPiece) * kPiece, Expr<u32>(0u));
      pieces[j] = load_piece(w, first[j]);
    }
    for (std::uint32_t j = 0; j < kPiecesAThread; ++j) {
      amax = max(amax, select(inside[j], piece_amax(pieces[j]), Expr<f32>(0.0f)));
    }
    auto scale = scale_of(reduce_max(amax));
    for (std::uint32_t j = 0; j < kPiecesAThread; ++j) {
      IRON_IF(inside[j]) { store_piece(q, first[j], pieces[j], scale); }
    }
    write_scale(scale);
  }
  IRON_ELSE {
    // Any width: element by element, w read twice.
    const auto each = [&](auto&& body) {
      for (auto v : range(thread_id<0>(), kWeightBlock * kWeightBlock, kWeightThreads)) {
        auto r = row0 + v / kWeightBlock;
        auto c = col0 + v % kWeightBlock;
        IRON_IF(r < rows && c < cols) { body(r * cols + c); }
      }
    };
    Var<f32> amax = 0.0f;
    each([&](const Expr<u32>& i) { amax = max(Expr<f32>(amax), abs(cast<f32>(load(w[i])))); });
    auto scale = scale_of(reduce_max(Expr<f32>(amax)));
    each([&](const Expr<u32>& i) { store(q[i], cast<f8e4m3>(cast<f32>(load(w[i])) / scale)); });
    write_scale(scale);
  }
}

IRON_GEOMETRY(iron_quantize_fp8_e4m3_b128x128) {
  return {{tile_count(q.constant("cols"), kWeightBlock),
           tile_count(q.constant("rows"), kWeightBlock), 1},
          {kWeightThreads, 1, 1}};
}

IRON_GEOMETRY(iron_quantize_fp8_e4m3_g128) {
  const std::uint64_t groups = std::max<std::uint64_t>(q.constant("blocks"), 1);
  const std::uint64_t lanes = (groups + kGroupsASimdgroup - 1) / kGroupsASimdgroup * 32;
  const std::uint32_t tpg = q.threads_per_group(whole_simdgroups(lanes, 256));
  return Geometry::per_row((lanes + tpg - 1) / tpg, tpg);
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
