/// The product of iron_gemm_warpgroup_nk: a group's 128×256 tile of a · bᵀ by two consumer
/// warpgroups, each a 64×256 warpgroup product a step on sm_90a (Hopper's wgmma), two 128×128
/// halves of 64×128 products elsewhere, lowered to each simdgroup's fragment products; a third
/// warpgroup loads (a specialized pipeline: on sm_90a its first thread issues the TMA copies)
/// (docs/tensor-cores.md, "Warpgroup products", "Specialized pipelines", "One source, each
/// target's path"). See kernels/gemm/gemm.cpp.
#pragma once

#include <cstdint>
#include <iron/iron.hpp>
#include <string>

#include "gemm_tiles.hpp"

namespace iron::kernels::gemm::warpgroup {

inline constexpr std::uint32_t kBM = 128;         ///< rows of out per group: 64 per warpgroup
inline constexpr std::uint32_t kBN = 256;         ///< columns of out per group
inline constexpr std::uint32_t kBK = 64;          ///< k per step: one 128-byte row of 16-bit values
inline constexpr std::uint32_t kConsumers = 256;  ///< two warpgroups multiply
inline constexpr std::uint32_t kThreads = 384;    ///< and a third loads
/// Stages asked for by the 128×128 halves: 96 KB of shared memory on sm_90 (32 KB a stage, so one
/// stage fits Metal's threadgroup memory).
inline constexpr std::uint32_t kStages = 3;
/// Stages and lag of the 128×256 product on sm_90a: 192 KB, one group a multiprocessor.
inline constexpr std::uint32_t kWideStages = 4;
inline constexpr std::uint32_t kWideLag = 1;
/// The 128×256 product's epilogue goes through shared memory kStagedRows rows at a time (f32,
/// rows kStagedPitch apart so that a simdgroup's accumulator rows fall in different banks), so
/// that a warp hands the epilogue 32 consecutive columns of one row: the accumulator's own
/// layout gives it 8 rows of 8 bytes. 33 KB beside the 192 KB ring.
inline constexpr std::uint32_t kStagedRows = 32;
inline constexpr std::uint32_t kStagedPitch = 260;

/// The shared rings of a product of BN columns: kBM×kBK of a and BN×kBK of b a stage, in
/// 128-byte swizzled rows.
template <class T, std::uint32_t BN>
struct Rings {
  static constexpr std::uint32_t kStageA = kBM * kBK;
  static constexpr std::uint32_t kStageB = BN * kBK;
  dsl::Shared<T> a = dsl::ring<T>(kStageA, dsl::Swizzled{kBK});
  dsl::Shared<T> b = dsl::ring<T>(kStageB, dsl::Swizzled{kBK});
};

/// Calls epilogue(r, c, sum) for every element (r, c) < (m, n) of the kBM×kBN tile at (row0,
/// col0) whose sums the consumers' accumulators hold (simdgroup s: rows 16·s …), kStagedRows
/// rows at a time through shared memory, each warp's calls on 32 consecutive columns of a row.
/// WHOLE_TILES: a tile wholly inside (m, n) is copied out with no check an element, which took
/// the GEMM's epilogue from ~8 to ~4 µs a tile (bench/NOTES.md §36); an epilogue that checks
/// bounds of its own (the grouped products' expert rows) does better with the checked loop
/// alone. Every thread of the group reaches its barriers.
template <bool WHOLE_TILES, class Epilogue>
void staged_epilogue(const dsl::FragAcc<16, kBN>& acc, const dsl::Expr<dsl::u32>& m,
                     const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& row0,
                     const dsl::Expr<dsl::u32>& col0, Epilogue&& epilogue) {
  using namespace iron::dsl;
  constexpr std::uint32_t kSimdgroupsARound = kStagedRows / 16;
  auto staged = shared<f32>(kStagedRows * kStagedPitch);
  auto consumer = simdgroup_id() < kConsumers / 32u;
  auto whole = row0 + kBM <= m && col0 + kBN <= n;  // no element of the tile outside out
  for (std::uint32_t round = 0; round < kBM / kStagedRows; ++round) {
    IRON_IF(simdgroup_id() / kSimdgroupsARound == round) {
      acc.store(staged, simdgroup_id() % kSimdgroupsARound * 16u * kStagedPitch, kStagedPitch);
    }
    barrier();
    IRON_IF(consumer) {
      const auto copy_out = [&](bool checked) {
        for (auto v : range(thread_id<0>(), kStagedRows * kBN, kConsumers)) {
          auto r = row0 + round * kStagedRows + v / kBN;
          auto c = col0 + v % kBN;
          const auto sum = [&] { return load(staged[v / kBN * kStagedPitch + v % kBN]); };
          if (checked) {
            IRON_IF(r < m && c < n) { epilogue(r, c, sum()); }
          } else {
            epilogue(r, c, sum());
          }
        }
      };
      if constexpr (WHOLE_TILES) {
        IRON_IF(whole) { copy_out(false); }
        IRON_ELSE { copy_out(true); }
      } else {
        copy_out(true);
      }
    }
    barrier();
  }
}

/// Calls epilogue(r, c, sum) for every element (r, c) of the kBM×BN tile of a · bᵀ at (row0,
/// col0) inside out (a [m, k], b [n, k], both T = f16 or bf16), sum the f32 Σ_p a[r, p] · b[c, p],
/// through `rings`. A ring of STAGES steps; each step's product stays in flight for LAG more
/// steps (pipelined's lag). WHOLE_TILES as staged_epilogue.
template <std::uint32_t BN, std::uint32_t STAGES, std::uint32_t LAG, bool WHOLE_TILES, class T,
          class Epilogue>
void product(const Rings<T, BN>& rings, const dsl::Tensor<T>& a, const dsl::Tensor<T>& b,
             const dsl::Expr<dsl::u32>& m, const dsl::Expr<dsl::u32>& n,
             const dsl::Expr<dsl::u32>& k, const dsl::Expr<dsl::u32>& row0,
             const dsl::Expr<dsl::u32>& col0, Epilogue&& epilogue) {
  using namespace iron::dsl;
  constexpr std::uint32_t kStageA = Rings<T, BN>::kStageA;
  constexpr std::uint32_t kStageB = Rings<T, BN>::kStageB;
  const Shared<T>& tile_a = rings.a;
  const Shared<T>& tile_b = rings.b;
  auto group = simdgroup_id() / 4u;  // the warpgroup: rows 64·group … of the tile
  auto consumer = simdgroup_id() < kConsumers / 32u;
  const Matrix<T> ma{a, Expr<u32>(0u), m, k};
  const Matrix<T> mb{b, Expr<u32>(0u), n, k};

  FragAcc<16, BN> acc;
  const auto multiply = [&](const Expr<u32>& a0, const Expr<u32>& b0, std::uint32_t lag) {
    warpgroup_mma<kBK>(acc, tile_a, a0 + group * 64u * kBK, kBK, tile_b, b0, kBK);
    warpgroup_commit();
    warpgroup_wait(lag, acc);
  };
  IRON_IF(k % kChunk == 0u) {
    pipelined(
        0u, k, kBK, STAGES,
        [&](const Expr<u32>& p0, const Expr<u32>& slot) {
          copy_tile_async<kBM, kBK>(tile_a, slot * kStageA, a, Expr<u32>(0u), m, k, row0, p0);
          copy_tile_async<BN, kBK>(tile_b, slot * kStageB, b, Expr<u32>(0u), n, k, col0, p0);
        },
        [&](const Expr<u32>&, const Expr<u32>& slot) {
          multiply(slot * kStageA, slot * kStageB, LAG);
        },
        LAG, Specialized{kConsumers});
    if constexpr (LAG != 0) warpgroup_wait(0, acc);
  }
  IRON_ELSE {
    for (auto p0 : range(0u, k, kBK)) {
      copy_tile<T>(ma, tile_a, kBK, row0, p0, kBM, kBK);
      copy_tile<T>(mb, tile_b, kBK, col0, p0, BN, kBK);
      fence_async_proxy();
      barrier();
      IRON_IF(consumer) { multiply(Expr<u32>(0u), Expr<u32>(0u), 0); }
      barrier();
    }
  }
  if constexpr (BN == kBN) {
    staged_epilogue<WHOLE_TILES>(acc, m, n, row0, col0, epilogue);
  } else {
    auto rows = row0 + group * 64u + simdgroup_id() % 4u * 16u;
    for (std::uint32_t slot = 0; slot < FragAcc<16, BN>::elements; ++slot) {
      auto r = rows + acc.row(slot);
      auto c = col0 + acc.col(slot);
      IRON_IF(consumer && r < m && c < n) { epilogue(r, c, acc.get(slot)); }
    }
  }
}

/// The kBM×kBN tile of a · bᵀ at (row0, col0), each element handed to epilogue(r, c, sum) (see
/// product). On a target with warpgroup products (sm_90a) one 128×256 product through a 4-stage
/// ring of 48 KB stages whose products stay in flight one step; elsewhere the two 128×128 halves
/// one after the other through one 3-stage ring of 32 KB stages, which Metal's threadgroup memory
/// holds. Both sum every element in the same k order, so both paths give the same bits. WIDE_STAGES
/// and WIDE_LAG set the 128×256 product's ring; WHOLE_TILES as staged_epilogue.
template <bool WHOLE_TILES = true, std::uint32_t WIDE_STAGES = kWideStages,
          std::uint32_t WIDE_LAG = kWideLag, class T, class Epilogue>
void tile_product_at(const dsl::Tensor<T>& a, const dsl::Tensor<T>& b, const dsl::Expr<dsl::u32>& m,
                     const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k,
                     const dsl::Expr<dsl::u32>& row0, const dsl::Expr<dsl::u32>& col0,
                     Epilogue&& epilogue) {
  using namespace iron::dsl;
  IRON_IF(target_has(TargetFeature::WarpgroupProducts)) {
    const Rings<T, kBN> wide;
    product<kBN, WIDE_STAGES, WIDE_LAG, WHOLE_TILES>(wide, a, b, m, n, k, row0, col0, epilogue);
  }
  IRON_ELSE {
    const Rings<T, kBN / 2> half;
    for (std::uint32_t h = 0; h < 2; ++h) {
      product<kBN / 2, kStages, 0, WHOLE_TILES>(half, a, b, m, n, k, row0, col0 + h * (kBN / 2),
                                                epilogue);
    }
  }
}

/// This group's tile in the banded launch order (banded_tile), as tile_product_at.
template <std::uint32_t WIDE_STAGES = kWideStages, std::uint32_t WIDE_LAG = kWideLag, class T,
          class Epilogue>
void tile_product(const dsl::Tensor<T>& a, const dsl::Tensor<T>& b, const dsl::Expr<dsl::u32>& m,
                  const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k, Epilogue&& epilogue) {
  const auto [row0, col0] = banded_tile(kBM, kBN);
  tile_product_at<true, WIDE_STAGES, WIDE_LAG>(a, b, m, n, k, row0, col0, epilogue);
}

/// The dispatch and grid: kThreads threads, a group per kBM×kBN tile of out.
inline void declare() {
  using namespace iron::dsl;
  dispatch(tiled, {exactly(kThreads)});
  grid("[ceil_div(n, " + std::to_string(kBN) + "), ceil_div(m, " + std::to_string(kBM) + "), 1]");
}

/// The launch: a group per kBM×kBN tile of out.
inline dsl::Geometry geometry(const dsl::GeometryQuery& q) {
  return {{dsl::tile_count(q.constant("n"), kBN), dsl::tile_count(q.constant("m"), kBM), 1},
          {kThreads, 1, 1}};
}

}  // namespace iron::kernels::gemm::warpgroup
