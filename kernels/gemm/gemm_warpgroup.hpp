/// The product of iron_gemm_warpgroup_nk (and, b given as [k, n], iron_gemm_warpgroup_kn): a
/// group's 128×256 tile of a · bᵀ by two consumer warpgroups, each a 64×256 warpgroup product a
/// step on sm_90a (Hopper's wgmma), two 128×128 halves of 64×128 products elsewhere, lowered to
/// each simdgroup's fragment products; a third warpgroup loads (a specialized pipeline: on sm_90a
/// its first thread issues the TMA copies) (docs/tensor-cores.md, "Warpgroup products",
/// "Specialized pipelines", "One source, each target's path"). See kernels/gemm/gemm.cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <iron/iron.hpp>
#include <optional>
#include <string>
#include <type_traits>

#include "gemm_tiles.hpp"

namespace iron::kernels::gemm::warpgroup {

inline constexpr std::uint32_t kBM = 128;  ///< rows of out per group: 64 per warpgroup
inline constexpr std::uint32_t kBN = 256;  ///< columns of out per group

/// k per step for operands of T: one 128-byte row (128 8-bit floats).
template <class T>
constexpr std::uint32_t step_of() {
  return 128 / dsl::lane_bytes<T>();
}
/// The element type of the rings a product of T tensors multiplies from on a target without
/// warpgroup products: T, except 8-bit floats, which only Hopper's wgmma multiplies and which
/// f16 holds exactly.
template <class T>
using fallback_ring_t = std::conditional_t<dsl::lane_bytes<T>() == 1, dsl::f16, T>;

/// Threads that multiply in a group of `bm` rows: a warpgroup per 64 rows.
constexpr std::uint32_t consumers_of(std::uint32_t bm) { return bm / 64 * 128; }
/// Threads of a group of `bm` rows: its consumers and a warpgroup that loads.
constexpr std::uint32_t threads_of(std::uint32_t bm) { return consumers_of(bm) + 128; }

inline constexpr std::uint32_t kConsumers = consumers_of(kBM);  ///< two warpgroups multiply
inline constexpr std::uint32_t kThreads = threads_of(kBM);      ///< and a third loads
/// Stages asked for by the 128×128 halves: 96 KB of shared memory on sm_90 (32 KB a stage, so one
/// stage fits Metal's threadgroup memory).
inline constexpr std::uint32_t kStages = 3;
/// Stages and lag of the 128×256 product on sm_90a: 192 KB, one group a multiprocessor.
inline constexpr std::uint32_t kWideStages = 4;
inline constexpr std::uint32_t kWideLag = 1;
/// The warpgroup product's epilogue goes through shared memory a simdgroup's 16 rows and
/// kBandCols columns at a time (f32, rows kBandCols + 8 apart: 8 banks, so that the four rows of
/// a half-warp's 8-byte accumulator stores fill the 32 banks once), so that 4 lanes hand the
/// epilogue 32 consecutive columns of one row: the accumulator's own layout gives a lane pairs
/// of 8 bytes. 20 KB for eight simdgroups, beside the 192 KB ring of 128×256.
inline constexpr std::uint32_t kBandCols = 32;

/// How a group's product runs, each field a tuning knob (docs/tuning.md): `bm` rows (128 or 64:
/// two warpgroups multiply, or one) and `bn` columns (256, 128 or 64) of out a tile; on sm_90a a
/// ring of `stages` steps whose products stay in flight `lag` more steps; tiles taken in bands
/// of `band` tile rows (banded_position); `persistent`: a group a multiprocessor, each taking
/// every grid-th tile, its ring running on from one tile to the next (persistent_tile_product),
/// else a group a tile; `resident` groups a multiprocessor asked of the compiler (occupancy: each
/// gets that share of the registers and of the shared memory, which bounds its stages), so that
/// one group's epilogue runs beside another's products; a persistent launch has that many a
/// multiprocessor.
struct Shape {
  std::uint32_t bm = kBM;
  std::uint32_t bn = kBN;
  std::uint32_t stages = kWideStages;
  std::uint32_t lag = kWideLag;
  std::uint32_t band = kBandRows;
  bool persistent = false;
  std::uint32_t resident = 1;
};

/// Tiles from which a launch is made persistent by the rule (prefer_tiles): two a
/// multiprocessor on a 132-multiprocessor GPU, so that every group takes several. On the H100
/// the persistent form gained 1–2% at 4096³ to 16384×14336×4096 and lost 1.5% where each group
/// had one tile (bench/NOTES.md §56).
inline constexpr double kPersistentTiles = 264;

/// Whether a launch of m × n tiles of the default shape, k deep, takes the persistent form:
/// enough tiles (kPersistentTiles) and k whole 16-byte pieces of operands of `lane_bytes`.
inline bool persistent_pays(double m, double n, double k, std::uint32_t lane_bytes) {
  const double tiles = std::ceil(m / kBM) * std::ceil(n / kBN);
  return tiles >= kPersistentTiles && std::fmod(k, 16.0 / lane_bytes) == 0;
}

/// Tiles below which the rule narrows a launch's tile (prefer_tiles): about three quarters of a
/// 132-multiprocessor GPU's groups.
inline constexpr double kFillTiles = 96;

/// Stages the rule asks for with a narrowed tile: more than fit, so the ring takes all the
/// shared memory (13 stages of 64×64 on sm_90a, 6 of 128×128). A group of a small-m launch streams
/// its weight columns at the rate its ring keeps in flight: 4 → 6 → 8 stages of 64×64 took m = 128,
/// n = 4096, k = 14336 from 67.3 to 56.4 to 50.0 µs on the H100 (bench/NOTES.md §57).
inline constexpr std::uint32_t kFillStages = 16;

/// The rule of a product of OPERAND_BYTES-byte operands (0: of T, taken only for 16-bit T): a
/// launch of too few 128×256 tiles to fill the device (a small m: decode and short prompts)
/// takes narrower ones, 256 → 128 → 64 columns and then 64 rows, until it has kFillTiles (at
/// m = 128 the H200's tuner chose 64×64 for n = 4096 and 128×128 for n = 14336, bench/NOTES.md
/// §56), with a ring as deep as the shared memory holds (kFillStages); a launch of many tiles is
/// made `persistent` where persistent_pays (and, B_ROWS: b [k, n], n is whole 16-byte pieces too,
/// the persistent contract); the others keep the defaults.
template <std::uint32_t OPERAND_BYTES, bool B_ROWS = false>
dsl::TuningConfig prefer_tiles(DType dtype, const dsl::LaunchConstants& c) {
  const std::uint32_t bytes = OPERAND_BYTES != 0                            ? OPERAND_BYTES
                              : dtype == DType::F16 || dtype == DType::BF16 ? 2
                                                                            : 0;
  const auto m = c.find("m");
  const auto n = c.find("n");
  const auto k = c.find("k");
  if (bytes == 0 || m == c.end() || n == c.end() || k == c.end()) return {};
  if (persistent_pays(m->second, n->second, k->second, bytes) &&
      (!B_ROWS || std::fmod(n->second, 16.0 / bytes) == 0)) {
    return {{"persistent", 1}};
  }
  std::uint32_t bm = kBM;
  std::uint32_t bn = kBN;
  const auto tiles = [&] { return std::ceil(m->second / bm) * std::ceil(n->second / bn); };
  while (tiles() < kFillTiles && bm > kBM / 2) {
    if (bn > kBN / 4) {
      bn /= 2;
    } else {
      bm /= 2;
    }
  }
  dsl::TuningConfig config;
  if (bm != kBM) config["bm"] = bm;
  if (bn != kBN) config["bn"] = bn;
  if (!config.empty()) config["stages"] = kFillStages;
  return config;
}

/// The knobs of a kernel whose product is tile_product, each value list's first the default
/// Shape, with the rule of OPERAND_BYTES and B_ROWS (prefer_tiles). A stage is (bm + bn) · 128
/// bytes: 6 do not fit beside 256 columns, where the compiler runs as many as fit (`iron tune`
/// reports a configuration that compiles to another's code; kFillStages always asks for more than
/// fit), and the persistent form keeps no product in flight past its step (`lag` changes nothing
/// under it).
template <std::uint32_t OPERAND_BYTES = 0, bool B_ROWS = false>
dsl::TuningSpace tuning_space() {
  return dsl::TuningSpace{}
      .knob("bm", {kBM, kBM / 2})
      .knob("bn", {kBN, kBN / 2, kBN / 4})
      .knob("stages", {kWideStages, 3, 6, 8, kFillStages})
      .knob("lag", {kWideLag, 0})
      .knob("band", {kBandRows, 4, 16})
      .knob("persistent", {0, 1})
      .knob("resident", {1, 2})
      .prefer(&prefer_tiles<OPERAND_BYTES, B_ROWS>);
}

/// The Shape of the knobs in force (dsl::tuned), for a kernel that declares tuning_space().
inline Shape tuned_shape() {
  return {dsl::tuned("bm"),      dsl::tuned("bn"),   dsl::tuned("stages"),
          dsl::tuned("lag"),     dsl::tuned("band"), dsl::tuned("persistent") == 1,
          dsl::tuned("resident")};
}

/// The shared rings of a product of BM×BN: BM×step of a and BN×step of b a stage (step_of), in
/// 128-byte swizzled rows (b in plain rows where B_SWIZZLED is false); one stage each where RING
/// is false (a product that only goes step by step, which no pipeline cycles).
template <class T, std::uint32_t BM, std::uint32_t BN, bool RING = true, bool B_SWIZZLED = true>
struct Rings {
  static constexpr std::uint32_t kStep = step_of<T>();
  static constexpr std::uint32_t kStageA = BM * kStep;
  static constexpr std::uint32_t kStageB = BN * kStep;
  static dsl::Shared<T> make(std::uint32_t size, bool swizzled = true) {
    const dsl::Swizzled rows{swizzled ? kStep : 0u};
    if constexpr (RING) {
      return dsl::ring<T>(size, rows);
    } else {
      return dsl::shared<T>(size, rows);
    }
  }
  dsl::Shared<T> a = make(kStageA);
  dsl::Shared<T> b = make(kStageB, B_SWIZZLED);
};

/// b given as [k, n] (row-major): a plain tensor b is [n, k], a weight's layout. With PANELS a
/// step of it lands in the ring as BN / step panels of step rows of k by one 128-byte swizzled row
/// of n each, one TMA box a panel, which the warpgroup product reads in place (B row-major in
/// panels); without, as step plain rows of BN (pieces_product: a lowered product across panels
/// would place them by the target's lane map, on which a kernel checked on every map may not
/// depend).
template <class T, bool PANELS = true>
struct RowsB {
  using Element = T;
  const dsl::Tensor<T>& tensor;
};
template <class B>
inline constexpr bool kRowsB = false;
template <class T, bool PANELS>
inline constexpr bool kRowsB<RowsB<T, PANELS>> = true;
/// Whether b's ring is in swizzled rows: all but a [k, n] b in plain rows.
template <class B>
inline constexpr bool kSwizzledB = true;
template <class T>
inline constexpr bool kSwizzledB<RowsB<T, false>> = false;

template <class T>
const dsl::Tensor<T>& tensor_of(const dsl::Tensor<T>& b) {
  return b;
}
template <class T, bool PANELS>
const dsl::Tensor<T>& tensor_of(const RowsB<T, PANELS>& b) {
  return b.tensor;
}

/// Whether the rows of a [m, k] and of b are whole 16-byte pieces of T (asynchronous and TMA
/// copies): k's, and n's where b is [k, n].
template <class T, class B>
dsl::Expr<bool> rows_whole(const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k) {
  constexpr std::uint32_t kPiece = 16 / dsl::lane_bytes<T>();
  if constexpr (kRowsB<B>) {
    return k % kPiece == 0u && n % kPiece == 0u;
  } else {
    return k % kPiece == 0u;
  }
}

/// Starts copying the step at k p0 of b's columns col0 … col0 + BN - 1 to ring[at …]: BN rows of
/// STEP (b [n, k]), BN / STEP panels of STEP × STEP (b [k, n]) or STEP rows of BN (b [k, n] in
/// plain rows).
template <std::uint32_t BN, std::uint32_t STEP, class T, class B>
void copy_b_async(const dsl::Shared<T>& ring, const dsl::Expr<dsl::u32>& at, const B& b,
                  const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k,
                  const dsl::Expr<dsl::u32>& col0, const dsl::Expr<dsl::u32>& p0) {
  using namespace iron::dsl;
  if constexpr (kRowsB<B> && !kSwizzledB<B>) {
    copy_tile_async<STEP, BN>(ring, at, tensor_of(b), Expr<u32>(0u), k, n, p0, col0);
  } else if constexpr (kRowsB<B>) {
    static_assert(BN % STEP == 0, "a [k, n] tile is whole panels");
    static_assert(dsl::lane_bytes<T>() == 2, "a [k, n] B is read row-major: 16-bit operands only");
    for (std::uint32_t j = 0; j < BN / STEP; ++j) {
      copy_tile_async<STEP, STEP>(ring, at + j * STEP * STEP, tensor_of(b), Expr<u32>(0u), k, n, p0,
                                  col0 + j * STEP);
    }
  } else {
    copy_tile_async<BN, STEP>(ring, at, b, Expr<u32>(0u), n, k, col0, p0);
  }
}

/// copy_b_async's step element by element (the path for any width) to tile[0 …], each element
/// converted to the tile's R (b [n, k]; a [k, n] b is 16-bit, as its ring).
template <std::uint32_t BN, std::uint32_t STEP, class R, class B>
void copy_b(const dsl::Shared<R>& tile, const B& b, const dsl::Expr<dsl::u32>& n,
            const dsl::Expr<dsl::u32>& k, const dsl::Expr<dsl::u32>& col0,
            const dsl::Expr<dsl::u32>& p0) {
  using namespace iron::dsl;
  if constexpr (kRowsB<B>) {
    static_assert(std::is_same_v<typename B::Element, R>, "16-bit rings hold b as it is");
    // Row r, column c of the step: panel c / STEP, at (c / STEP) · STEP² + r · STEP + c % STEP;
    // in plain rows at r · BN + c.
    for (auto v : range(thread_id<0>(), STEP * BN, group_size<0>())) {
      auto r = v / BN;
      auto c = v % BN;
      auto to = kSwizzledB<B> ? c / STEP * (STEP * STEP) + r * STEP + c % STEP : r * BN + c;
      IRON_IF(p0 + r < k && col0 + c < n) {
        store(tile[to], load(tensor_of(b)[(p0 + r) * n + col0 + c]));
      }
      IRON_ELSE { store(tile[to], 0.0f); }
    }
  } else {
    copy_tile(Matrix{b, Expr<u32>(0u), n, k}, tile, STEP, col0, p0, BN, STEP);
  }
}

/// Whether A is an a source of its own (a type with Element, start, copy, whole, and the rows
/// of out its tile's rows are: whole_rows, inside, at; kernels/convolution/image_product.hpp)
/// rather than a tensor a [m, k] whose rows row0 … the tile's rows are.
template <class A>
inline constexpr bool kSourceA = true;
template <class T, ir::ParamKind K>
inline constexpr bool kSourceA<dsl::TensorParam<T, K>> = false;
template <class A>
struct ElementOfA {
  using type = typename A::Element;
};
template <class T, ir::ParamKind K>
struct ElementOfA<dsl::TensorParam<T, K>> {
  using type = T;
};
template <class A>
using element_of_a = typename ElementOfA<A>::type;

/// The rows of out a product's tile is: rows row0 … of a matrix of m rows (an a source, kSourceA,
/// has whole_rows, inside and at of its own instead).
struct MatrixRows {
  dsl::Expr<dsl::u32> row0;
  dsl::Expr<dsl::u32> m;
  template <std::uint32_t BM>
  dsl::Expr<bool> whole_rows() const {
    return row0 + BM <= m;
  }
};

/// Calls epilogue(r, c, sum) for every element (r, c) of the BM×BN tile at `rows`, col0 inside
/// out whose sums the consumers' accumulators hold (simdgroup s: rows 16·s …). Each consumer
/// simdgroup stages its own rows through shared memory of its own, kBandCols columns at a time
/// (no barrier of the group: a simdgroup barrier orders its lanes), and hands them on a row's
/// 32 consecutive columns to 4 lanes, so that a 16-byte store of a lane covers a run of kRun. With
/// MatrixRows, r is row0 + the tile's row and inside means r < m; with an a source, the tile's
/// row r is out's row rows.at(r), inside where rows.inside(r). WHOLE_TILES: a tile wholly inside
/// out (rows.whole_rows, and the columns) is copied out with no check an element, which took the
/// GEMM's epilogue from ~8 to ~4 µs a tile (bench/NOTES.md §36); an epilogue that checks bounds
/// of its own (the grouped products' expert rows) does better with the checked loop alone. Only
/// the consumers take part; the others (a producer) may reach it or not.
template <std::uint32_t BM, std::uint32_t BN, bool WHOLE_TILES, class Rows, class Epilogue>
void staged_epilogue_of(const dsl::FragAcc<16, BN>& acc, const Rows& rows,
                        const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& col0,
                        Epilogue&& epilogue) {
  using namespace iron::dsl;
  static_assert(BN % kBandCols == 0, "a tile is whole bands");
  constexpr std::uint32_t kPitch = kBandCols + 8;
  constexpr std::uint32_t kBand = 16 * kPitch;
  constexpr std::uint32_t kConsumerThreads = consumers_of(BM);
  auto staged = shared<f32>(kConsumerThreads / 32 * kBand);
  // No element of the tile outside out, and rows of whole 16-byte runs of 16-bit elements.
  auto whole = rows.template whole_rows<BM>() && col0 + BN <= n && n % kRun == 0u;
  IRON_IF(simdgroup_id() < kConsumerThreads / 32u) {
    auto simdgroup = simdgroup_id();
    auto lane = thread_id<0>() % 32u;
    auto base = simdgroup * kBand;
    auto tile_row = simdgroup * 16u;  // the tile's row of this simdgroup's first
    // The band's rows handed on, unchecked (runs) or each checked (checked).
    const auto hand_on = [&](const Expr<u32>& first_row, const Expr<u32>& m,
                             const Expr<u32>& first_col, auto&& runs, auto&& checked) {
      const auto each_checked = [&] {
        hand_on_checked<16, kBandCols, kPitch, 32>(staged, first_row, first_col, m, n, checked,
                                                   lane, base);
      };
      if constexpr (WHOLE_TILES) {
        IRON_IF(whole) {
          hand_on_runs<16, kBandCols, kPitch, 32, true>(staged, first_row, first_col, runs, lane,
                                                        base);
        }
        IRON_ELSE { each_checked(); }
      } else {
        each_checked();
      }
    };
    // A traced loop, not a C++ one: the code holds one copy-out, not one a band (NVRTC spent
    // ~80 ms on three more a tile; bench/NOTES.md §39); each band's store is one of its own.
    for (auto band : range(0u, BN / kBandCols)) {
      for (std::uint32_t b = 0; b < BN / kBandCols; ++b) {
        IRON_IF(band == b) { acc.store_columns(staged, base, kPitch, b * kBandCols, kBandCols); }
      }
      simdgroup_barrier();
      auto first_col = col0 + band * kBandCols;
      if constexpr (std::is_same_v<Rows, MatrixRows>) {
        hand_on(rows.row0 + tile_row, rows.m, first_col, epilogue, epilogue);
      } else {
        hand_on(
            tile_row, Expr<u32>(BM), first_col,
            [&](const Expr<u32>& r, const Expr<u32>& c, const Expr<f32>& sum) {
              epilogue(rows.at(r), c, sum);
            },
            [&](const Expr<u32>& r, const Expr<u32>& c, const Expr<f32>& sum) {
              IRON_IF(rows.inside(r)) { epilogue(rows.at(r), c, sum); }
            });
      }
      simdgroup_barrier();  // every lane has read the band before the next one lands
    }
  }
}

/// staged_epilogue_of the tile at (row0, col0) of out [m, n].
template <std::uint32_t BM, std::uint32_t BN, bool WHOLE_TILES, class Epilogue>
void staged_epilogue(const dsl::FragAcc<16, BN>& acc, const dsl::Expr<dsl::u32>& m,
                     const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& row0,
                     const dsl::Expr<dsl::u32>& col0, Epilogue&& epilogue) {
  staged_epilogue_of<BM, BN, WHOLE_TILES>(acc, MatrixRows{row0, m}, n, col0, epilogue);
}

/// Starts copying the step at k offset p0 of product's a operand to ring[at …]: BM rows of STEP
/// of a tensor a [m, k] from row0, or an a source's own.
template <std::uint32_t BM, std::uint32_t STEP, class T, class A>
void copy_a_async(const dsl::Shared<T>& ring, const dsl::Expr<dsl::u32>& at, const A& a,
                  const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& k,
                  const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& p0) {
  if constexpr (kSourceA<A>) {
    a.template start<BM, STEP>(ring, at, p0);
  } else {
    dsl::copy_tile_async<BM, STEP>(ring, at, a, dsl::Expr<dsl::u32>(0u), m, k, row0, p0);
  }
}

/// copy_a_async's step element by element (the path for any width) to tile[0 …], each element
/// converted to the tile's R.
template <std::uint32_t BM, std::uint32_t STEP, class R, class A>
void copy_a(const dsl::Shared<R>& tile, const A& a, const dsl::Expr<dsl::u32>& m,
            const dsl::Expr<dsl::u32>& k, const dsl::Expr<dsl::u32>& row0,
            const dsl::Expr<dsl::u32>& p0) {
  if constexpr (kSourceA<A>) {
    a.template copy<BM, STEP>(tile, p0);
  } else {
    copy_tile(Matrix{a, dsl::Expr<dsl::u32>(0u), m, k}, tile, STEP, row0, p0, BM, STEP);
  }
}

/// The product's sums as they are: no scale per block of k.
struct NoBlockScales {};

/// A tile's accumulators and how one step of its product is multiplied into them from `rings`
/// (product, persistent_product): the consumer warpgroup `group` multiplies rows 64·group … of
/// the tile; with `blocks` (see product) each block's products go to `block` and are folded in,
/// scaled, once the block's last step is multiplied.
template <std::uint32_t BM, std::uint32_t BN, class R, bool RING, class Blocks, class B>
struct StepProducts {
  static constexpr bool kBlockScaled = !std::is_same_v<Blocks, NoBlockScales>;
  using StepRings = Rings<R, BM, BN, RING, kSwizzledB<B>>;
  static constexpr std::uint32_t kStep = StepRings::kStep;

