/// iron_dequant_affine_b{4,8}_g{32,64,128}: w[r, c] = scale[r, c / G] * q[r, c] + bias[r, c / G],
/// the group-wise affine dequantization of MLX's "affine" mode.
///
/// The layout is MLX's (mlx.core.quantize / mlx.core.dequantize,
/// https://ml-explore.github.io/mlx/build/html/python/_autosummary/mlx.core.quantize.html):
/// every G consecutive elements of a row share a scale s and a bias β of the weights' dtype, the
/// codes q (unsigned, BITS bits) are packed little-endian into u32 words, and w = s * q + β.
/// Code k of a word sits in bits [k * BITS, (k + 1) * BITS): 8 codes per word at 4 bits, 4 at
/// 8 bits. The decode is one f32 fma rounded once to T (kernels/primitives/affine_quant.hpp).
///
/// Since cols is a multiple of G, a group never straddles a row: flat element i (= r * cols + c)
/// belongs to flat group i / G, so the kernel needs only the number of words (P = 32 / BITS
/// codes each).
///
/// ## Error bound
/// One f32 fma, correctly rounded (u = 2^-24 relative, γ_1 against the oracle's own f32 rounding),
/// then the rounding to T: 2^-11 (f16) or 2^-8 (bf16) relative, plus half T's smallest subnormal.
///
/// ## Layout
/// - `packed [rows, cols * BITS / 32]` u32
/// - `scales [rows, cols / G]` T
/// - `biases [rows, cols / G]` T
/// - `out    [rows, cols]` T
/// - `words` = rows * cols * BITS / 32; cols must be a multiple of G.
///
/// ## Dispatch
/// Elementwise, grid-stride over items of one 16-byte output vector
/// (kernels/primitives/packed_words.hpp): 8 codes into f16/bf16 (one word at 4 bits, two at 8),
/// 4 into f32 (half a word at 4 bits, one at 8). Any grid. A thread takes U items spaced by the
/// grid's thread count (U = 3 into f16/bf16; 4 at 4 bits and 5 at 8 bits into f32: the most
/// whose loads ptxas issues before the first store), loads all their words, scales and biases,
/// then writes each item with one 16-byte store, so each load and store instruction of a
/// simdgroup covers one contiguous span; items past the grid's last whole batch go one at a
/// time. An item lies in one group (G is a multiple of 32), so it loads one scale and one bias.
/// `words` must be a multiple of 4, which cols being a multiple of G makes it; the guard checks
/// it. Best: items / U threads.
#include <array>
#include <iron/iron.hpp>
#include <string>
#include <tuple>

