/// The product every iron_gemm form shares: a group's 128×128 tile of a · op(b) on tensor-core
/// fragments, handed element by element to the form's epilogue (scale, bias, activation,
/// residual, beta · c). See kernels/gemm/gemm.cpp for the method and the error bound.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iron/iron.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace iron::kernels::gemm {

inline constexpr std::uint32_t kBM = 128;  ///< rows of out per group
inline constexpr std::uint32_t kBN = 128;  ///< columns of out per group
inline constexpr std::uint32_t kWM = 64;   ///< rows per simdgroup
inline constexpr std::uint32_t kWN = 64;   ///< columns per simdgroup
inline constexpr std::uint32_t kThreads = (kBM / kWM) * (kBN / kWN) * 32;
/// The stages the pipeline asks for: on sm_90, 96 KB of shared memory for 16-bit tiles (two
/// groups a multiprocessor); fewer where the target holds less, one on Metal (32 KB).
inline constexpr std::uint32_t kStages = 3;
inline constexpr std::uint32_t kBandRows = 8;  ///< tile rows per band of the launch order
static_assert((kBM / kWM) * (kBN / kWN) * 32 == kThreads, "one simdgroup per part of the tile");

/// Columns of `a` per step, and the padding of each shared row. 16-bit tiles are read by the
/// fragment loads 16 bytes (8 elements) at a time, a column of such chunks from 8 rows at once.
/// With WIDE steps (the b sources that copy their stage) a step is 64 columns in swizzled rows
/// (128 bytes, no padding; the chunks of 8 consecutive rows fall in different banks), which
/// halves the barriers a product needs; otherwise (a b source that decodes its stage, whose
/// registers a 64-column step would exhaust) 32 columns in rows padded by 8. f32 fragments load
/// element by element: 16 columns in rows padded by 4.
template <class T, bool WIDE>
constexpr bool swizzled() {
  return dsl::lane_bytes<T>() == 2 && WIDE;
}
template <class T, bool WIDE>
constexpr std::uint32_t step_k() {
  if constexpr (dsl::lane_bytes<T>() != 2) return 16;
  return WIDE ? 64 : 32;
}
template <class T, bool WIDE>
constexpr std::uint32_t pad() {
  if constexpr (dsl::lane_bytes<T>() != 2) return 4;
  return WIDE ? 0 : 8;
}
/// A ring of `per_stage` elements in rows of `pitch`: swizzled where the step is.
template <class T, bool WIDE>
dsl::Shared<T> tile_ring(std::uint32_t per_stage, std::uint32_t pitch) {
  if constexpr (swizzled<T, WIDE>()) {
    return dsl::ring<T>(per_stage, dsl::Swizzled{pitch});
  } else {
    return dsl::ring<T>(per_stage);
  }
}
inline constexpr std::uint32_t kChunk = 8;  ///< elements per 16-byte copy of f16/bf16

/// A row-major matrix in a tensor: `height` × `width` elements from `base`.
template <class T>
struct Matrix {
  const dsl::Tensor<T>& data;
  dsl::Expr<dsl::u32> base, height, width;
};

