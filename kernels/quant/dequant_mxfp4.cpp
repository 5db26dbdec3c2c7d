/// iron_dequant_mxfp4: w[r, c] = e2m1(q[r, c]) * 2^(e[r, c / 32] - 127), the dequantization of
/// OCP Microscaling MXFP4 (E2M1 elements, one E8M0 scale per block of 32 along a row).
///
/// Nibble order: code k of a u32 word sits in bits [4k, 4k + 4), so element 8w + k of the flat
/// tensor is nibble k of word w. Read as little-endian bytes, byte b holds element 2b in its low
/// nibble and element 2b + 1 in its high nibble: the usual "low nibble first" packing of MXFP4
/// checkpoints and of MLX's "mxfp4" mode. Each code is sign (bit 3), exponent (bits 2..1) and
/// mantissa (bit 0). Scales are bytes: 2^(e - 127), and e = 0xFF is NaN, which the kernel
/// propagates into every element of the block (the test harness cannot check an expected NaN,
/// see the tests below).
///
/// Both decodes are exact bit arithmetic (kernels/primitives/mxfp4.hpp); the only rounding is
/// the f32 product (exact unless it leaves f32's normal range) and its one rounding to T.
///
/// ## Error bound
/// Exact: the product of an E2M1 value and a power of two rounded once to T, which the oracle
/// computes the same way, must match it bit for bit.
///
/// ## Layout
/// - `packed [rows, cols / 8]` u32
/// - `scales [rows, cols / 32]` u8 (E8M0)
/// - `out    [rows, cols]` T
/// - `words` = rows * cols / 8; cols must be a multiple of 32.
///
/// ## Dispatch
/// Elementwise, grid-stride over items of one 16-byte output vector
/// (kernels/primitives/packed_words.hpp): a word's 8 codes into f16/bf16, half a word's 4 into
/// f32, each in one block. Any grid. A thread takes U items spaced by the grid's thread count
/// (U = 3 into f16/bf16, 4 into f32: the most whose loads ptxas issues before the first store),
/// loads all their words and scale bytes, then decodes each item's block scale and writes its
/// outputs with one 16-byte store, so each load and store instruction of a simdgroup covers one
/// contiguous span; items past the grid's last whole batch go one at a time. `words` must be a
/// multiple of 4, which cols being a multiple of 32 makes it; the guard checks it. Best: items /
/// U threads.
#include <array>
#include <cmath>
#include <iron/iron.hpp>
#include <utility>

#include "../primitives/mxfp4.hpp"
#include "../primitives/packed_words.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr u32 kCodesPerWord = 8;  // E2M1 nibbles
}  // namespace

IRON_KERNEL(iron_dequant_mxfp4,
            (Tensor<u32> packed, Tensor<u8> scales, Out<T> out, Constexpr<u32> words)) {
  constexpr u32 kItem = item_elements(lane_bytes<T>());  // elements an item
  static_assert(32 % kItem == 0, "an item lies in one block of 32 codes");
  dispatch(elementwise);
  grid(packed_item_grid(kCodesPerWord, kItem));
  layout(packed, "[words]");
  layout(scales, "[words * 8 / 32]");
  layout(out, "[words * 8]");
  require_multiple_of(words, kWordMultiple);
  auto fetch = [&](const Expr<u32>& item) {
    return std::pair{load_item_words<kCodesPerWord, kItem>(packed, item),
                     load(scales[item * kItem / 32u])};
  };
  auto finish = [&](const Expr<u32>& item, const auto& fetched) {
    const auto& [w, e] = fetched;
    auto scale = decode_e8m0(cast<u32>(e));
    std::array<Expr<T>, kItem> values;
    for (u32 j = 0; j < kItem; ++j) {
      auto code = w[j / kCodesPerWord] >> (4u * (j % kCodesPerWord));
      values[j] = cast<T>(decode_e2m1(code) * scale);
    }
    store_lanes(out[item * kItem], values);
  };
  grid_stride_batched<packed_item_unroll(kCodesPerWord, kItem)>(
      packed_items<kCodesPerWord, kItem>(words), fetch, finish);
}

