/// The product of iron_gemm_warpgroup_nk: a group's 128×128 tile of a · bᵀ by two warpgroups, each
/// a 64×128 warpgroup product a step (docs/tensor-cores.md, "Warpgroup products"): Hopper's
/// wgmma on sm_90a, each simdgroup's fragment products elsewhere. See kernels/gemm/gemm.cpp.
#pragma once

#include <cstdint>
#include <iron/iron.hpp>
#include <string>

#include "gemm_tiles.hpp"

namespace iron::kernels::gemm::warpgroup {

inline constexpr std::uint32_t kBM = 128;       ///< rows of out per group: 64 per warpgroup
inline constexpr std::uint32_t kBN = 128;       ///< columns of out per group
inline constexpr std::uint32_t kBK = 64;        ///< k per step: one 128-byte row of 16-bit values
inline constexpr std::uint32_t kThreads = 256;  ///< two warpgroups
/// Stages asked for: 96 KB of shared memory on sm_90, two groups a multiprocessor (32 KB a
/// stage, so one stage fits Metal's threadgroup memory).
inline constexpr std::uint32_t kStages = 3;

/// Calls epilogue(r, c, sum) for every element (r, c) of this group's tile of a · bᵀ inside out
/// (a [m, k], b [n, k], both T = f16 or bf16), sum the f32 Σ_p a[r, p] · b[c, p]. A ring of
/// STAGES steps; each step's product stays in flight for LAG more steps (pipelined's lag).
template <std::uint32_t STAGES = kStages, std::uint32_t LAG = 0, class T, class Epilogue>
void product(const dsl::Tensor<T>& a, const dsl::Tensor<T>& b, const dsl::Expr<dsl::u32>& m,
             const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::u32>& k, Epilogue&& epilogue) {
  using namespace iron::dsl;
  constexpr std::uint32_t kStageA = kBM * kBK;
  constexpr std::uint32_t kStageB = kBN * kBK;
  auto tile_a = ring<T>(kStageA, Swizzled{kBK});
  auto tile_b = ring<T>(kStageB, Swizzled{kBK});
  const auto [row0, col0] = banded_tile(kBM, kBN);
  auto group = simdgroup_id() / 4u;  // the warpgroup: rows 64·group … of the tile
  const Matrix<T> ma{a, Expr<u32>(0u), m, k};
  const Matrix<T> mb{b, Expr<u32>(0u), n, k};

  FragAcc<16, kBN> acc;
  const auto multiply = [&](const Expr<u32>& a0, const Expr<u32>& b0, std::uint32_t lag) {
    warpgroup_mma<kBK>(acc, tile_a, a0 + group * 64u * kBK, kBK, tile_b, b0, kBK);
    warpgroup_commit();
    warpgroup_wait(lag, acc);
  };
  IRON_IF(k % kChunk == 0u) {
    pipelined(
        0u, k, kBK, STAGES,
        [&](const Expr<u32>& p0, const Expr<u32>& slot) {
          start_tile_copy<T, kBM, kBK, kThreads>(ma, tile_a, kBK, slot * kStageA, row0, p0);
          start_tile_copy<T, kBN, kBK, kThreads>(mb, tile_b, kBK, slot * kStageB, col0, p0);
        },
        [&](const Expr<u32>&, const Expr<u32>& slot) {
          multiply(slot * kStageA, slot * kStageB, LAG);
        },
        LAG);
    if constexpr (LAG != 0) warpgroup_wait(0, acc);
  }
  IRON_ELSE {
    for (auto p0 : range(0u, k, kBK)) {
      copy_tile<T>(ma, tile_a, kBK, row0, p0, kBM, kBK);
      copy_tile<T>(mb, tile_b, kBK, col0, p0, kBN, kBK);
      fence_async_proxy();
      barrier();
      multiply(Expr<u32>(0u), Expr<u32>(0u), 0);
      barrier();
    }
  }
  auto rows = row0 + group * 64u + simdgroup_id() % 4u * 16u;
  for (std::uint32_t slot = 0; slot < FragAcc<16, kBN>::elements; ++slot) {
    auto r = rows + acc.row(slot);
    auto c = col0 + acc.col(slot);
    IRON_IF(r < m && c < n) { epilogue(r, c, acc.get(slot)); }
  }
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
