/// The lane body of split-KV decode (kernels/sdpa/decode.cpp) on CUDA cores, and what both
/// bodies share: one group's (batch b, KV head h, split, row block) work, its rows, and the
/// group's partial attention read through a KV source (decode_kv.hpp). The doc comment of
/// decode.cpp describes the algorithm and its error bound; decode_tiles.hpp the tile body.
#pragma once

#include <array>
#include <iron/iron.hpp>
#include <limits>
#include <type_traits>
#include <utility>

#include "decode_splits.hpp"

namespace iron::kernels::sdpa_decode {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;
inline constexpr dsl::u32 kStageElements = kStageVectors * 8;
/// Keys each key group of lanes takes a stage: a stage's kStageVectors / lk keys over the kWarps
/// simdgroups of 32 / lk key groups each.
inline constexpr dsl::u32 kKeysPerLane = kStageVectors / kThreads;

/// 2^x: the hardware's approximation for 16-bit T (within 5u, far under the rounding to T),
/// exp2f for f32.
template <class T>
dsl::Expr<dsl::f32> exp2_of(const dsl::Expr<dsl::f32>& x) {
  if constexpr (std::is_same_v<T, dsl::f32>) {
    return dsl::exp2(x);
  } else {
    return dsl::exp2_approx(x);
  }
}

/// The 8 elements of T at buf[i] (i a multiple of 8) in f32: one 16-byte access (two for f32).
template <class T, class Buffer>
std::array<dsl::Expr<dsl::f32>, 8> load8(const Buffer& buf, const dsl::Expr<dsl::u32>& i) {
  using namespace iron::dsl;
  std::array<Expr<f32>, 8> out;
  if constexpr (std::is_same_v<T, f32>) {
    const auto lo = load_lanes<4>(buf[i]);
    const auto hi = load_lanes<4>(buf[i + 4u]);
    for (u32 e = 0; e < 4; ++e) {
      out[e] = lo[e];
      out[4 + e] = hi[e];
    }
  } else {
    const auto all = load_lanes<8>(buf[i]);
    for (u32 e = 0; e < 8; ++e) out[e] = cast<f32>(all[e]);
  }
  return out;
}

/// Starts copying the 8 elements at src[from] to ring[at] (zeros, reading nothing, unless valid).
template <class T>
void copy8(const dsl::Shared<T>& ring, const dsl::Expr<dsl::u32>& at, const dsl::Tensor<T>& src,
           const dsl::Expr<dsl::u32>& from, const dsl::Expr<dsl::boolean>& valid) {
  using namespace iron::dsl;
  if constexpr (std::is_same_v<T, f32>) {
    copy_async<4>(ring[at], src[from], valid);
    copy_async<4>(ring[at + 4u], src[from + 4u], valid);
  } else {
    copy_async<8>(ring[at], src[from], valid);
  }
}

/// The problem's constexprs.
struct Problem {
  dsl::Expr<dsl::u32> q_tokens, heads_q, heads_kv, head_dim, splits, window;
  dsl::Expr<dsl::f32> scale;
};

/// What a group works on (grid: x = split · row_blocks + row block, y = h, z = b): its block of
/// kRows of the KV head's rows, and its split's keys [start, end) of the keys [lo, len) some row
/// of the sequence sees.
struct Work {
  dsl::Expr<dsl::u32> ratio, rows, block, split, h, b, len, first_pos, start, end;
};

inline Work work_of(const dsl::Tensor<dsl::u32>& seq_lens, const Problem& pb) {
  using namespace iron::dsl;
  Work w;
  w.ratio = pb.heads_q / pb.heads_kv;
  w.rows = pb.q_tokens * w.ratio;
  auto blocks = (w.rows + (kRows - 1u)) / kRows;
  w.split = group_id<0>() / blocks;
  w.block = group_id<0>() % blocks;
  w.h = group_id<1>();
  w.b = group_id<2>();
  // Query token t sits at position len − q_tokens + t; the window keeps its last `window`
  // positions.
  w.len = load(seq_lens[w.b]);
  w.first_pos = w.len - pb.q_tokens;
  auto lo = w.first_pos + 1u -
            select(pb.window == 0u, w.first_pos + 1u, min(pb.window, w.first_pos + 1u));
  // Split `split` of `splits`: whole kSplitAlign-key runs from lo.
  auto chunk =
      (w.len - lo + (pb.splits * kSplitAlign - 1u)) / (pb.splits * kSplitAlign) * kSplitAlign;
  w.start = min(lo + w.split * chunk, w.len);
  w.end = min(w.start + chunk, w.len);
  return w;
}

/// Row r of the KV head's rows (r = t · ratio + g: query head h · ratio + g of token t): whether
/// it exists (r < rows), its row of q and of the outputs, and the keys [klo, khi) it sees. A row
/// past the last sees every key: it is computed and never stored.
struct HeadRow {
  dsl::Expr<dsl::boolean> live;
  dsl::Expr<dsl::u32> row, klo, khi;
};

inline HeadRow head_row(const Work& w, const Problem& pb, const dsl::Expr<dsl::u32>& r) {
  using namespace iron::dsl;
  HeadRow out;
  out.live = r < w.rows;
  auto rc = min(r, w.rows - 1u);
  auto t = rc / w.ratio;
  out.row = (w.b * pb.q_tokens + t) * pb.heads_q + w.h * w.ratio + rc % w.ratio;
  auto pos = w.first_pos + t;
  auto span = select(pb.window == 0u, pos + 1u, min(pb.window, pos + 1u));
  out.klo = select(out.live, pos + 1u - span, 0u);
  out.khi = select(out.live, pos + 1u, w.len);
  return out;
}

/// The lane body: the group's partial attention on CUDA cores (any type, any head_dim): its rows'
/// softmax-weighted sum of the values of the keys of its split (normalized by the split's own
/// weights) into partial_out, the split's log-sum-exp into partial_lse; kThreads threads, a ring
/// of `stages` stages (as many as fit).
template <class T, class Kv>
void attend_lanes(const dsl::Tensor<T>& q, const Kv& kv, const dsl::Tensor<dsl::u32>& seq_lens,
                  const Problem& pb, const dsl::Out<dsl::f32>& partial_out,
                  const dsl::Out<dsl::f32>& partial_lse, std::uint32_t stages) {
  using namespace iron::dsl;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const Work w = work_of(seq_lens, pb);
  const auto& rows = w.rows;
  const auto& block = w.block;
  const auto& split = w.split;
  const auto& start = w.start;
  const auto& end = w.end;
  auto last = end - 1u;  // end ≥ 1: len ≥ 1

  // Lanes: lk (a power of two ≥ head_dim / 8) lanes a key, each with 8 of its elements (the
  // lanes past head_dim / 8 hold zeros), 32 / lk keys side by side in a simdgroup.
  auto lane = lane_id();
  auto warp = simdgroup_id();
  auto tid = thread_id<0>();
  auto nv = pb.head_dim / 8u;
  auto lk_log = select(
      nv > 16u, 5u,
      select(
          nv > 8u, 4u,
          select(nv > 4u, 3u, select(nv > 2u, 2u, select(nv > 1u, Expr<u32>(1u), Expr<u32>(0u))))));
  auto lk = Expr<u32>(1u) << lk_log;
  auto kg = lane >> lk_log;
  auto sub = lane & (lk - 1u);
  auto key_groups = Expr<u32>(32u) >> lk_log;
  auto has_dims = sub < nv;
  auto dim0 = select(has_dims, sub * 8u, 0u);

  // A block of more than one row at lk = 16 (head_dim 72 … 128) takes the reduce-scatter step
  // (fast_step below): lane sub of a key group holds its rows in the order j ^ jp and its keys in
  // the order i ^ ip, jp and ip being its sub's bits 2, 3 and 0, 1 swapped, so the scores' halves
  // it keeps and sends in each round of the reduction are fixed slots. Elsewhere jp = ip = 0.
  auto block_rows = rows - block * kRows;
  auto fast = lk_log == 4u && block_rows != 1u;
  auto jp = select(fast, ((sub >> 2u) & 1u) << 1u | ((sub >> 3u) & 1u), Expr<u32>(0u));
  auto ip = ((sub & 1u) << 1u) | ((sub >> 1u) & 1u);

  // The block's rows r = t · ratio + g (query head h · ratio + g of token t), each with its
  // queries' 8 elements scaled to log2 units, and the keys [klo, khi) it sees; the lane's row j
  // is the block's row j ^ jp. A row past the block's rows has zero queries and sees every key:
  // it is computed and never stored.
  std::array<std::array<Expr<f32>, 8>, kRows> qv;
  std::array<Expr<u32>, kRows> klo, khi;
  auto q_scale = pb.scale * kLog2e;
  for (u32 j = 0; j < kRows; ++j) {
    const HeadRow row = head_row(w, pb, block * kRows + (jp ^ j));
    const auto values = load8<T>(q, row.row * pb.head_dim + dim0);
    auto keep = row.live && has_dims;
    for (u32 e = 0; e < 8; ++e) qv[j][e] = select(keep, values[e] * q_scale, 0.0f);
    klo[j] = row.klo;
    khi[j] = row.khi;
  }

  // Each key group's online softmax state, per row: the running max m (log2 units), the sum of
  // weights l and the weighted sum of its 8 value elements.
  Regs<f32, kRows> m(kNegInf);
  Regs<f32, kRows> l(0.0f);
  Regs<f32, std::size_t{kRows} * 8> acc(0.0f);

  auto k_ring = ring<T>(kStageElements);
  auto v_ring = ring<T>(kStageElements);
  auto stage_keys = Expr<u32>(kStageVectors) >> lk_log;
  auto warp_keys = stage_keys / kWarps;  // = kKeysPerLane · key_groups

  // One stage's keys for the first RB rows: scores, masks, the online softmax update.
  const auto step = [&](auto rows_tag, const Expr<u32>& p, const Expr<u32>& slot) {
    constexpr u32 RB = decltype(rows_tag)::value;
    Regs<f32, std::size_t{kKeysPerLane} * RB> s(0.0f);
    std::array<std::array<Expr<f32>, 8>, kKeysPerLane> vv;
    std::array<Expr<u32>, kKeysPerLane> keys;
    for (u32 i = 0; i < kKeysPerLane; ++i) {
      auto local = warp * warp_keys + i * key_groups + kg;
      keys[i] = p + local;
      auto at = slot * kStageElements + ((local << lk_log) + sub) * 8u;
      const auto kk = load8<T>(k_ring, at);
      vv[i] = load8<T>(v_ring, at);
      for (u32 j = 0; j < RB; ++j) {
        Expr<f32> dot = qv[j][0] * kk[0];
        for (u32 e = 1; e < 8; ++e) dot = fma(qv[j][e], kk[e], dot);
        s[i * RB + j] = dot;
      }
    }
    // The key group's lanes add their parts: every lane of the group gets the scores.
    for (u32 mask = 1; mask < 32; mask <<= 1) {
      IRON_IF(lk > mask) {
        for (u32 x = 0; x < kKeysPerLane * RB; ++x) s[x] += simd_shuffle_xor(s[x].get(), mask);
      }
    }
    // Masks, unless every row sees every key of the simdgroup's part of the stage.
    Expr<u32> safe_lo = klo[0];
    Expr<u32> safe_hi = min(end, khi[0]);
    for (u32 j = 1; j < RB; ++j) {
      safe_lo = max(safe_lo, klo[j]);
      safe_hi = min(safe_hi, khi[j]);
    }
    auto wbase = p + warp * warp_keys;
    IRON_IF(wbase < safe_lo || wbase + warp_keys > safe_hi) {
      for (u32 i = 0; i < kKeysPerLane; ++i) {
        for (u32 j = 0; j < RB; ++j) {
          auto seen = keys[i] >= klo[j] && keys[i] < khi[j] && keys[i] < end;
          s[i * RB + j] = select(seen, s[i * RB + j].get(), kNegInf);
        }
      }
    }
    for (u32 j = 0; j < RB; ++j) {
      Expr<f32> top = s[j].get();
      for (u32 i = 1; i < kKeysPerLane; ++i) top = max(top, s[i * RB + j].get());
      auto m_new = max(m[j].get(), top);
      auto shift = select(m_new == kNegInf, 0.0f, m_new);  // no key yet: weights stay 0
      auto corr = exp2_of<T>(m[j].get() - shift);
      std::array<Expr<f32>, kKeysPerLane> w;
      for (u32 i = 0; i < kKeysPerLane; ++i) w[i] = exp2_of<T>(s[i * RB + j].get() - shift);
      Expr<f32> w_sum = w[0];
      for (u32 i = 1; i < kKeysPerLane; ++i) w_sum = w_sum + w[i];
      l[j] = fma(l[j].get(), corr, w_sum);
      for (u32 e = 0; e < 8; ++e) {
        Expr<f32> a = acc[j * 8 + e].get() * corr;
        for (u32 i = 0; i < kKeysPerLane; ++i) a = fma(w[i], vv[i][e], a);
        acc[j * 8 + e] = a;
      }
      m[j] = m_new;
    }
  };

  // The step of a block of kRows rows at lk = 16 (kKeysPerLane · kRows = 16 scores a lane, one
  // per lane of the key group after a reduce-scatter): the same scores, weights and sums as
  // `step`, in 15 shuffles and 5 exp2 a lane where `step` takes 64 and 20. The lane's slot i holds
  // key i ^ ip of its key group's 4, its slot j row j ^ jp (see jp). Round k of the reduction adds
  // the upper half of the slots from lane sub ^ 2^k into the lower half: afterwards slot (0, 0),
  // the lane's key ip and row jp, holds the whole score (a tree of 16 partials as in `step`).
  const auto fast_step = [&](const Expr<u32>& p, const Expr<u32>& slot) {
    constexpr u32 kScores = kKeysPerLane * kRows;
    static_assert(kScores == 16, "one score a lane of a 16-lane key group");
    std::array<Expr<f32>, kScores> s;
    std::array<std::array<Expr<f32>, 8>, kKeysPerLane> vv;
    for (u32 i = 0; i < kKeysPerLane; ++i) {
      auto local = warp * warp_keys + (ip ^ i) * key_groups + kg;
      auto at = slot * kStageElements + ((local << 4u) + sub) * 8u;
      const auto kk = load8<T>(k_ring, at);
      vv[i] = load8<T>(v_ring, at);
      for (u32 j = 0; j < kRows; ++j) {
        Expr<f32> dot = qv[j][0] * kk[0];
        for (u32 e = 1; e < 8; ++e) dot = fma(qv[j][e], kk[e], dot);
        s[i * kRows + j] = dot;
      }
    }
    for (u32 half = kScores / 2, mask = 1; half >= 1; half /= 2, mask <<= 1) {
      for (u32 x = 0; x < half; ++x) s[x] = s[x] + simd_shuffle_xor(s[x + half], mask);
    }
    Var<f32> score = s[0];
    Expr<u32> safe_lo = klo[0];
    Expr<u32> safe_hi = min(end, khi[0]);
    for (u32 j = 1; j < kRows; ++j) {
      safe_lo = max(safe_lo, klo[j]);
      safe_hi = min(safe_hi, khi[j]);
    }
    auto wbase = p + warp * warp_keys;
    IRON_IF(wbase < safe_lo || wbase + warp_keys > safe_hi) {
      auto key = wbase + ip * key_groups + kg;
      score = select(key >= klo[0] && key < khi[0] && key < end, score.get(), kNegInf);
    }
    // The row's top over the 4 keys (lanes sub ^ 1, 2), then each slot row's from the lanes
    // holding it (sub ^ 4, 8).
    auto top = max(score.get(), simd_shuffle_xor(score.get(), 1u));
    top = max(top, simd_shuffle_xor(top, 2u));
    std::array<Expr<f32>, kRows> shift, corr;
    for (u32 j = 0; j < kRows; ++j) {
      const u32 row_mask = ((j >> 1) << 2) | ((j & 1u) << 3);
      auto row_top = row_mask == 0 ? top : simd_shuffle_xor(top, row_mask);
      auto m_new = max(m[j].get(), row_top);
      shift[j] = select(m_new == kNegInf, 0.0f, m_new);  // no key yet: weights stay 0
      corr[j] = exp2_of<T>(m[j].get() - shift[j]);
      m[j] = m_new;
    }
    auto w_own = exp2_of<T>(score.get() - shift[0]);
    std::array<Expr<f32>, kScores> w;
    for (u32 i = 0; i < kKeysPerLane; ++i) {
      for (u32 j = 0; j < kRows; ++j) {
        const u32 mask = (i >> 1) | ((i & 1u) << 1) | ((j >> 1) << 2) | ((j & 1u) << 3);
        w[i * kRows + j] = mask == 0 ? w_own : simd_shuffle_xor(w_own, mask);
      }
    }
    for (u32 j = 0; j < kRows; ++j) {
      Expr<f32> w_sum = w[j];
      for (u32 i = 1; i < kKeysPerLane; ++i) w_sum = w_sum + w[i * kRows + j];
      l[j] = fma(l[j].get(), corr[j], w_sum);
      for (u32 e = 0; e < 8; ++e) {
        Expr<f32> a = acc[j * 8 + e].get() * corr[j];
        for (u32 i = 0; i < kKeysPerLane; ++i) a = fma(w[i * kRows + j], vv[i][e], a);
        acc[j * 8 + e] = a;
      }
    }
  };

  pipelined(
      start, end, stage_keys, stages,
      [&](const Expr<u32>& p, const Expr<u32>& slot) {
        // kStageVectors / kThreads copies of K and of V a thread: vector c of key p + key.
        for (u32 j = 0; j < kStageVectors / kThreads; ++j) {
          auto v = tid + j * kThreads;
          auto key = p + (v >> lk_log);
          auto c = v & (lk - 1u);
          auto valid = key < end && c < nv;
          auto from = kv.row(min(key, last)) + select(valid, c * 8u, 0u);
          auto at = slot * kStageElements + v * 8u;
          copy8<T>(k_ring, at, kv.k, from, valid);
          copy8<T>(v_ring, at, kv.v, from, valid);
        }
      },
      [&](const Expr<u32>& p, const Expr<u32>& slot) {
        // lk is a launch constant: a module holds the one-row step and one of the block steps.
        IRON_IF(specialized(lk_log == 4u)) {
          IRON_IF(block_rows == 1u) { step(std::integral_constant<u32, 1>{}, p, slot); }
          IRON_ELSE { fast_step(p, slot); }
        }
        IRON_ELSE {
          IRON_IF(block_rows == 1u) { step(std::integral_constant<u32, 1>{}, p, slot); }
          IRON_ELSE { step(std::integral_constant<u32, kRows>{}, p, slot); }
        }
      });

  // The key groups of a simdgroup merge their states (lanes lk apart hold the same elements):
  // a traced loop over the masks lk … 16, so the code holds one merge, not one per mask.
  for (auto mask_log : range(lk_log, 5u, 1u)) {
    auto mask = Expr<u32>(1u) << mask_log;
    for (u32 j = 0; j < kRows; ++j) {
      auto m_other = simd_shuffle_xor(m[j].get(), mask);
      auto l_other = simd_shuffle_xor(l[j].get(), mask);
      auto m_new = max(m[j].get(), m_other);
      auto shift = select(m_new == kNegInf, 0.0f, m_new);
      auto mine = exp2_of<T>(m[j].get() - shift);
      auto theirs = exp2_of<T>(m_other - shift);
      l[j] = fma(l[j].get(), mine, l_other * theirs);
      for (u32 e = 0; e < 8; ++e) {
        auto other = simd_shuffle_xor(acc[j * 8 + e].get(), mask);
        acc[j * 8 + e] = fma(acc[j * 8 + e].get(), mine, other * theirs);
      }
      m[j] = m_new;
    }
  }

  // Simdgroups 1 … 3 leave their states in shared memory; simdgroup 0 merges them into its own
  // and its first key group's lanes write each row's normalized output (8 elements a lane) and
  // log-sum-exp. Slot j of a lane holds the block's row j ^ jp; lane 0's jp is 0.
  auto part_acc = shared<f32>((kWarps - 1) * kRows * kMaxHeadDim);
  auto part_ml = shared<f32>(kWarps * kRows * 2);
  IRON_IF(warp > 0u && kg == 0u && has_dims) {
    for (u32 j = 0; j < kRows; ++j) {
      auto at = ((warp - 1u) * kRows + (jp ^ j)) * kMaxHeadDim + sub * 8u;
      store_lanes(part_acc[at],
                  std::array<Expr<f32>, 4>{acc[j * 8].get(), acc[j * 8 + 1].get(),
                                           acc[j * 8 + 2].get(), acc[j * 8 + 3].get()});
      store_lanes(part_acc[at + 4u],
                  std::array<Expr<f32>, 4>{acc[j * 8 + 4].get(), acc[j * 8 + 5].get(),
                                           acc[j * 8 + 6].get(), acc[j * 8 + 7].get()});
    }
  }
  IRON_IF(warp > 0u && lane == 0u) {
    for (u32 j = 0; j < kRows; ++j) {
      store(part_ml[(warp * kRows + j) * 2u], m[j].get());
      store(part_ml[(warp * kRows + j) * 2u + 1u], l[j].get());
    }
  }
  barrier();
  IRON_IF(warp == 0u && kg == 0u && has_dims) {
    for (u32 j = 0; j < kRows; ++j) {
      auto jr = jp ^ j;
      Expr<f32> top = m[j].get();
      for (u32 w = 1; w < kWarps; ++w) top = max(top, load(part_ml[(w * kRows + jr) * 2u]));
      auto shift = select(top == kNegInf, 0.0f, top);
      auto own = exp2_of<T>(m[j].get() - shift);
      Expr<f32> sum = l[j].get() * own;
      std::array<Expr<f32>, 8> o;
      for (u32 e = 0; e < 8; ++e) o[e] = acc[j * 8 + e].get() * own;
      for (u32 w = 1; w < kWarps; ++w) {
        auto weight = exp2_of<T>(load(part_ml[(w * kRows + jr) * 2u]) - shift);
        sum = fma(load(part_ml[(w * kRows + jr) * 2u + 1u]), weight, sum);
        auto at = ((w - 1) * kRows + jr) * kMaxHeadDim + sub * 8u;
        const auto lo = load_lanes<4>(part_acc[at]);
        const auto hi = load_lanes<4>(part_acc[at + 4u]);
        for (u32 e = 0; e < 4; ++e) {
          o[e] = fma(lo[e], weight, o[e]);
          o[4 + e] = fma(hi[e], weight, o[4 + e]);
        }
      }
      auto inv = 1.0f / select(sum > 0.0f, sum, 1.0f);  // no key: every sum is 0, and o too
      auto r = block * kRows + jr;
      IRON_IF(r < rows) {
        auto row = head_row(w, pb, r).row;
        auto at = (row * pb.splits + split) * pb.head_dim + sub * 8u;
        store_lanes(partial_out[at],
                    std::array<Expr<f32>, 4>{o[0] * inv, o[1] * inv, o[2] * inv, o[3] * inv});
        store_lanes(partial_out[at + 4u],
                    std::array<Expr<f32>, 4>{o[4] * inv, o[5] * inv, o[6] * inv, o[7] * inv});
        IRON_IF(sub == 0u) { store(partial_lse[row * pb.splits + split], shift * kLn2 + log(sum)); }
      }
    }
  }
}

}  // namespace iron::kernels::sdpa_decode