/// Starts copying rows [row0, row0 + Rows) × columns [col0, col0 + Cols) of `src` to `tile` at
/// `at` (rows `pitch` elements apart) with 16-byte asynchronous copies by a group of Threads,
/// zeros outside the matrix. Needs the base and width to be multiples of 8: a 16-byte piece is
/// then in or out of the matrix as a whole.
template <class T, std::uint32_t Rows, std::uint32_t Cols, std::uint32_t Threads = kThreads>
void start_tile_copy(const Matrix<T>& src, const dsl::Shared<T>& tile, std::uint32_t pitch,
                     const dsl::Expr<dsl::u32>& at, const dsl::Expr<dsl::u32>& row0,
                     const dsl::Expr<dsl::u32>& col0) {
  using namespace iron::dsl;
  constexpr std::uint32_t kW = 16 / lane_bytes<T>();  // elements per copy
  constexpr std::uint32_t kCopies = Rows * Cols / kW / Threads;
  constexpr std::uint32_t kAcross = Cols / kW;  // copies a row
  static_assert(Rows * Cols % (kW * Threads) == 0, "whole copies per thread");
  static_assert(Threads % kAcross == 0, "a thread's copies share its column");
  // Copy j of a thread is row r0 + j · kRowsApart, column c: the column, its check and the first
  // row's offsets are formed once, each copy adding constants (NVRTC's time is the code's size).
  constexpr std::uint32_t kRowsApart = Threads / kAcross;
  auto r0 = thread_id<0>() / kAcross;
  auto c = thread_id<0>() % kAcross * kW;
  auto first = row0 + r0;
  auto column_inside = col0 + c < src.width;
  auto from0 = src.base + first * src.width + col0 + c;
  auto to0 = at + r0 * pitch + c;
  for (std::uint32_t j = 0; j < kCopies; ++j) {
    auto inside = column_inside && first + j * kRowsApart < src.height;
    auto from = select(inside, from0 + j * kRowsApart * src.width, src.base);
    copy_async<kW>(tile[to0 + j * kRowsApart * pitch], src.data[from], inside);
  }
}

/// Copies rows [row0, row0 + rows) × columns [col0, col0 + cols) of `src` to `tile` (pitch
/// `pitch`) element by element, each converted to the tile's R, zeros outside the matrix: the
/// path for any width.
template <class T, class R>
void copy_tile(const Matrix<T>& src, const dsl::Shared<R>& tile, std::uint32_t pitch,
               const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& col0, std::uint32_t rows,
               std::uint32_t cols) {
  using namespace iron::dsl;
  for (auto v : range(thread_id<0>(), rows * cols, group_size<0>())) {
    auto r = v / cols;
    auto c = v % cols;
    IRON_IF(row0 + r < src.height && col0 + c < src.width) {
      auto value = load(src.data[src.base + (row0 + r) * src.width + col0 + c]);
      if constexpr (std::is_same_v<T, R>) {
        store(tile[r * pitch + c], value);
      } else {
        store(tile[r * pitch + c], cast<R>(value));
      }
    }
    IRON_ELSE { store(tile[r * pitch + c], 0.0f); }
  }
}

/// The dispatch and grid every form declares: kThreads threads, a group per kBM×kBN tile of out and
/// `batches` along z.
inline void declare(const std::string& batches = "1") {
  using namespace iron::dsl;
  dispatch(tiled, {exactly(kThreads)});
  grid("[ceil_div(n, " + std::to_string(kBN) + "), ceil_div(m, " + std::to_string(kBM) + "), " +
       batches + "]");
}

/// Shared-memory pitch (elements a row) of the b stage for a layout of b: [kBK, kBN] rows for
/// [k, n] (row_major), [kBN, kBK] for [n, k].
template <class T, dsl::MatrixLayout B_LAYOUT, bool WIDE>
constexpr std::uint32_t pitch_b() {
  return B_LAYOUT == dsl::row_major ? kBN + pad<T, WIDE>() : step_k<T, WIDE>() + pad<T, WIDE>();
}

/// The first row and column of out that the tile `order` of a tiles_m × tiles_n grid of tiles
/// (of rows × cols) covers, the tiles taken in bands of `band` tile rows, column by column
/// within a band, so that tiles in flight together share rows of a and columns of b in L2.
inline std::pair<dsl::Expr<dsl::u32>, dsl::Expr<dsl::u32>> banded_position(
    const dsl::Expr<dsl::u32>& order, const dsl::Expr<dsl::u32>& tiles_m,
    const dsl::Expr<dsl::u32>& tiles_n, std::uint32_t rows, std::uint32_t cols,
    std::uint32_t band) {
  using namespace iron::dsl;
  auto band_tiles = band * tiles_n;
  auto first_row = order / band_tiles * band;
  auto band_rows = min(tiles_m - first_row, Expr<u32>(band));
  return {(first_row + order % band_tiles % band_rows) * rows,
          order % band_tiles / band_rows * cols};
}

