/// The flash-attention body on warpgroup products, for 16-bit types: two
/// warpgroups take 128 query rows (16 a simdgroup); a step's scores s = q · kᵀ are one warpgroup
/// product from shared memory (queries and keys in 128-byte swizzled panels of 64 columns), the
/// weights stay in registers as the A operand of o += p · v (the register form, values
/// row-major: on sm_90a one product across v's panels into a head_dim-wide accumulator, elsewhere
/// one a panel). On sm_90a each product is a chain of wgmma instructions; elsewhere
/// lower_warpgroup_products makes them each simdgroup's fragment products. See
/// kernels/sdpa/prefill.cpp for the method and the error bound.
#pragma once

#include <array>
#include <cstdint>
#include <iron/iron.hpp>

#include "flash_tile.hpp"

namespace iron::kernels::sdpa::warpgroup {

inline constexpr std::uint32_t kThreads = 256;  ///< two warpgroups
inline constexpr std::uint32_t kBlockQ = 128;   ///< query rows per group: 64 a warpgroup
inline constexpr std::uint32_t kPanel = 64;     ///< columns of a swizzled panel: 128 bytes

/// Keys per step where no knob chooses: 128 at head_dim 128 (a lane's 64 scores and 32 weight
/// registers beside its 64 accumulators), 64 below, and 64 at 256, whose 128 accumulators a
/// lane leave room for no more (bench/NOTES.md §33). The head_dim 64 and 128 forms choose 64 or
/// 128 with their knob `block_k` (kernels/sdpa/prefill.cpp, §44, §51).
template <std::uint32_t D>
constexpr std::uint32_t block_k() {
  return D == 128 ? 128 : 64;
}
inline constexpr std::uint32_t kStages = 2;  ///< K and V stages in flight

/// Whether the warpgroup body runs a form: 16-bit types, head_dim 64, 128 or 256.
template <class T, std::uint32_t D>
constexpr bool runs() {
  return dsl::lane_bytes<T>() == 2 && (D == 64 || D == 128 || D == 256);
}

/// Rows × D elements in D / 64 swizzled panels of rows × 64: element (r, c) at
/// (c / 64) · rows · 64 + r · 64 + c % 64.
template <class T, std::uint32_t D>
dsl::Shared<T> panels(std::uint32_t rows, bool ring) {
  return ring ? dsl::ring<T>(rows * D, dsl::Swizzled{kPanel})
              : dsl::shared<T>(rows * D, dsl::Swizzled{kPanel});
}

/// start_copies by this body's group into panels of Rows rows at `at`.
template <class T, std::uint32_t D, std::uint32_t Rows, class RowAt>
void start_panels(const dsl::Shared<T>& dst, const dsl::Expr<dsl::u32>& at,
                  const dsl::Tensor<T>& src, const dsl::Expr<dsl::u32>& first,
                  const dsl::Expr<dsl::u32>& count, RowAt&& row_at) {
  using dsl::Expr;
  using dsl::u32;
  start_copies<T, D, Rows, kThreads>(
      dst, src, first, count, row_at, [&](const Expr<u32>& r, const Expr<u32>& c) {
        return at + c / kPanel * (Rows * kPanel) + r * kPanel + c % kPanel;
      });
}

/// Whether a form's group has a third warpgroup, a producer (docs/tensor-cores.md, "Specialized
/// pipelines"): on sm_90a it issues each step's key and value copies (TMA) as soon as both
/// consumers have freed the step's slot, and each warpgroup of queries takes a step once its
/// copies have landed, with no group barrier, so one's softmax can run under the other's
/// products (bench/NOTES.md §51). For packed keys and values (a tile copy reads rows of one
/// matrix; a paged cache's rows come through its table) up to head_dim 128 (the consumers'
/// share of the registers, 232, holds the body's ~197; head_dim 256 takes 245).
template <std::uint32_t D, class Kv>
constexpr bool has_producer() {
  return Kv::kTileCopies && D <= 128;
}

/// The group's threads: the two warpgroups of queries, and the producer where there is one.
template <std::uint32_t D, class Kv>
constexpr std::uint32_t threads() {
  return has_producer<D, Kv>() ? kThreads + 128 : kThreads;
}

/// As sdpa::attend, on warpgroup products: the group's 128 query rows q0 … of a sequence of
/// q_len rows (row i at q_row(i)) against `kv`; store(i, c, value) per output element of a row
/// i < q_len, lse(i, value) per row unless lse is NoLse; BLOCK_K keys a step.
template <class T, std::uint32_t D, std::uint32_t BLOCK_K = block_k<D>(), class Kv, class QRow,
          class Store, class Lse>
void attend(const dsl::Tensor<T>& q, QRow&& q_row, const dsl::Expr<dsl::u32>& q0,
            const dsl::Expr<dsl::u32>& q_len, const Kv& kv, const Masks& masks,
            const dsl::Expr<dsl::f32>& scale, const dsl::Expr<dsl::f32>& sink, Store&& store,
            Lse&& lse) {
  using namespace iron::dsl;
  static_assert(runs<T, D>(), "16-bit types, head_dim 64, 128 or 256");
  static_assert(BLOCK_K == 64 || BLOCK_K == 128, "steps of 64 or 128 keys");
  constexpr std::uint32_t kBlockK = BLOCK_K;
  constexpr std::uint32_t kStage = kBlockK * D;
  constexpr std::uint32_t kPanels = D / kPanel;
  constexpr bool kProducer = has_producer<D, Kv>();
  const auto keys = kv.keys;
  auto group = simdgroup_id() / 4u;  // the warpgroup: rows 64·group … of the tile
  auto warp_row = q0 + simdgroup_id() * 16u;
  // Runs f in the two warpgroups of queries only (the producer, where there is one, skips it).
  const auto in_consumers = [&](auto&& f) {
    if constexpr (kProducer) {
      IRON_IF(simdgroup_id() < kThreads / 32u) { f(); }
    } else {
      f();
    }
  };

  // The tile's queries, published to the asynchronous proxy that reads them.
  auto q_tile = panels<T, D>(kBlockQ, false);
  in_consumers([&] { start_panels<T, D, kBlockQ>(q_tile, Expr<u32>(0u), q, q0, q_len, q_row); });
  async_commit();
  async_wait(0);
  fence_async_proxy();
  barrier();

  auto q_hi = min(q0 + kBlockQ, q_len);
  const KeyRange range = key_range<kBlockK>(q0, q_hi, q_len, keys, masks);
  auto scale2 = scale * kLog2e;

  RowState<16> rows;
  // The output's columns: on sm_90a in one accumulator, which one product a step adds to from
  // every panel of v; elsewhere a panel's columns an accumulator, since a lowered product across
  // panels would place them by the target's lane map (docs/tensor-cores.md).
  std::array<FragAcc<16, D>, 1> o_wide;
  std::array<FragAcc<16, kPanel>, kPanels> o;
  auto k_ring = panels<T, D>(kBlockK, true);
  auto v_ring = panels<T, D>(kBlockK, true);
  auto p_tile = shared<T>(kBlockQ * kBlockK);  // the weights, where they cannot stay in registers

  // Step p's key and value rows into `slot`, 16-byte copies by the warpgroups of queries.
  const auto copy_rows = [&](const Expr<u32>& p, const Expr<u32>& slot) {
    kv.with_rows([&](const auto& row) {
      start_panels<T, D, kBlockK>(k_ring, slot * kStage, kv.k, p, keys, row);
      start_panels<T, D, kBlockK>(v_ring, slot * kStage, kv.v, p, keys, row);
    });
  };
  // Runs `issue` (products started, then committed) in the warpgroup's turn where `turns`.
  const auto in_turn = [&](bool turns, auto&& issue) {
    if (turns) {
      take_turn<2>(issue);
    } else {
      issue();
    }
  };
  // Starts s = q · kᵀ over the head_dim panels, keys in `slot`, and commits it.
  const auto start_scores = [&](FragAcc<16, kBlockK>& s, const Expr<u32>& slot) {
    for (std::uint32_t c = 0; c < kPanels; ++c) {
      warpgroup_mma<kPanel>(s, q_tile, c * kBlockQ * kPanel + group * 64u * kPanel, kPanel, k_ring,
                            slot * kStage + c * kBlockK * kPanel, kPanel);
    }
    warpgroup_commit();
  };
  // Starts o_wide += pa · v, values in `slot` (D / 64 panels of kBlockK rows, one row-major B
  // in panels), the weights pa (rounded to T) in registers (the register form), and commits it.
  const auto start_values = [&](const FragA<T, 16, kBlockK>& pa, const Expr<u32>& slot) {
    warpgroup_mma(o_wide[0], pa, v_ring, slot * kStage, kPanel, row_major, kBlockK * kPanel);
    warpgroup_commit();
  };
  // The scores (in the warpgroup's turn where `turns`), then masked and the online softmax's
  // step in log2 units (softmax_step) on the accumulators acc: s becomes the step's weights.
  const auto weigh = [&](auto& acc, FragAcc<16, kBlockK>& s, const Expr<u32>& p,
                         const Expr<u32>& slot, bool turns = false) {
    in_turn(turns, [&] { start_scores(s, slot); });
    warpgroup_wait(0, s);
    softmax_step(rows, s, acc, p, q0, q_hi, warp_row, q_len, keys, masks, scale2);
  };
  const auto wait_values = [&](auto& acc) {
    for (auto& oc : acc) warpgroup_wait(0, oc);
  };
  // o_wide += the weights s · v (in the warpgroup's turn where `turns`).
  const auto add_values = [&](const FragAcc<16, kBlockK>& s, const Expr<u32>& slot,
                              bool turns = false) {
    const auto pa = s.template to_a<T>();
    in_turn(turns, [&] { start_values(pa, slot); });
    wait_values(o_wide);
  };
  // The output rows from the accumulators acc, each `cols` columns wide.
  const auto finish = [&](const auto& acc, std::uint32_t cols) {
    in_consumers([&] { rows.finish(acc, cols, warp_row, q_len, sink, store, lse); });
  };
  // Elsewhere the weights go through shared memory, whose fragment loads are the same on every
  // lane map: store_weights, a group barrier, then add_stored_values.
  const auto store_weights = [&](const FragAcc<16, kBlockK>& s) {
    s.template to_a<T>().store(p_tile, simdgroup_id() * 16u * kBlockK, kBlockK);
    fence_async_proxy();
  };
  const auto add_stored_values = [&](const Expr<u32>& slot) {
    for (std::uint32_t c = 0; c < kPanels; ++c) {
      for (std::uint32_t kc = 0; kc < kBlockK; kc += kPanel) {
        warpgroup_mma<kPanel>(o[c], p_tile, group * 64u * kBlockK + kc, kBlockK, v_ring,
                              slot * kStage + c * kBlockK * kPanel + kc * kPanel, kPanel,
                              row_major);
      }
    }
    warpgroup_commit();
    wait_values(o);
  };

  if constexpr (kProducer) {
    // Without tensor maps (an AOT bundle) the producer could not lower its registers, nor the
    // consumers raise theirs: such a target takes the shared-weights path below.
    IRON_IF(target_has(TargetFeature::WarpgroupProducts) && target_has(TargetFeature::TensorMaps)) {
      // The knob `turns` (1, the default, or 0): the two warpgroups take turns at starting their
      // products (FlashAttention-3's ping-pong), so that one's softmax runs under the other's.
      const bool turns = tuned("turns") != 0;
      if (turns) in_consumers([&] { begin_turns<2>(); });
      const auto tile_copies = [&](const Expr<u32>& p, const Expr<u32>& slot) {
        for (std::uint32_t c = 0; c < kPanels; ++c) {
          const auto at = slot * kStage + c * kBlockK * kPanel;
          kv.template copy_rows<kBlockK, kPanel>(k_ring, at, kv.k, p, Expr<u32>(c * kPanel));
          kv.template copy_rows<kBlockK, kPanel>(v_ring, at, kv.v, p, Expr<u32>(c * kPanel));
        }
      };
      if (tuned("overlap") == 0) {
        pipelined(
            range.begin, range.end, Expr<u32>(kBlockK), kStages, tile_copies,
            [&](const Expr<u32>& p, const Expr<u32>& slot) {
              FragAcc<16, kBlockK> s;
              weigh(o_wide, s, p, slot, turns);
              add_values(s, slot, turns);
            },
            0, Specialized{kThreads});
      } else {
        // The knob `overlap` (1, the default; FlashAttention-3's order within a warpgroup): step i
        // starts its scores and the previous step's value product together (one turn where
        // `turns`), so the softmax of step i runs while the tensor cores add step i − 1's values.
        // The values stay a step longer in their slot (lag 1, three stages), the accumulators are
        // rescaled by step i − 1's factors just before step i's products start, and the last step's
        // values are added after the loop. Step −1 adds zero weights times the first step's values
        // (an address, not a branch, picks the slot), and a tile that sees no key still takes one
        // step, wholly masked, so that the last values are rows that landed.
        constexpr std::uint32_t kOverlapStages = 3;
        auto end = max(range.end, range.begin + kBlockK);
        FragA<T, 16, kBlockK> weights;  // the previous step's, rounded to T
        FragAcc<16, 8> alpha;           // the previous step's factors
        pipelined(
            range.begin, end, Expr<u32>(kBlockK), kOverlapStages, tile_copies,
            [&](const Expr<u32>& p, const Expr<u32>& slot) {
              FragAcc<16, kBlockK> s;
              auto previous =
                  select(p == range.begin, slot, (slot + (kOverlapStages - 1u)) % kOverlapStages);
              // The rescale first, pinned there by a wait with nothing in flight (its register
              // fence), so that no accumulator is touched while the scores' product runs
              // (ptxas would wait for it: C7517).
              RowState<16>::rescale(o_wide, alpha);
              wait_values(o_wide);
              in_turn(turns, [&] {
                start_scores(s, slot);
                start_values(weights, previous);
              });
              warpgroup_wait(1, s);
              softmax_weights(rows, s, alpha, p, q0, q_hi, warp_row, q_len, keys, masks, scale2);
              wait_values(o_wide);
              weights.round_from(s);
            },
            1, Specialized{kThreads});
        in_consumers([&] {
          auto steps = (end - range.begin + (kBlockK - 1u)) / kBlockK;
          RowState<16>::rescale(o_wide, alpha);
          start_values(weights, (steps - 1u) % kOverlapStages);
          wait_values(o_wide);
        });
      }
      finish(o_wide, D);
    }
    IRON_ELSE {
      // Every warpgroup meets the barrier between the weights' stores and their loads; the
      // producer's threads copy and compute nothing.
      pipelined(
          range.begin, range.end, Expr<u32>(kBlockK), kStages,
          [&](const Expr<u32>& p, const Expr<u32>& slot) {
            in_consumers([&] { copy_rows(p, slot); });
          },
          [&](const Expr<u32>& p, const Expr<u32>& slot) {
            in_consumers([&] {
              FragAcc<16, kBlockK> s;
              weigh(o, s, p, slot);
              store_weights(s);
            });
            barrier();
            in_consumers([&] { add_stored_values(slot); });
          });
      finish(o, kPanel);
    }
  } else {
    IRON_IF(target_has(TargetFeature::WarpgroupProducts)) {
      pipelined(range.begin, range.end, Expr<u32>(kBlockK), kStages, copy_rows,
                [&](const Expr<u32>& p, const Expr<u32>& slot) {
                  FragAcc<16, kBlockK> s;
                  weigh(o_wide, s, p, slot);
                  add_values(s, slot);
                });
      finish(o_wide, D);
    }
    IRON_ELSE {
      pipelined(range.begin, range.end, Expr<u32>(kBlockK), kStages, copy_rows,
                [&](const Expr<u32>& p, const Expr<u32>& slot) {
                  FragAcc<16, kBlockK> s;
                  weigh(o, s, p, slot);
                  store_weights(s);
                  barrier();
                  add_stored_values(slot);
                });
      finish(o, kPanel);
    }
  }
}

}  // namespace iron::kernels::sdpa::warpgroup