#include "../primitives/affine_quant.hpp"
#include "../primitives/packed_words.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL_TEMPLATE(iron_dequant_affine, (u32 BITS, u32 GROUP),
                     (Tensor<u32> packed, Tensor<T> scales, Tensor<T> biases, Out<T> out,
                      Constexpr<u32> words)) {
  constexpr u32 kCodes = codes_per_word<BITS>;
  constexpr u32 kItem = item_elements(lane_bytes<T>());  // elements an item
  static_assert(GROUP % kItem == 0, "an item must lie in one group");
  dispatch(elementwise);
  grid(packed_item_grid(kCodes, kItem));
  const std::string elements = "words * " + std::to_string(kCodes);
  const std::string groups = "[" + elements + " / " + std::to_string(GROUP) + "]";
  layout(packed, "[words]");
  layout(scales, groups);
  layout(biases, groups);
  layout(out, "[" + elements + "]");
  require_multiple_of(words, kWordMultiple);
  auto items = packed_items<kCodes, kItem>(words);
  auto fetch = [&](const Expr<u32>& item) {
    auto group = item * kItem / GROUP;
    return std::tuple{load_item_words<kCodes, kItem>(packed, item), load(scales[group]),
                      load(biases[group])};
  };
  auto finish = [&](const Expr<u32>& item, const auto& fetched) {
    const auto& [w, scale, bias] = fetched;
    std::array<Expr<T>, kItem> values;
    for (u32 j = 0; j < kItem; ++j) {
      auto code = unpack_code<BITS>(w[j / kCodes], Expr<u32>(j % kCodes));
      values[j] = cast<T>(affine_dequant(code, cast<f32>(scale), cast<f32>(bias)));
    }
    store_lanes(out[item * kItem], values);
  };
  grid_stride_batched<packed_item_unroll(kCodes, kItem)>(items, fetch, finish);
}
IRON_KERNEL_VARIANT(iron_dequant_affine, b4_g32, 4, 32);
IRON_KERNEL_VARIANT(iron_dequant_affine, b4_g64, 4, 64);
IRON_KERNEL_VARIANT(iron_dequant_affine, b4_g128, 4, 128);
IRON_KERNEL_VARIANT(iron_dequant_affine, b8_g32, 8, 32);
IRON_KERNEL_VARIANT(iron_dequant_affine, b8_g64, 8, 64);
IRON_KERNEL_VARIANT(iron_dequant_affine, b8_g128, 8, 128);
IRON_GEOMETRY(iron_dequant_affine_b4_g32) { return packed_item_geometry(q, 8); }
IRON_GEOMETRY(iron_dequant_affine_b4_g64) { return packed_item_geometry(q, 8); }
IRON_GEOMETRY(iron_dequant_affine_b4_g128) { return packed_item_geometry(q, 8); }
IRON_GEOMETRY(iron_dequant_affine_b8_g32) { return packed_item_geometry(q, 4); }
IRON_GEOMETRY(iron_dequant_affine_b8_g64) { return packed_item_geometry(q, 4); }
IRON_GEOMETRY(iron_dequant_affine_b8_g128) { return packed_item_geometry(q, 4); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// One quantized matrix: codes (one per element), their packed words, scales and biases.
struct AffineWeights {
  std::vector<std::uint32_t> codes;
  std::vector<std::uint32_t> words;
  std::vector<float> scales;
  std::vector<float> biases;
};

/// The definition, in double: element i is scale * q + bias of its group, with q read bit by
/// bit from the packed stream (bit b of element i is stream bit i * bits + b).
std::vector<float> affine_oracle(const AffineWeights& m, std::size_t bits, std::size_t group) {
  const std::size_t n = m.words.size() * 32 / bits;
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t q = 0;
    for (std::size_t b = 0; b < bits; ++b) {
      const std::size_t bit = i * bits + b;
      q |= ((m.words[bit / 32] >> (bit % 32)) & 1u) << b;
    }
    out[i] = static_cast<float>(double{m.scales[i / group]} * q + m.biases[i / group]);
  }
  return out;
}

/// Random codes packed MLX's way, and scales in [lo, hi) with biases of either sign up to the
/// scale times the largest code, so outputs span ±scale * (2^bits - 1).
AffineWeights affine_weights(std::size_t rows, std::size_t cols, std::size_t bits,
                             std::size_t group, float scale_lo, float scale_hi, DType dt,
                             testing::Rng& rng) {
  const std::size_t n = rows * cols;
  const std::uint32_t levels = 1u << bits;
  AffineWeights m;
  m.codes = rng.integers(n, 0, levels);
  m.words.assign(n * bits / 32, 0);
  for (std::size_t i = 0; i < n; ++i) m.words[i * bits / 32] |= m.codes[i] << (i * bits % 32);
  m.scales = testing::round_through(rng.uniform(n / group, scale_lo, scale_hi), dt);
  m.biases = rng.uniform(n / group, -1.0f, 1.0f);
  for (std::size_t g = 0; g < m.biases.size(); ++g) {
    m.biases[g] *= m.scales[g] * static_cast<float>(levels - 1);
  }
  m.biases = testing::round_through(m.biases, dt);
  return m;
}

testing::TestSetup affine_setup(const std::string& kernel, std::size_t bits, std::size_t group,
                                const AffineWeights& m, runtime::Grid grid, DType dt) {
  return testing::TestSetup(kernel, dt)
      .input_u32("packed", m.words)
      .input("scales", m.scales)
      .input("biases", m.biases)
      .output("out", m.words.size() * 32 / bits)
      .constant("words", static_cast<double>(m.words.size()))
      .expect("out", affine_oracle(m, bits, group))
      .tolerance(testing::tolerance::relative(dt, 1))
      .grid(grid);
}

/// 8 rows of 1024 on a grid of 3 groups of 64 threads: fewer threads than chunks (1024 words at
/// 4 bits, 2048 at 8), so the grid-stride loop wraps, and a thread count that divides neither.
testing::TestSetup rows_setup(const std::string& kernel, std::size_t bits, std::size_t group,
                              DType dt, testing::Rng& rng) {
  const auto m = affine_weights(8, 1024, bits, group, 1e-3f, 0.1f, dt, rng);
  return affine_setup(kernel, bits, group, m, {{3}, {64}}, dt);
}