/// The first row and column of out that this group's tile covers (tiles of rows × cols), the
/// groups of an n-tiles × m-tiles grid in the banded order (banded_position).
inline std::pair<dsl::Expr<dsl::u32>, dsl::Expr<dsl::u32>> banded_tile(
    std::uint32_t rows, std::uint32_t cols, std::uint32_t band = kBandRows) {
  using namespace iron::dsl;
  auto tiles_n = grid_groups<0>();
  return banded_position(program_id<1>() * tiles_n + program_id<0>(), grid_groups<1>(), tiles_n,
                         rows, cols, band);
}

/// The b operand read from a dense tensor of T from `base`: [k, n] when B_LAYOUT is row_major,
/// else [n, k]. Every b source gives `product` the same three things: whether its stages can be
/// filled by 16-byte asynchronous copies, and two ways to fill the stage of k step p0 for
/// columns col0… of out at `at` in `tile` (pitch pitch_b): `start` (asynchronous when allowed)
/// and `copy` (element by element, for any shape).
template <class T, dsl::MatrixLayout B_LAYOUT>
struct DenseB {
  static constexpr dsl::MatrixLayout layout = B_LAYOUT;
  static constexpr bool wide_steps = true;  ///< copied stages: 64-column steps (step_k)
  const dsl::Tensor<T>& b;
  dsl::Expr<dsl::u32> base;
  /// A number `base` is a multiple of, for its alignment: a launch constant where base varies
  /// by group (a convolution group's g · n · k: n · k), so the copies' choice is specialized.
  dsl::Expr<dsl::u32> base_unit = base;

  Matrix<T> matrix(const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k) const {
    return B_LAYOUT == dsl::row_major ? Matrix<T>{b, base, k, n} : Matrix<T>{b, base, n, k};
  }
  dsl::Expr<bool> async_ok(const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k) const {
    return matrix(n, k).width % kChunk == 0u && base_unit % kChunk == 0u;
  }
  void start(const dsl::Shared<T>& tile, const dsl::Expr<dsl::u32>& at,
             const dsl::Expr<dsl::u32>& p0, const dsl::Expr<dsl::u32>& col0,
             const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k) const {
    constexpr std::uint32_t kBK = step_k<T, wide_steps>();
    constexpr std::uint32_t kPitch = pitch_b<T, B_LAYOUT, wide_steps>();
    if constexpr (B_LAYOUT == dsl::row_major) {
      start_tile_copy<T, kBK, kBN>(matrix(n, k), tile, kPitch, at, p0, col0);
    } else {
      start_tile_copy<T, kBN, kBK>(matrix(n, k), tile, kPitch, at, col0, p0);
    }
  }
  void copy(const dsl::Shared<T>& tile, const dsl::Expr<dsl::u32>& p0,
            const dsl::Expr<dsl::u32>& col0, const dsl::Expr<dsl::u32>& n,
            const dsl::Expr<dsl::u32>& k) const {
    constexpr std::uint32_t kBK = step_k<T, wide_steps>();
    constexpr std::uint32_t kPitch = pitch_b<T, B_LAYOUT, wide_steps>();
    if constexpr (B_LAYOUT == dsl::row_major) {
      copy_tile<T>(matrix(n, k), tile, kPitch, p0, col0, kBK, kBN);
    } else {
      copy_tile<T>(matrix(n, k), tile, kPitch, col0, p0, kBN, kBK);
    }
  }
};

/// The a operand read from a dense row-major [m, k] matrix of T from `base`. Every a source gives
/// product_from what a b source does: whether its stages can be filled by 16-byte asynchronous
/// copies, and two ways to fill the Rows × Cols stage of rows row0… and k columns p0… at `at` in
/// `tile` (rows `pitch` apart): `start` (asynchronous) and `copy` (element by element, for any
/// shape), zeros outside. An a source that gathers (kernels/convolution/im2col_a.hpp) makes the
/// same tiles of a matrix that is never stored.
template <class T>
struct DenseA {
  using type = T;
  const dsl::Tensor<T>& a;
  dsl::Expr<dsl::u32> base;
  dsl::Expr<dsl::u32> base_unit = base;  ///< as DenseB's: a number base is a multiple of