IRON_GEOMETRY(iron_dequant_mxfp4) { return packed_item_geometry(q, kCodesPerWord); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>

namespace iron::kernels {

namespace {

/// One MXFP4 matrix: its packed words and scale bytes.
struct Mxfp4Weights {
  std::vector<std::uint32_t> words;
  std::vector<std::uint32_t> scales;
};

/// The definition, in double, from the OCP MX tables: the E2M1 magnitudes by code, the sign,
/// and the E8M0 power of two, then rounded to T as the output is.
std::vector<float> mxfp4_oracle(const Mxfp4Weights& m, DType dt) {
  constexpr double kMagnitude[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
  std::vector<float> out(m.words.size() * 8);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint32_t code = (m.words[i / 8] >> (4 * (i % 8))) & 0xFu;
    const double value = (code & 8u ? -1.0 : 1.0) * kMagnitude[code & 7u];
    const int exponent = static_cast<int>(m.scales[i / 32]) - 127;
    out[i] = static_cast<float>(std::ldexp(value, exponent));
  }
  return testing::round_through(out, dt);
}

/// Words of random codes, and scale exponents drawn from `exponents` block by block.
Mxfp4Weights mxfp4_weights(std::size_t rows, std::size_t cols,
                           const std::vector<std::uint32_t>& exponents, testing::Rng& rng) {
  const std::size_t n = rows * cols;
  Mxfp4Weights m;
  const auto codes = rng.integers(n, 0, 16);
  m.words.assign(n / 8, 0);
  for (std::size_t i = 0; i < n; ++i) m.words[i / 8] |= codes[i] << (4 * (i % 8));
  const auto picks = rng.integers(n / 32, 0, static_cast<std::uint32_t>(exponents.size()));
  for (const auto p : picks) m.scales.push_back(exponents[p]);
  return m;
}

testing::TestSetup mxfp4_setup(const Mxfp4Weights& m, runtime::Grid grid, DType dt) {
  return testing::TestSetup("iron_dequant_mxfp4", dt)
      .input_u32("packed", m.words)
      .input_u32("scales", m.scales)
      .output("out", m.words.size() * 8)
      .constant("words", static_cast<double>(m.words.size()))
      .expect("out", mxfp4_oracle(m, dt))
      .tolerance(testing::tolerance::exact())
      .grid(grid);
}

/// Scales 2^-7 .. 2^7: every product is exact in every T.
std::vector<std::uint32_t> moderate_exponents() {
  std::vector<std::uint32_t> e;
  for (std::uint32_t x = 120; x <= 134; ++x) e.push_back(x);
  return e;
}

bench::BenchSetup mxfp4_bench(DType dt) {
  const std::size_t rows = 4096;
  const std::size_t cols = 14336;
  const std::size_t n = rows * cols;
  const std::size_t words = n / 8;  // 8 codes per word
  bench::BenchSetup setup("iron_dequant_mxfp4", dt);
  setup.random_u32("packed", words, 0, 0xFFFFFFFFu)
      .random_u32("scales", n / 32, 120, 135)
      .output("out", n)
      .constant("words", static_cast<double>(words));
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(n / 2 + n / 32 + n * dtype_size(dt))
      .flops(n)
      .peer("dequant_mxfp4",
            {{"rows", static_cast<double>(rows)}, {"cols", static_cast<double>(cols)}});
}

}  // namespace

// Every decode is exact and the product rounds once to T, as the oracle does: no tolerance.
// 8 rows of 1024 on 3 groups of 64 threads, fewer threads than chunks (256): the loop wraps.
IRON_TEST(iron_dequant_mxfp4, rows_8x1024, F32, F16, BF16) {
  return mxfp4_setup(mxfp4_weights(8, 1024, moderate_exponents(), rng), {{3}, {64}}, dt);
}

// One row holding one block: a single scale and chunk, more threads than chunks.
IRON_TEST(iron_dequant_mxfp4, single_block, F32, F16, BF16) {
  return mxfp4_setup(mxfp4_weights(1, 32, moderate_exponents(), rng), {{1}, {32}}, dt);
}

// 3 rows of 96: 36 words, 9 chunks of 4 on 64 threads.
IRON_TEST(iron_dequant_mxfp4, odd_chunk_count, F32, F16, BF16) {
  return mxfp4_setup(mxfp4_weights(3, 96, moderate_exponents(), rng), {{1}, {64}}, dt);
}

// 5 rows of 896 on one group of 32 threads: 4 whole batches a thread, then a tail of 48 items
// (96 in f32), more than the grid's threads.
IRON_TEST(iron_dequant_mxfp4, ragged_batches, F32, F16, BF16) {
  return mxfp4_setup(mxfp4_weights(5, 896, moderate_exponents(), rng), {{1}, {32}}, dt);
}

// Scale exponents at both ends of E8M0: e = 0 is 2^-127 (an f32 subnormal, products below f32's
// normal range, zero in f16), e = 254 is 2^127 (products of 2 and more overflow to ±inf in f32,
// which the harness compares exactly). e = 0xFF is NaN: the kernel returns NaN for its block,
// but the harness fills outputs with NaN and never passes one, so that case is not tested here.
IRON_TEST(iron_dequant_mxfp4, scale_exponent_limits, F32, F16, BF16) {
  const std::vector<std::uint32_t> limits = {0, 1, 2, 3, 112, 127, 142, 143, 252, 253, 254};
  return mxfp4_setup(mxfp4_weights(4, 512, limits, rng), {{2}, {32}}, dt);
}

IRON_BENCH(iron_dequant_mxfp4, w4096x14336, F32, F16, BF16) { return mxfp4_bench(dt); }

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