/// One row of one group (a single scale and bias) with the largest scale whose outputs stay
/// finite in T, on one group of 32 threads: more threads than chunks.
testing::TestSetup single_group_setup(const std::string& kernel, std::size_t bits,
                                      std::size_t group, DType dt, testing::Rng& rng) {
  const float top = dt == DType::F16 ? 3.0e4f : 1.0e37f;
  const float scale = top / static_cast<float>((1u << bits) - 1);
  const auto m = affine_weights(1, group, bits, group, scale / 2, scale, dt, rng);
  return affine_setup(kernel, bits, group, m, {{1}, {32}}, dt);
}

/// 3 rows of 96: 36 words (9 chunks of 4 at 4 bits, 18 at 8), on more threads than chunks.
testing::TestSetup odd_chunks_setup(const std::string& kernel, std::size_t bits, std::size_t group,
                                    DType dt, testing::Rng& rng) {
  const auto m = affine_weights(3, 96, bits, group, 1e-3f, 0.1f, dt, rng);
  return affine_setup(kernel, bits, group, m, {{1}, {64}}, dt);
}

/// 5 rows of 896 on one group of 32 threads: several whole batches a thread (4 rounds of U items
/// at 4 bits, 8 at 8 bits), then a tail of 48 items (96 in f32), more than the grid's threads.
testing::TestSetup ragged_batches_setup(const std::string& kernel, std::size_t bits,
                                        std::size_t group, DType dt, testing::Rng& rng) {
  const auto m = affine_weights(5, 896, bits, group, 1e-3f, 0.1f, dt, rng);
  return affine_setup(kernel, bits, group, m, {{1}, {32}}, dt);
}

/// Tiny scales: outputs at the bottom of T's normal range and below (subnormals in f16).
testing::TestSetup tiny_scales_setup(const std::string& kernel, std::size_t bits, std::size_t group,
                                     DType dt, testing::Rng& rng) {
  const float scale = dt == DType::F16 ? 1e-6f : 1e-36f;
  const auto m = affine_weights(3, 4 * group, bits, group, scale / 2, scale, dt, rng);
  return affine_setup(kernel, bits, group, m, {{1}, {32}}, dt);
}

/// Bench: dequantize a 4096 x 14336 weight; moved bytes are the packed words, scales, biases
/// and the output.
bench::BenchSetup affine_bench(const std::string& kernel, std::size_t bits, std::size_t group,
                               DType dt) {
  const std::size_t rows = 4096;
  const std::size_t cols = 14336;
  const std::size_t n = rows * cols;
  const std::size_t words = n * bits / 32;
  const std::size_t groups = n / group;
  const std::size_t size = dtype_size(dt);
  bench::BenchSetup setup(kernel, dt);
  setup.random_u32("packed", words, 0, 0xFFFFFFFFu)
      .random("scales", groups, 1e-3f, 0.1f)
      .random("biases", groups, -1.0f, 1.0f)
      .output("out", n)
      .constant("words", static_cast<double>(words));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(words * 4 + 2 * groups * size + n * size)
      .flops(2 * n)
      .peer("dequant_affine", {{"rows", static_cast<double>(rows)},
                               {"cols", static_cast<double>(cols)},
                               {"bits", static_cast<double>(bits)},
                               {"group", static_cast<double>(group)}});
}

}  // namespace