  Matrix<T> matrix(const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& k) const {
    return Matrix<T>{a, base, m, k};
  }
  dsl::Expr<bool> async_ok(const dsl::Expr<dsl::u32>& /*m*/, const dsl::Expr<dsl::u32>& k) const {
    return k % kChunk == 0u && base_unit % kChunk == 0u;
  }
  template <std::uint32_t Rows, std::uint32_t Cols>
  void start(const dsl::Shared<T>& tile, std::uint32_t pitch, const dsl::Expr<dsl::u32>& at,
             const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& p0,
             const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& k) const {
    start_tile_copy<T, Rows, Cols>(matrix(m, k), tile, pitch, at, row0, p0);
  }
  void copy(const dsl::Shared<T>& tile, std::uint32_t pitch, const dsl::Expr<dsl::u32>& row0,
            const dsl::Expr<dsl::u32>& p0, std::uint32_t rows, std::uint32_t cols,
            const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& k) const {
    copy_tile<T>(matrix(m, k), tile, pitch, row0, p0, rows, cols);
  }
};

/// How a step's 16-column k slices are traced: one copy each (each slice's fragment loads can be
/// scheduled under the previous slice's products) or one loop over them (a quarter of the code:
/// NVRTC ~70 ms less a GEMM and ~30 fewer registers, but 14% slower on the H200, bench/NOTES.md
/// §46).
enum class Slices { Unrolled, Rolled };

/// The knob of a fragment GEMM that offers both (`slices`: 0 unrolled, the default; 1 rolled).
inline dsl::TuningSpace slices_tuning_space() { return dsl::TuningSpace{}.knob("slices", {0, 1}); }