  const StepRings& rings;
  const Blocks& blocks;
  dsl::Expr<dsl::u32> m;
  dsl::Expr<dsl::u32> k;
  dsl::Expr<dsl::u32> group = dsl::simdgroup_id() / 4u;
  dsl::FragAcc<16, BN> acc;
  std::optional<dsl::FragAcc<16, BN>> block;  // the products of the block of k in hand

  StepProducts(const StepRings& r, const Blocks& b, const dsl::Expr<dsl::u32>& m_,
               const dsl::Expr<dsl::u32>& k_)
      : rings(r), blocks(b), m(m_), k(k_) {
    if constexpr (kBlockScaled) {
      static_assert(Blocks::kBlock % kStep == 0, "a block of k is whole steps");
      block.emplace();
    }
  }

  /// Folds `block` into acc with each row's scale of block kb, and empties it. A lane's rows'
  /// scales are loaded once into a row vector (a lane holds two rows of a 16-row fragment), the
  /// tile's column scale once.
  void fold(const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& col0,
            const dsl::Expr<dsl::u32>& kb) {
    using namespace iron::dsl;
    if constexpr (kBlockScaled) {
      auto rows = row0 + group * 64u + simdgroup_id() % 4u * 16u;
      FragAcc<16, 8> row_scales;
      row_scales.map([&](const Expr<f32>&, const Expr<u32>& r, const Expr<u32>&) {
        return blocks.row_scale(min(rows + r, m - 1u), kb);  // rows past m are never written
      });
      auto column_scale = blocks.column_scale(col0, kb);
      for (std::uint32_t slot = 0; slot < FragAcc<16, BN>::elements; ++slot) {
        auto scale = block->row_value(row_scales, slot) * column_scale;
        acc.set(slot, acc.get(slot) + block->get(slot) * scale);
        block->set(slot, 0.0f);
      }
    }
  }

