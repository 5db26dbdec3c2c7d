/// The tile body of split-KV decode (kernels/sdpa/decode.cpp), for f16 and bf16 at head_dim 64
/// and 128: the same partials as the lane body (decode_attend.hpp) from tensor-core fragments,
/// in a fraction of its instructions a key, and `attend`, which picks the body of a launch.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <iron/iron.hpp>

#include "decode_attend.hpp"
#include "decode_splits.hpp"
#include "flash_tile.hpp"

namespace iron::kernels::sdpa_decode {

/// Rows of the A fragment: the block's kRows rows, then zeros.
inline constexpr std::uint32_t kTileRows = 16;
/// Keys a stage of the tile body's ring: 16 a simdgroup.
inline constexpr std::uint32_t kTileKeys = 64;

/// A ring of the tile body holds stages of kTileKeys keys, where the lane body's hold 32: the
/// knob `stages` counts the lane body's, and the tile body takes as many keys, rounded up to
/// whole stages, at least two (the default 3 gives 2: 68 KB with the queries at head_dim 128,
/// so that kResidentGroups groups still fit a multiprocessor).
inline std::uint32_t tile_stages(std::uint32_t stages) {
  return std::max<std::uint32_t>(2, (stages + 1) / 2);
}

/// The tile body: the group's block of kRows rows padded to a 16-row A fragment of queries (held
/// in registers), a ring of stages of kTileKeys keys, each simdgroup 16 of them a stage: its
/// scores s = q · kᵀ (D / 16 fragment products), the masks where an edge cuts its keys, the
/// online softmax on fragment rows (sdpa::RowState, log2 units, the scale folded into the
/// exponent when positive), the weights rounded to T and o += p · v. At the end the four
/// simdgroups' states merge through shared memory (over the spent ring) into the block's rows.
template <class T, std::uint32_t D, class Kv>
void attend_tiles(const dsl::Tensor<T>& q, const Kv& kv, const dsl::Tensor<dsl::u32>& seq_lens,
                  const Problem& pb, const dsl::Out<dsl::f32>& partial_out,
                  const dsl::Out<dsl::f32>& partial_lse, std::uint32_t stages) {
  using namespace iron::dsl;
  static_assert(lane_bytes<T>() == 2 && (D == 64 || D == 128), "f16 or bf16, head_dim 64 or 128");
  static_assert(kTileKeys == kWarps * 16, "16 keys a simdgroup a stage");
  constexpr std::uint32_t kStage = kTileKeys * D;
  const Work w = work_of(seq_lens, pb);
  auto warp = simdgroup_id();

  std::array<HeadRow, kRows> rows;
  for (std::uint32_t j = 0; j < kRows; ++j) rows[j] = head_row(w, pb, w.block * kRows + j);
  // The block's live rows (at most kRows) land in rows 0 … of a 16-row tile, zeros below.
  auto live_rows = min(w.rows - w.block * kRows, Expr<u32>(kRows));
  auto q_tile = sdpa::rows_of<T, D, false>(kTileRows);
  sdpa::start_rows<T, D, kTileRows>(
      q_tile, Expr<u32>(0u), q, Expr<u32>(0u), live_rows,
      [&](const Expr<u32>& r) { return head_row(w, pb, w.block * kRows + r).row * D; });
  async_commit();
  async_wait(0);
  barrier();
  std::array<FragA<T, kTileRows, 16>, D / 16> qf;
  for (std::uint32_t i = 0; i < D / 16; ++i) qf[i].load(q_tile, i * 16u, D);

  // Keys every row of the block sees, and each fragment row's bounds: row r < kRows is the
  // block's row r, a row past them sees the split's keys (its queries are zeros).
  Expr<u32> safe_lo = rows[0].klo;
  Expr<u32> safe_hi = min(w.end, rows[0].khi);
  for (std::uint32_t j = 1; j < kRows; ++j) {
    safe_lo = max(safe_lo, rows[j].klo);
    safe_hi = min(safe_hi, rows[j].khi);
  }
  const auto bound = [&](const Expr<u32>& r, bool upper) {
    Expr<u32> value = upper ? w.end : Expr<u32>(0u);
    for (std::uint32_t j = 0; j < kRows; ++j) {
      value = select(r == j, upper ? min(w.end, rows[j].khi) : rows[j].klo, value);
    }
    return value;
  };
  // A step's scores for keys from `first`: scaled by scale2 (log2 units) when SCALE, and keys a
  // row does not see −inf where some edge cuts them.
  const auto scale_and_mask = [&](FragAcc<kTileRows, 16>& s, const Expr<u32>& first, bool scale,
                                  const Expr<f32>& scale2) {
    auto whole = first >= safe_lo && first + 16u <= safe_hi;
    const auto scaled = [&](const Expr<f32>& x) { return scale ? x * scale2 : x; };
    const auto mask = [&] {
      s.map([&](const Expr<f32>& x, const Expr<u32>& r, const Expr<u32>& c) {
        auto key = first + c;
        auto seen = key >= bound(r, false) && key < bound(r, true);
        return select(seen, scaled(x), Expr<f32>(-infinity));
      });
    };
    if (scale) {
      IRON_IF(whole) {
        s.map([&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>&) { return scaled(x); });
      }
      IRON_ELSE { mask(); }
    } else {
      IRON_IF(!whole) { mask(); }
    }
  };

  sdpa::RowState<kTileRows> state;
  std::array<FragAcc<kTileRows, sdpa::kValueCols>, D / sdpa::kValueCols> o;
  auto k_ring = sdpa::rows_of<T, D, true>(kTileKeys);
  auto v_ring = sdpa::rows_of<T, D, true>(kTileKeys);
  auto scale2 = pb.scale * kLog2e;
  pipelined(
      w.start, w.end, Expr<u32>(kTileKeys), tile_stages(stages),
      [&](const Expr<u32>& p, const Expr<u32>& slot) {
        // 16-byte pieces of the stage's key rows, each piece's source found once for K and V
        // (a paged cache's table read once); zeros, reading nothing, past the split's end.
        constexpr std::uint32_t kPieces = D / 8;  // a row's
        for (std::uint32_t j = 0; j < kTileKeys * kPieces / kThreads; ++j) {
          auto piece = thread_id<0>() + j * kThreads;
          auto r = piece / kPieces;
          auto c = piece % kPieces * 8u;
          auto inside = p + r < w.end;
          auto from = kv.row(select(inside, p + r, Expr<u32>(0u))) + c;
          auto at = slot * kStage + r * D + c;
          copy_async<8>(k_ring[at], kv.k[from], inside);
          copy_async<8>(v_ring[at], kv.v[from], inside);
        }
      },
      [&](const Expr<u32>& p, const Expr<u32>& slot) {
        auto first = p + warp * 16u;
        auto at = slot * kStage + warp * (16u * D);
        FragAcc<kTileRows, 16> s;
        for (std::uint32_t i = 0; i < D / 16; ++i) {
          FragB<T, 16, 16> kb;
          kb.load(k_ring, at + i * 16u, D, col_major);
          mma(s, qf[i], kb);
        }
        FragAcc<kTileRows, 8> alpha;
        IRON_IF(specialized(scale2 > 0.0f)) {
          scale_and_mask(s, first, false, scale2);
          state.template step<true>(s, alpha, scale2);
        }
        IRON_ELSE {
          scale_and_mask(s, first, true, scale2);
          state.template step<false>(s, alpha, scale2);
        }
        sdpa::RowState<kTileRows>::rescale(o, alpha);
        const auto pa = s.template to_a<T>();
        for (std::uint32_t n = 0; n < D / sdpa::kValueCols; ++n) {
          FragB<T, 16, sdpa::kValueCols> vb;
          vb.load(v_ring, at + n * sdpa::kValueCols, D);
          mma(o[n], pa, vb);
        }
      });

  // Each simdgroup's sums (whole fragments: rows kRows … are never read) over the spent ring,
  // simdgroups 0 and 1 over the keys' stages and 2 and 3 over the values', and its rows' running
  // max and weight sum beside; then each thread merges four adjacent elements of one row.
  constexpr std::uint32_t kPart = kTileRows * D;  // a simdgroup's sums
  static_assert(2 * kPart * 4 <= kStage * 2, "two simdgroups' sums fill at most a stage");
  auto part_k = overlay<f32>(k_ring, 2 * kPart);
  auto part_v = overlay<f32>(v_ring, 2 * kPart);
  auto part_ml = shared<f32>(kWarps * kRows * 2);
  // Simdgroup `warp`'s sums into its place (0 or 1) of `part`.
  const auto hand_on = [&](const Shared<f32>& part, const Expr<u32>& place) {
    for (std::uint32_t n = 0; n < D / sdpa::kValueCols; ++n) {
      o[n].store(part, place * kPart + n * sdpa::kValueCols, D);
    }
  };
  barrier();
  IRON_IF(warp < 2u) { hand_on(part_k, warp); }
  IRON_ELSE { hand_on(part_v, warp - 2u); }
  for (std::uint32_t e = 0; e < FragAcc<kTileRows, 8>::elements; ++e) {
    auto r = state.m.row(e);
    IRON_IF(r < kRows && state.m.col(e) == 0u) {
      store(part_ml[(warp * kRows + r) * 2u], state.m.get(e));
      store(part_ml[(warp * kRows + r) * 2u + 1u], state.l.get(e));
    }
  }
  barrier();
  for (auto i : range(thread_id<0>() * 4u, kRows * D, kThreads * 4)) {
    auto r = i / D;
    auto c = i % D;
    Expr<f32> top = load(part_ml[r * 2u]);
    for (std::uint32_t v = 1; v < kWarps; ++v) top = max(top, load(part_ml[(v * kRows + r) * 2u]));
    auto shift = sdpa::shift_of(top);
    Expr<f32> sum = 0.0f;
    std::array<Expr<f32>, 4> out{0.0f, 0.0f, 0.0f, 0.0f};
    for (std::uint32_t v = 0; v < kWarps; ++v) {
      auto weight = exp2_of<T>(load(part_ml[(v * kRows + r) * 2u]) - shift);
      sum = fma(load(part_ml[(v * kRows + r) * 2u + 1u]), weight, sum);
      const auto& part_of = v < 2 ? part_k : part_v;
      const auto part = load_lanes<4>(part_of[(v % 2) * kPart + r * D + c]);
      for (std::uint32_t e = 0; e < 4; ++e) out[e] = fma(part[e], weight, out[e]);
    }
    auto inv = 1.0f / select(sum > 0.0f, sum, 1.0f);  // no key: every sum is 0, and out too
    const HeadRow row = head_row(w, pb, w.block * kRows + r);
    IRON_IF(r < live_rows) {
      auto at = (row.row * pb.splits + w.split) * pb.head_dim + c;
      store_lanes(partial_out[at],
                  std::array<Expr<f32>, 4>{out[0] * inv, out[1] * inv, out[2] * inv, out[3] * inv});
      IRON_IF(c == 0u) {
        store(partial_lse[row.row * pb.splits + w.split], shift * kLn2 + log(sum));
      }
    }
  }
}

/// The group's partial attention (decode.cpp's doc comment): the tile body where it runs
/// (takes_tiles: f16 and bf16 at head_dim 64 and 128, a launch constant), else the lane body.
template <class T, class Kv>
void attend(const dsl::Tensor<T>& q, const Kv& kv, const dsl::Tensor<dsl::u32>& seq_lens,
            const Problem& pb, const dsl::Out<dsl::f32>& partial_out,
            const dsl::Out<dsl::f32>& partial_lse, std::uint32_t stages) {
  using namespace iron::dsl;
  if constexpr (lane_bytes<T>() == 2) {
    IRON_IF(specialized(pb.head_dim == 128u)) {
      attend_tiles<T, 128>(q, kv, seq_lens, pb, partial_out, partial_lse, stages);
    }
    IRON_ELSE {
      IRON_IF(specialized(pb.head_dim == 64u)) {
        attend_tiles<T, 64>(q, kv, seq_lens, pb, partial_out, partial_lse, stages);
      }
      IRON_ELSE { attend_lanes<T>(q, kv, seq_lens, pb, partial_out, partial_lse, stages); }
    }
  } else {
    attend_lanes<T>(q, kv, seq_lens, pb, partial_out, partial_lse, stages);
  }
}

}  // namespace iron::kernels::sdpa_decode