/// Computes the kBM×kBN tile of a · op(b) at (row0, col0) (`asrc` an a source such as DenseA, of
/// m rows and k columns; `bsrc` a b source such as DenseB) and hands each simdgroup's kWM × kWN
/// accumulator on whole: finish(acc, first_row, first_col), the row and column of its element
/// (0, 0), for an epilogue that writes several elements at once (the convolutions' paired
/// stores); or finish(acc, first_row, first_col, spent), `spent` the a ring, which no product
/// reads any more once every simdgroup has passed a barrier (an epilogue may overlay it).
template <Slices SLICES = Slices::Unrolled, class ASource, class BSource, class Finish>
void product_tile_from(const ASource& asrc, const BSource& bsrc, const dsl::Expr<dsl::u32>& m,
                       const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k,
                       const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& col0,
                       Finish&& finish) {
  using namespace iron::dsl;
  using T = typename ASource::type;
  constexpr bool kWide = BSource::wide_steps;
  constexpr std::uint32_t kBK = step_k<T, kWide>();
  constexpr std::uint32_t kPitchA = kBK + pad<T, kWide>();
  constexpr bool kb_rows = BSource::layout == row_major;  // b is [k, n]
  constexpr std::uint32_t kPitchB = pitch_b<T, BSource::layout, kWide>();

  // A ring of each tile: one stage being multiplied while later ones land.
  constexpr std::uint32_t kStageA = kBM * kPitchA;
  constexpr std::uint32_t kStageB = kb_rows ? kBK * kPitchB : kBN * kPitchB;
  auto tile_a = tile_ring<T, kWide>(kStageA, kPitchA);
  auto tile_b = tile_ring<T, kWide>(kStageB, kPitchB);
  auto warp = simdgroup_id();
  auto warp_row = warp / (kBN / kWN) * kWM;
  auto warp_col = warp % (kBN / kWN) * kWN;

  FragAcc<kWM, kWN> acc;
  FragA<T, kWM, 16> fa;
  FragB<T, 16, kWN> fb;
  // Multiplies the stage at `a0`, `b0` in shared memory into each simdgroup's accumulator.
  const auto slice = [&](const Expr<u32>& a0, const Expr<u32>& b0, const Expr<u32>& kk) {
    fa.load(tile_a, a0 + warp_row * kPitchA + kk, kPitchA);
    if constexpr (kb_rows) {
      fb.load(tile_b, b0 + kk * kPitchB + warp_col, kPitchB);
    } else {
      fb.load(tile_b, b0 + warp_col * kPitchB + kk, kPitchB, col_major);
    }
    mma(acc, fa, fb);
  };
  const auto multiply = [&](const Expr<u32>& a0, const Expr<u32>& b0) {
    if constexpr (SLICES == Slices::Rolled) {
      for (auto kk : range(0u, kBK, 16u)) slice(a0, b0, kk);
    } else {
      for (std::uint32_t kk = 0; kk < kBK; kk += 16) slice(a0, b0, Expr<u32>(kk));
    }
  };
  IRON_IF(specialized(asrc.async_ok(m, k) && bsrc.async_ok(n, k))) {
    // Whole 16-byte pieces: step p0 + kBK's tiles are copied asynchronously while step p0's
    // are multiplied.
    const auto start = [&](const Expr<u32>& p0, const Expr<u32>& stage) {
      asrc.template start<kBM, kBK>(tile_a, kPitchA, stage * kStageA, row0, p0, m, k);
      bsrc.start(tile_b, stage * kStageB, p0, col0, n, k);
    };
    pipelined(
        0u, k, kBK, kStages, [&](const Expr<u32>& p0, const Expr<u32>& slot) { start(p0, slot); },
        [&](const Expr<u32>&, const Expr<u32>& slot) { multiply(slot * kStageA, slot * kStageB); });
  }
  IRON_ELSE {
    for (auto p0 : range(0u, k, kBK)) {
      asrc.copy(tile_a, kPitchA, row0, p0, kBM, kBK, m, k);
      bsrc.copy(tile_b, p0, col0, n, k);
      barrier();
      multiply(Expr<u32>(0u), Expr<u32>(0u));
      barrier();
    }
  }
  if constexpr (std::is_invocable_v<Finish&, const FragAcc<kWM, kWN>&, Expr<u32>, Expr<u32>,
                                    const Shared<T>&>) {
    finish(acc, row0 + warp_row, col0 + warp_col, tile_a);
  } else {
    finish(acc, row0 + warp_row, col0 + warp_col);
  }
}

/// The rows of a band that product_from's epilogue stages at a time: whole tiles of both lane
/// maps and of wmma's 16×16 ones (slot s in tile s / 8), so a band's slots are every target's.
inline constexpr std::uint32_t kStagedRows = 16;
static_assert(ir::slots_in_row_bands({ir::FragmentRole::Acc, kWM, kWN}, kStagedRows),
              "a band's slots are named statically");

/// Columns a thread hands on together from a staged band of a whole tile: 16 bytes of bf16.
inline constexpr std::uint32_t kRun = 8;

/// Hands the ROWS × COLS f32 sums staged in `staged` (rows PITCH apart) on to epilogue(r, c,
/// sum) for out's rows first_row … and columns col0 …, THREADS threads taking runs of kRun
/// consecutive columns in straight-line order, so that an epilogue's stores of a run merge into
/// one 16-byte store (docs/compiler.md, "vectorize"): a warp writes 256 consecutive elements of
/// the band's rows a time. The loop stays rolled but for TOGETHER: unrolled over eight runs, its
/// copies cost NVRTC a tenth of a GEMM's compile and the kernel nothing (bench/NOTES.md §62).
/// A run is read as two 16-byte halves (vectorize), lanes 4–7 of every 8 taking their second half
/// first: runs are 8 banks apart, so lanes l and l + 4 would share banks, and this way each read
/// of a quarter-warp covers the 32 banks once (bench/NOTES.md §68).
/// For a band wholly inside out, whose row pitch is a multiple of kRun. The band lies at
/// staged[base …] and `worker` is the calling thread's index among the THREADS (by default the
/// group's first THREADS threads, the band at 0). TOGETHER (a band of a few runs a thread, each
/// thread's count the same): a thread reads all its runs before it hands the first on, so their
/// shared reads are in flight together rather than one run's after another's stores.
template <std::uint32_t ROWS, std::uint32_t COLS, std::uint32_t PITCH, std::uint32_t THREADS,
          bool TOGETHER = false, class Epilogue>