  /// Multiplies the step at k offset p0 of the tile whose first row and column origin() gives
  /// (traced only where a block is folded), a and b at a0 and b0 of the rings, leaving
  /// `in_flight` product groups pending (none with block scales).
  template <class Origin>
  void multiply(const Origin& origin, const dsl::Expr<dsl::u32>& a0, const dsl::Expr<dsl::u32>& b0,
                std::uint32_t in_flight, const dsl::Expr<dsl::u32>& p0) {
    using namespace iron::dsl;
    FragAcc<16, BN>& into = kBlockScaled ? *block : acc;
    if constexpr (kRowsB<B> && !kSwizzledB<B>) {
      warpgroup_mma<kStep>(into, rings.a, a0 + group * 64u * kStep, kStep, rings.b, b0, BN,
                           row_major);
    } else if constexpr (kRowsB<B>) {
      warpgroup_mma<kStep>(into, rings.a, a0 + group * 64u * kStep, kStep, rings.b, b0, kStep,
                           row_major, kStep * kStep);
    } else {
      warpgroup_mma<kStep>(into, rings.a, a0 + group * 64u * kStep, kStep, rings.b, b0, kStep);
    }
    warpgroup_commit();
    warpgroup_wait(kBlockScaled ? 0 : in_flight, into);
    if constexpr (kBlockScaled) {
      IRON_IF((p0 + kStep) % Blocks::kBlock == 0u || p0 + kStep >= k) {
        const auto [row0, col0] = origin();
        fold(row0, col0, p0 / Blocks::kBlock);
      }
    }
  }
};

/// Calls epilogue(r, c, sum) for every element (r, c) of the BM×BN tile of a · bᵀ at (row0,
/// col0) inside out (a [m, k], b [n, k], both T = f16, bf16 or an 8-bit float; or b RowsB, [k, n]
/// of 16-bit T), sum the f32 Σ_p a[r, p] · b(p, c), through `rings` of R: a ring of `stages` steps,
/// each step's product in flight `lag` more steps (pipelined's lag) where R is T and the rows are
/// whole 16-byte pieces; else step by step, each element converted to R on its way in (exactly: R
/// holds every T value). STAGED: the sums reach the epilogue through shared memory
/// (staged_epilogue), else each lane hands over the elements it holds. WHOLE_TILES as
/// staged_epilogue. With `blocks` (a type with kBlock, a multiple of the step, row_scale(r, kb) and
/// column_scale(col0, kb)), the sum is instead Σ_kb blocks.row_scale(r, kb) ·
/// blocks.column_scale(col0, kb) · Σ_{p in block kb} a[r, p] · b[c, p]: each block's
/// products accumulate apart and are folded in, scaled, once the block's last step is
/// multiplied (so lag is 0).
template <std::uint32_t BM, std::uint32_t BN, bool STAGED, bool WHOLE_TILES, class A, class B,
          class R, bool RING, class Epilogue, class Blocks = NoBlockScales>
void product(const Rings<R, BM, BN, RING, kSwizzledB<B>>& rings, std::uint32_t stages,
             std::uint32_t lag, const A& a, const B& b, const dsl::Expr<dsl::u32>& m,
             const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k,
             const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& col0, Epilogue&& epilogue,
             const Blocks& blocks = {}) {
  using namespace iron::dsl;
  constexpr std::uint32_t kStep = Rings<R, BM, BN, RING>::kStep;
  constexpr std::uint32_t kStageA = Rings<R, BM, BN, RING>::kStageA;
  constexpr std::uint32_t kStageB = Rings<R, BM, BN, RING>::kStageB;
  constexpr std::uint32_t kConsumerThreads = consumers_of(BM);
  const Shared<R>& tile_a = rings.a;
  const Shared<R>& tile_b = rings.b;
  auto consumer = simdgroup_id() < kConsumerThreads / 32u;
  using T = element_of_a<A>;

  StepProducts<BM, BN, R, RING, Blocks, B> steps(rings, blocks, m, k);
  FragAcc<16, BN>& acc = steps.acc;
  const auto multiply = [&](const Expr<u32>& a0, const Expr<u32>& b0, std::uint32_t in_flight,
                            const Expr<u32>& p0) {
    steps.multiply([&] { return std::pair{row0, col0}; }, a0, b0, in_flight, p0);
  };
  const auto step_by_step = [&] {
    for (auto p0 : range(0u, k, kStep)) {
      copy_a<BM, kStep>(tile_a, a, m, k, row0, p0);
      copy_b<BN, kStep>(tile_b, b, n, k, col0, p0);
      fence_async_proxy();
      barrier();
      IRON_IF(consumer) { multiply(Expr<u32>(0u), Expr<u32>(0u), 0, p0); }
      barrier();
    }
  };
  if constexpr (RING) {
    static_assert(std::is_same_v<T, R>, "a ring fills by copies, which convert nothing");
    auto whole_rows = rows_whole<T, B>(n, k);
    if constexpr (kSourceA<A>) whole_rows = whole_rows && a.whole();
    IRON_IF(specialized(whole_rows)) {
      pipelined(
          0u, k, kStep, stages,
          [&](const Expr<u32>& p0, const Expr<u32>& slot) {
            copy_a_async<BM, kStep>(tile_a, slot * kStageA, a, m, k, row0, p0);
            copy_b_async<BN, kStep>(tile_b, slot * kStageB, b, n, k, col0, p0);
          },
          [&](const Expr<u32>& p0, const Expr<u32>& slot) {
            multiply(slot * kStageA, slot * kStageB, lag, p0);
          },
          lag, Specialized{kConsumerThreads});
      if (lag != 0) warpgroup_wait(0, acc);
    }
    IRON_ELSE { step_by_step(); }
  } else {
    step_by_step();
  }
  if constexpr (STAGED && kSourceA<A>) {
    staged_epilogue_of<BM, BN, true>(acc, a, n, col0, epilogue);
  } else if constexpr (STAGED) {
    staged_epilogue<BM, BN, WHOLE_TILES>(acc, m, n, row0, col0, epilogue);
  } else {
    auto rows = row0 + steps.group * 64u + simdgroup_id() % 4u * 16u;
    for (std::uint32_t slot = 0; slot < FragAcc<16, BN>::elements; ++slot) {
      auto r = rows + acc.row(slot);
      auto c = col0 + acc.col(slot);
      if constexpr (kSourceA<A>) {  // rows local to the tile, mapped onto out by the source
        IRON_IF(consumer && a.inside(r) && c < n) { epilogue(a.at(r), c, acc.get(slot)); }
      } else {
        IRON_IF(consumer && r < m && c < n) { epilogue(r, c, acc.get(slot)); }
      }
    }
  }
}

/// Calls run.template operator()<BN>() with BN = `bn` (256, 128 or 64), the tile widths the
/// products are instantiated for; Error for another width.
template <class Run>
void with_width(std::uint32_t bn, Run&& run) {
  switch (bn) {
    case kBN:
      return run.template operator()<kBN>();
    case kBN / 2:
      return run.template operator()<kBN / 2>();
    case kBN / 4:
      return run.template operator()<kBN / 4>();
    default:
      throw Error("a warpgroup product's tile is 256, 128 or 64 columns wide, not " +
                  std::to_string(bn));
  }
}

/// Calls run.template operator()<BM, BN>() for the tile of `shape` (BM 128 or 64).
template <class Run>
void with_tile(const Shape& shape, Run&& run) {
  if (shape.bm != kBM && shape.bm != kBM / 2) {
    throw Error("a warpgroup product's tile is 128 or 64 rows high, not " +
                std::to_string(shape.bm));
  }
  with_width(shape.bn, [&]<std::uint32_t BN>() {
    if (shape.bm == kBM) {
      run.template operator()<kBM, BN>();
    } else {
      run.template operator()<kBM / 2, BN>();
    }
  });
}

/// The BM×BN tile at (row0, col0) on a target without warpgroup products: pieces of at most 128
/// columns one after the other through one 3-stage ring of fallback_ring_t (tile_product_at); a
/// [k, n] b lands there in plain rows (RowsB without panels).
template <std::uint32_t BM, std::uint32_t BN, bool WHOLE_TILES, class A, class B, class Epilogue,
          class Blocks>
void pieces_product(const A& a, const B& b, const dsl::Expr<dsl::u32>& m,
                    const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k,
                    const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& col0,
                    Epilogue&& epilogue, const Blocks& blocks) {
  constexpr std::uint32_t kPiece = BN < kBN / 2 ? BN : kBN / 2;
  using T = element_of_a<A>;
  using R = fallback_ring_t<T>;
  const auto piece_b = [&]() {
    if constexpr (kRowsB<B>) {
      return RowsB<T, false>{tensor_of(b)};
    } else {
      return b;
    }
  };
  using PieceB = decltype(piece_b());
  const Rings<R, BM, kPiece, std::is_same_v<T, R>, kSwizzledB<PieceB>> piece;
  for (std::uint32_t h = 0; h < BN / kPiece; ++h) {
    product<BM, kPiece, false, WHOLE_TILES>(piece, kStages, 0, a, piece_b(), m, n, k, row0,
                                            col0 + h * kPiece, epilogue, blocks);
  }
}

/// The shape.bm×shape.bn tile of a · bᵀ at (row0, col0), each element handed to
/// epilogue(r, c, sum) (see product). On a target with warpgroup products (sm_90a) one product of
/// the whole tile through a ring of shape.stages steps (48 KB a step for 128×256) whose products
/// stay in flight shape.lag steps, its sums staged through shared memory; elsewhere the tile in
/// pieces of at most 128 columns one after the other through one 3-stage ring (32 KB stages for
/// 128×128), which Metal's threadgroup memory holds. Both sum every element in the same k order,
/// so both paths give the same bits. 8-bit floats multiply as such on sm_90a (128 of k a step);
/// elsewhere they are converted to f16 on their way to shared memory (fallback_ring_t), step by
/// step. WHOLE_TILES as staged_epilogue; `blocks` as product's. `a` is a tensor [m, k] or an a
/// source (kSourceA: its tile's rows its own, row0 0 and m its rows, each handed to the epilogue
/// as the row of out the source maps it to).
template <bool WHOLE_TILES = true, class A, class B, class Epilogue, class Blocks = NoBlockScales>
void tile_product_at(const A& a, const B& b, const dsl::Expr<dsl::u32>& m,
                     const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k,
                     const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& col0,
                     Epilogue&& epilogue, const Shape& shape = {}, const Blocks& blocks = {}) {
  using namespace iron::dsl;
  with_tile(shape, [&]<std::uint32_t BM, std::uint32_t BN>() {
    IRON_IF(target_has(TargetFeature::WarpgroupProducts)) {
      const Rings<element_of_a<A>, BM, BN> rings;
      product<BM, BN, true, WHOLE_TILES>(rings, shape.stages, shape.lag, a, b, m, n, k, row0, col0,
                                         epilogue, blocks);
    }
    IRON_ELSE { pieces_product<BM, BN, WHOLE_TILES>(a, b, m, n, k, row0, col0, epilogue, blocks); }
  });
}

/// The tiles of a persistent product: tiles_m × tiles_n of BM×BN, this group's the tiles
/// first, first + stride, … < count (a group's program id and the grid's groups), each placed
/// by banded_position.
struct PersistentTiles {
  dsl::Expr<dsl::u32> tiles_m;
  dsl::Expr<dsl::u32> tiles_n;
  dsl::Expr<dsl::u32> count = tiles_m * tiles_n;
  dsl::Expr<dsl::u32> first = dsl::program_id<0>();
  dsl::Expr<dsl::u32> stride = dsl::grid_groups<0>();
  /// How many of them are this group's.
  dsl::Expr<dsl::u32> mine() const {
    return dsl::select(first < count, (count - 1u - first) / stride + 1u, dsl::Expr<dsl::u32>(0u));
  }
};

/// Every tile of a · bᵀ (as product, 16-bit or 8-bit T on sm_90a) by a group that runs on from
/// one tile to the next: one specialized pipeline over the steps of all its tiles (S =
/// ceil(k / step) a tile), so that the producer loads the next tile's first steps while the
/// consumers hand the last one on; a tile's last step waits for its products and hands its sums
/// to the epilogue (staged_epilogue among the consumers alone), then empties the accumulators.
/// The producer finds a step's tile and offset by dividing its index (a load block is pure
/// arithmetic and tile copies, or its copies cannot be TMA's; one thread runs it, ahead of the
/// consumers); the consumers count theirs in variables, since their arithmetic a step runs
/// between their products. Its copies are TMA's, so k % (16 / sizeof(T)) == 0 (the contract of
/// a persistent launch).
template <std::uint32_t BM, std::uint32_t BN, class T, class B, class Epilogue, class Blocks>
void persistent_product(const Rings<T, BM, BN>& rings, const Shape& shape,
                        const PersistentTiles& tiles, const dsl::Tensor<T>& a, const B& b,
                        const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& n,
                        const dsl::Expr<dsl::u32>& k, Epilogue&& epilogue, const Blocks& blocks) {
  using namespace iron::dsl;
  constexpr std::uint32_t kStep = Rings<T, BM, BN>::kStep;
  constexpr std::uint32_t kStageA = Rings<T, BM, BN>::kStageA;
  constexpr std::uint32_t kStageB = Rings<T, BM, BN>::kStageB;
  StepProducts<BM, BN, T, true, Blocks, B> steps(rings, blocks, m, k);
  auto per_tile = (k + (kStep - 1u)) / kStep;
  const auto origin = [&](const Expr<u32>& order) {
    return banded_position(order, tiles.tiles_m, tiles.tiles_n, BM, BN, shape.band);
  };
  // The consumers' position: the k offset of their next step and the order of its tile.
  Var<u32> compute_p0 = 0u;
  Var<u32> compute_tile = tiles.first;
  pipelined(
      0u, tiles.mine() * per_tile, 1u, shape.stages,
      [&](const Expr<u32>& q, const Expr<u32>& slot) {
        auto t = q / per_tile;
        auto p0 = (q - t * per_tile) * kStep;
        auto [row0, col0] = origin(tiles.first + t * tiles.stride);
        copy_tile_async<BM, kStep>(rings.a, slot * kStageA, a, Expr<u32>(0u), m, k, row0, p0);
        copy_b_async<BN, kStep>(rings.b, slot * kStageB, b, n, k, col0, p0);
      },
      [&](const Expr<u32>&, const Expr<u32>& slot) {
        auto p0 = compute_p0.get();
        auto tile = compute_tile.get();
        steps.multiply([&] { return origin(tile); }, slot * kStageA, slot * kStageB, 0, p0);
        auto last = p0 + kStep >= k;
        IRON_IF(last) {
          auto [row0, col0] = origin(tile);
          staged_epilogue<BM, BN, true>(steps.acc, m, n, row0, col0, epilogue);
          for (std::uint32_t e = 0; e < FragAcc<16, BN>::elements; ++e) steps.acc.set(e, 0.0f);
        }
        compute_p0 = select(last, Expr<u32>(0u), p0 + kStep);
        compute_tile = select(last, tile + tiles.stride, tile);
      },
      0, Specialized{consumers_of(BM)});
}

/// tile_product with a group a multiprocessor (Shape::persistent): on sm_90a persistent_product;
/// elsewhere each of the group's tiles in turn as tile_product_at's pieces. Both sum every
/// element in the same k order, so both paths give the same bits.
template <class T, class B, class Epilogue, class Blocks>
void persistent_tile_product(const dsl::Tensor<T>& a, const B& b, const dsl::Expr<dsl::u32>& m,
                             const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k,
                             Epilogue&& epilogue, const Shape& shape, const Blocks& blocks) {
  using namespace iron::dsl;
  with_tile(shape, [&]<std::uint32_t BM, std::uint32_t BN>() {
    const PersistentTiles tiles{(m + (BM - 1u)) / BM, (n + (BN - 1u)) / BN};
    IRON_IF(target_has(TargetFeature::WarpgroupProducts)) {
      const Rings<T, BM, BN> rings;
      persistent_product<BM, BN>(rings, shape, tiles, a, b, m, n, k, epilogue, blocks);
    }
    IRON_ELSE {
      for (auto order : range(tiles.first, tiles.count, tiles.stride)) {
        auto [row0, col0] =
            banded_position(order, tiles.tiles_m, tiles.tiles_n, BM, BN, shape.band);
        pieces_product<BM, BN, true>(a, b, m, n, k, row0, col0, epilogue, blocks);
      }
    }
  });
}

/// This group's tile in the banded launch order (banded_tile), as tile_product_at; or, with
/// shape.persistent, each of this group's tiles (persistent_tile_product).
template <class T, class B, class Epilogue, class Blocks = NoBlockScales>
void tile_product(const dsl::Tensor<T>& a, const B& b, const dsl::Expr<dsl::u32>& m,
                  const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k, Epilogue&& epilogue,
                  const Shape& shape = {}, const Blocks& blocks = {}) {
  if (shape.persistent) {
    persistent_tile_product(a, b, m, n, k, epilogue, shape, blocks);
    return;
  }
  const auto [row0, col0] = banded_tile(shape.bm, shape.bn, shape.band);
  tile_product_at<true>(a, b, m, n, k, row0, col0, epilogue, shape, blocks);
}

/// The dispatch, grid and contract: a group of threads_of(bm) threads per bm×bn tile of out
/// [m, n] (`m` and `n` the contract's expressions of its rows and columns); with `persistent`,
/// at most that many groups (each takes every grid-th tile) and k whole 16-byte pieces of T
/// (persistent_product's copies); the occupancy of `resident` groups where it is more than one.
template <class T>
void declare(const Shape& shape, const dsl::Constexpr<dsl::u32>& k, const std::string& m = "m",
             const std::string& n = "n") {
  using namespace iron::dsl;
  dispatch(tiled, {exactly(threads_of(shape.bm))});
  if (shape.resident > 1) occupancy(shape.resident);
  const std::string tiles_n = "ceil_div(" + n + ", " + std::to_string(shape.bn) + ")";
  const std::string tiles_m = "ceil_div(" + m + ", " + std::to_string(shape.bm) + ")";
  if (shape.persistent) {
    grid("[<= " + tiles_n + " * " + tiles_m + ", 1, 1]");
    require_multiple_of(k, 16 / lane_bytes<T>());
  } else {
    grid("[" + tiles_n + ", " + tiles_m + ", 1]");
  }
}

/// The launch: a group per bm×bn tile of out; with `persistent`, `resident` groups per
/// multiprocessor (Shape::resident) or one per tile where there are fewer.
inline dsl::Geometry geometry(const dsl::GeometryQuery& q, std::uint32_t bm = kBM,
                              std::uint32_t bn = kBN, bool persistent = false,
                              std::uint32_t resident = 1) {
  const std::uint32_t tiles_n = dsl::tile_count(q.constant("n"), bn);
  const std::uint32_t tiles_m = dsl::tile_count(q.constant("m"), bm);
  if (persistent) {
    const std::uint64_t tiles = std::uint64_t{tiles_n} * tiles_m;
    const auto groups = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(tiles, std::uint64_t{std::max<std::uint32_t>(resident, 1)} *
                                           std::max<std::uint32_t>(q.device.multiprocessors, 1)));
    return {{groups, 1, 1}, {threads_of(bm), 1, 1}};
  }
  return {{tiles_n, tiles_m, 1}, {threads_of(bm), 1, 1}};
}

/// geometry under the knobs in force (bm, bn, persistent, resident), for a kernel that declares
/// tuning_space() or their like.
inline dsl::Geometry tuned_geometry(const dsl::GeometryQuery& q) {
  return geometry(q, dsl::tuned("bm"), dsl::tuned("bn"), dsl::tuned("persistent") == 1,
                  dsl::tuned("resident"));
}

}  // namespace iron::kernels::gemm::warpgroup