IRON_TEST(iron_dequant_affine_b4_g32, rows_8x1024, F32, F16, BF16) {
  return rows_setup("iron_dequant_affine_b4_g32", 4, 32, dt, rng);
}
IRON_TEST(iron_dequant_affine_b4_g32, single_group_large_scale, F32, F16, BF16) {
  return single_group_setup("iron_dequant_affine_b4_g32", 4, 32, dt, rng);
}
IRON_TEST(iron_dequant_affine_b4_g32, ragged_batches, F32, F16, BF16) {
  return ragged_batches_setup("iron_dequant_affine_b4_g32", 4, 32, dt, rng);
}
IRON_TEST(iron_dequant_affine_b4_g32, odd_chunk_count, F32, F16, BF16) {
  return odd_chunks_setup("iron_dequant_affine_b4_g32", 4, 32, dt, rng);
}
IRON_TEST(iron_dequant_affine_b4_g64, rows_8x1024, F32, F16, BF16) {
  return rows_setup("iron_dequant_affine_b4_g64", 4, 64, dt, rng);
}
IRON_TEST(iron_dequant_affine_b4_g64, single_group_large_scale, F32, F16, BF16) {
  return single_group_setup("iron_dequant_affine_b4_g64", 4, 64, dt, rng);
}
IRON_TEST(iron_dequant_affine_b4_g64, ragged_batches, F32, F16, BF16) {
  return ragged_batches_setup("iron_dequant_affine_b4_g64", 4, 64, dt, rng);
}
IRON_TEST(iron_dequant_affine_b4_g64, tiny_scales, F32, F16, BF16) {
  return tiny_scales_setup("iron_dequant_affine_b4_g64", 4, 64, dt, rng);
}
IRON_TEST(iron_dequant_affine_b4_g128, rows_8x1024, F32, F16, BF16) {
  return rows_setup("iron_dequant_affine_b4_g128", 4, 128, dt, rng);
}
IRON_TEST(iron_dequant_affine_b4_g128, single_group_large_scale, F32, F16, BF16) {
  return single_group_setup("iron_dequant_affine_b4_g128", 4, 128, dt, rng);
}
IRON_TEST(iron_dequant_affine_b4_g128, ragged_batches, F32, F16, BF16) {
  return ragged_batches_setup("iron_dequant_affine_b4_g128", 4, 128, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g32, rows_8x1024, F32, F16, BF16) {
  return rows_setup("iron_dequant_affine_b8_g32", 8, 32, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g32, single_group_large_scale, F32, F16, BF16) {
  return single_group_setup("iron_dequant_affine_b8_g32", 8, 32, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g32, ragged_batches, F32, F16, BF16) {
  return ragged_batches_setup("iron_dequant_affine_b8_g32", 8, 32, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g32, odd_chunk_count, F32, F16, BF16) {
  return odd_chunks_setup("iron_dequant_affine_b8_g32", 8, 32, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g64, rows_8x1024, F32, F16, BF16) {
  return rows_setup("iron_dequant_affine_b8_g64", 8, 64, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g64, single_group_large_scale, F32, F16, BF16) {
  return single_group_setup("iron_dequant_affine_b8_g64", 8, 64, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g64, ragged_batches, F32, F16, BF16) {
  return ragged_batches_setup("iron_dequant_affine_b8_g64", 8, 64, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g64, tiny_scales, F32, F16, BF16) {
  return tiny_scales_setup("iron_dequant_affine_b8_g64", 8, 64, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g128, rows_8x1024, F32, F16, BF16) {
  return rows_setup("iron_dequant_affine_b8_g128", 8, 128, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g128, single_group_large_scale, F32, F16, BF16) {
  return single_group_setup("iron_dequant_affine_b8_g128", 8, 128, dt, rng);
}
IRON_TEST(iron_dequant_affine_b8_g128, ragged_batches, F32, F16, BF16) {
  return ragged_batches_setup("iron_dequant_affine_b8_g128", 8, 128, dt, rng);
}
IRON_BENCH(iron_dequant_affine_b4_g64, w4096x14336, F32, F16, BF16) {
  return affine_bench("iron_dequant_affine_b4_g64", 4, 64, dt);
}
IRON_BENCH(iron_dequant_affine_b4_g32, w4096x14336, BF16) {
  return affine_bench("iron_dequant_affine_b4_g32", 4, 32, dt);
}
IRON_BENCH(iron_dequant_affine_b4_g128, w4096x14336, BF16) {
  return affine_bench("iron_dequant_affine_b4_g128", 4, 128, dt);
}
IRON_BENCH(iron_dequant_affine_b8_g32, w4096x14336, BF16) {
  return affine_bench("iron_dequant_affine_b8_g32", 8, 32, dt);
}
IRON_BENCH(iron_dequant_affine_b8_g64, w4096x14336, F32, F16, BF16) {
  return affine_bench("iron_dequant_affine_b8_g64", 8, 64, dt);
}
IRON_BENCH(iron_dequant_affine_b8_g128, w4096x14336, BF16) {
  return affine_bench("iron_dequant_affine_b8_g128", 8, 128, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