void hand_on_runs(const dsl::Shared<dsl::f32>& staged, const dsl::Expr<dsl::u32>& first_row,
                  const dsl::Expr<dsl::u32>& col0, Epilogue&& epilogue,
                  const dsl::Expr<dsl::u32>& worker = dsl::thread_id<0>(),
                  const dsl::Expr<dsl::u32>& base = 0u) {
  using namespace iron::dsl;
  constexpr std::uint32_t kHalf = kRun / 2;
  static_assert(PITCH % kHalf == 0 && COLS % kRun == 0, "halves of runs are 16-byte aligned");
  constexpr std::uint32_t kRuns = ROWS * COLS / kRun;
  static_assert(!TOGETHER || kRuns % THREADS == 0, "every thread reads as many runs");
  auto half = worker & kHalf;  // the half this lane reads first
  auto second_first = half != 0u;
  // Run u's sums in column order, read as two halves in this lane's order.
  struct Read {
    Expr<u32> r;
    Expr<u32> c;
    std::vector<Expr<f32>> sums;
  };
  const auto read = [&](const Expr<u32>& u) {
    auto v = u * kRun;
    auto at = base + (v / COLS * PITCH + v % COLS);
    auto first = at + half;
    auto other = at + (half ^ kHalf);
    std::vector<Expr<f32>> read_first;
    std::vector<Expr<f32>> read_other;
    for (std::uint32_t e = 0; e < kHalf; ++e) read_first.push_back(load(staged[first + e]));
    for (std::uint32_t e = 0; e < kHalf; ++e) read_other.push_back(load(staged[other + e]));
    Read run{first_row + v / COLS, col0 + v % COLS, {}};
    for (std::uint32_t e = 0; e < kHalf; ++e) {
      run.sums.push_back(select(second_first, read_other[e], read_first[e]));
    }
    for (std::uint32_t e = 0; e < kHalf; ++e) {
      run.sums.push_back(select(second_first, read_first[e], read_other[e]));
    }
    return run;
  };
  const auto hand_on = [&](const Read& run) {
    for (std::uint32_t e = 0; e < kRun; ++e) epilogue(run.r, run.c + e, run.sums[e]);
  };
  if constexpr (TOGETHER) {
    std::vector<Read> runs;
    for (std::uint32_t i = 0; i < kRuns / THREADS; ++i) runs.push_back(read(worker + i * THREADS));
    for (const Read& run : runs) hand_on(run);
  } else {
    for (auto u : rolled_range(worker, kRuns, THREADS)) hand_on(read(u));
  }
}

/// The same, each element checked against (m, n): for a band that may reach past out's edges
/// (rolled too).
template <std::uint32_t ROWS, std::uint32_t COLS, std::uint32_t PITCH, std::uint32_t THREADS,
          class Epilogue>
void hand_on_checked(const dsl::Shared<dsl::f32>& staged, const dsl::Expr<dsl::u32>& first_row,
                     const dsl::Expr<dsl::u32>& col0, const dsl::Expr<dsl::u32>& m,
                     const dsl::Expr<dsl::u32>& n, Epilogue&& epilogue,
                     const dsl::Expr<dsl::u32>& worker = dsl::thread_id<0>(),
                     const dsl::Expr<dsl::u32>& base = 0u) {
  using namespace iron::dsl;
  for (auto v : rolled_range(worker, ROWS * COLS, THREADS)) {
    auto r = first_row + v / COLS;
    auto c = col0 + v % COLS;
    IRON_IF(r < m && c < n) { epilogue(r, c, load(staged[base + (v / COLS * PITCH + v % COLS)])); }
  }
}

/// Hands every element (r, c) < (m, n) of the kBM×kBN tile at (row0, col0) to epilogue(r, c,
/// sum) through an f32 overlay of the spent a ring, so that the epilogue is traced once, in a
/// loop, instead of once an accumulator slot (128 a lane): NVRTC spends ~90 ms less on a GEMM,
/// ~270 on a fused activation (bench/NOTES.md §45), and a simdgroup's stores cover one row's
/// consecutive columns, not eight rows' pairs. Where the target has the room
/// (TargetFeature::LargeSharedMemory) the simdgroups take turns, each storing its whole
/// accumulator with one fragment store, whose addresses are a lane base plus constants (NVRTC
/// spends a fifth less on the whole GEMM than on per-slot stores, §61); the overlay takes bytes
/// of its own where the ring is smaller. On Metal, two simdgroups at a time store a band of
/// kStagedRows rows slot by slot (a band's slots are the same on every lane map), which a
/// one-stage ring holds. For 16-bit T, where the tile lies wholly inside out and `aligned` holds
/// (the epilogue's row pitch a multiple of kRun; by default n), each thread takes runs of kRun
/// consecutive columns in straight-line order, whose stores vectorize merges into 16-byte ones
/// (docs/compiler.md, "vectorize").
template <class T, class Epilogue>
void staged_epilogue(const dsl::FragAcc<kWM, kWN>& acc, const dsl::Shared<T>& spent,
                     const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& n,
                     const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& col0,
                     Epilogue&& epilogue, const std::optional<dsl::Expr<bool>>& aligned = {}) {
  using namespace iron::dsl;
  // Runs for 16-bit T only: in f32 the second copy of the epilogue cost the convolution's
  // unbound form (both its bodies) a spill at 255 registers.
  constexpr bool kRuns = lane_bytes<T>() == 2;
  std::optional<Expr<bool>> whole;
  if constexpr (kRuns) {
    whole = row0 + kBM <= m && col0 + kBN <= n && (aligned ? *aligned : n % kRun == 0u);
  }
  // Hands on the ROWS × COLS sums staged at PITCH from (first_row, first_col).
  const auto hand_on = [&]<std::uint32_t ROWS, std::uint32_t COLS, std::uint32_t PITCH>(
                           const Shared<f32>& staged, const Expr<u32>& first_row,
                           const Expr<u32>& first_col) {
    if constexpr (kRuns) {
      IRON_IF(*whole) {
        hand_on_runs<ROWS, COLS, PITCH, kThreads>(staged, first_row, first_col, epilogue);
      }
      IRON_ELSE {
        hand_on_checked<ROWS, COLS, PITCH, kThreads>(staged, first_row, first_col, m, n, epilogue);
      }
    } else {
      hand_on_checked<ROWS, COLS, PITCH, kThreads>(staged, first_row, first_col, m, n, epilogue);
    }
  };
  constexpr std::uint32_t kAcross = kBN / kWN;  // simdgroups side by side
  auto warp = simdgroup_id();
  barrier();  // every simdgroup has read its last stage
  IRON_IF(target_has(TargetFeature::LargeSharedMemory)) {
    // f32 rows 8 banks apart: a half-warp's 8-byte stores, 4 rows of 4 lanes, fill 32 banks once
    constexpr std::uint32_t kPitch = kWN + 8;
    auto staged = overlay<f32>(spent, kWM * kPitch);
    for (auto turn : range(0u, kThreads / 32)) {
      IRON_IF(warp == turn) { acc.store(staged, 0u, kPitch); }
      barrier();
      hand_on.template operator()<kWM, kWN, kPitch>(staged, row0 + turn / kAcross * kWM,
                                                    col0 + turn % kAcross * kWN);
      barrier();
    }
  }
  IRON_ELSE {
    constexpr std::uint32_t kPitch = kBN + 4;  // f32 rows 4 banks apart: a band's rows spread
    constexpr std::uint32_t kBands = kWM / kStagedRows;
    constexpr std::uint32_t kHalves = kBM / kWM;
    constexpr std::uint32_t kSlotsABand = FragAcc<kWM, kWN>::elements / kBands;
    auto staged = overlay<f32>(spent, kStagedRows * kPitch);
    for (auto round : range(0u, kHalves * kBands)) {
      auto half = round / kBands;
      auto band = round % kBands;
      IRON_IF(warp / kAcross == half) {
        auto column = warp % kAcross * kWN;
        for (std::uint32_t b = 0; b < kBands; ++b) {
          IRON_IF(band == b) {
            for (std::uint32_t i = 0; i < kSlotsABand; ++i) {
              const std::uint32_t slot = b * kSlotsABand + i;
              store(staged[(acc.row(slot) - b * kStagedRows) * kPitch + column + acc.col(slot)],
                    acc.get(slot));
            }
          }
        }
      }
      barrier();
      hand_on.template operator()<kStagedRows, kBN, kPitch>(
          staged, row0 + half * kWM + band * kStagedRows, col0);
      barrier();
    }
  }
}

/// product_tile_from with an element-by-element epilogue: epilogue(r, c, sum) for every element
/// (r, c) of the tile inside out, with sum the f32 Σ_p a(r, p) · b(p, c) (staged_epilogue).
template <Slices SLICES = Slices::Unrolled, class ASource, class BSource, class Epilogue>
void product_from(const ASource& asrc, const BSource& bsrc, const dsl::Expr<dsl::u32>& m,
                  const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k,
                  const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& col0,
                  Epilogue&& epilogue, const std::optional<dsl::Expr<bool>>& aligned = {}) {
  using namespace iron::dsl;
  using T = typename ASource::type;
  product_tile_from<SLICES>(asrc, bsrc, m, n, k, row0, col0,
                            [&](const FragAcc<kWM, kWN>& acc, const Expr<u32>&, const Expr<u32>&,
                                const Shared<T>& spent) {
                              staged_epilogue(acc, spent, m, n, row0, col0, epilogue, aligned);
                            });
}

/// Computes the kBM×kBN tile of a · op(b) at (row0, col0) (`a` [m, k] from `a_base`; `b` a b
/// source such as DenseB) and calls epilogue(r, c, sum) for every element (r, c) of the tile
/// inside out, with sum the f32 Σ_p a[r, p] · b(p, c): product_from with a DenseA.
template <Slices SLICES = Slices::Unrolled, class T, class BSource, class Epilogue>
void product_at(const dsl::Tensor<T>& a, const BSource& bsrc, const dsl::Expr<dsl::u32>& m,
                const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k,
                const dsl::Expr<dsl::u32>& a_base, const dsl::Expr<dsl::u32>& row0,
                const dsl::Expr<dsl::u32>& col0, Epilogue&& epilogue) {
  product_from<SLICES>(DenseA<T>{a, a_base}, bsrc, m, n, k, row0, col0,
                       std::forward<Epilogue>(epilogue));
}

/// This group's tile of a · op(b) in the banded launch order (banded_tile), as product_at.
template <Slices SLICES = Slices::Unrolled, class T, class BSource, class Epilogue>
void product(const dsl::Tensor<T>& a, const BSource& bsrc, const dsl::Expr<dsl::u32>& m,
             const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k,
             const dsl::Expr<dsl::u32>& a_base, Epilogue&& epilogue) {
  const auto [row0, col0] = banded_tile(kBM, kBN);
  product_at<SLICES>(a, bsrc, m, n, k, a_base, row0, col0, epilogue);
}

/// The launch of every form: a group per kBM×kBN tile of out, `batches` along z.
inline dsl::Geometry geometry(const dsl::GeometryQuery& q, std::uint32_t batches = 1) {
  return {{dsl::tile_count(q.constant("n"), kBN), dsl::tile_count(q.constant("m"), kBM), batches},
          {kThreads, 1, 1}};
}

}  // namespace iron::kernels::gemm
