/// The flash-attention body every prefill form shares: one group's tile of query rows of one
/// head against a sequence's keys, step by step with an online softmax on fragment rows, then the
/// rows normalized (with the head's sink) and handed to the form's stores. See
/// kernels/sdpa/prefill.cpp for the method and the error bound.
#pragma once

#include <array>
#include <cstdint>
#include <iron/iron.hpp>
#include <type_traits>

namespace iron::kernels::sdpa {

inline constexpr std::uint32_t kWarps = 4;  ///< simdgroups per group
inline constexpr std::uint32_t kThreads = kWarps * 32;
/// Query rows per simdgroup: 32 up to head_dim 128 (each k and v fragment read from shared
/// memory then serves two 16-row tiles, halving the shared reads a product needs), 16 for 256
/// (whose accumulators alone fill 128 registers a lane).
template <std::uint32_t D>
constexpr std::uint32_t warp_rows() {
  return D <= 128 ? 32 : 16;
}
/// Keys per step: as many as the registers hold beside the accumulators without spilling (a
/// step's scores and weights take kWarpRows · keys / 32 f32 registers a lane): 64 for 16-bit
/// types up to head_dim 64, 32 beyond, 16 for f32 (whose fragment products go the software way).
template <class T, std::uint32_t D>
constexpr std::uint32_t block_k() {
  if constexpr (dsl::lane_bytes<T>() != 2) return 16;
  return D <= 64 ? 64 : 32;
}
/// Query rows per group.
template <std::uint32_t D>
constexpr std::uint32_t block_q() {
  return kWarps * warp_rows<D>();
}
inline constexpr std::uint32_t kStages = 2;      ///< K and V stages in flight
inline constexpr std::uint32_t kValueCols = 32;  ///< output columns per accumulator
inline constexpr float kLog2e = 1.44269504088896340736f;
inline constexpr float kLn2 = 0.69314718055994530942f;

/// The `lse` of a form that writes none.
struct NoLse {};

/// Elements a shared row of head_dim D takes: 16-bit rows are swizzled (ldmatrix reads eight of
/// them at once without bank conflicts), f32 rows padded by 4.
template <class T, std::uint32_t D>
constexpr std::uint32_t pitch() {
  return dsl::lane_bytes<T>() == 2 ? D : D + 4;
}

/// `rows` rows of head_dim D in shared memory (a ring stage of them when RING).
template <class T, std::uint32_t D, bool RING>
dsl::Shared<T> rows_of(std::uint32_t rows) {
  if constexpr (dsl::lane_bytes<T>() == 2) {
    if constexpr (RING)
      return dsl::ring<T>(rows * D, dsl::Swizzled{D});
    else
      return dsl::shared<T>(rows * D, dsl::Swizzled{D});
  } else {
    if constexpr (RING)
      return dsl::ring<T>(rows * pitch<T, D>());
    else
      return dsl::shared<T>(rows * pitch<T, D>());
  }
}

/// Starts copying rows first … first + Rows of a tensor (row j at element row_at(j), D
/// elements) into `dst`, element c of row r at place(r, c), by the 16-byte asynchronous copies
/// of a group of THREADS: zeros for rows at or past `count`, whose addresses are never formed
/// from their own index.
template <class T, std::uint32_t D, std::uint32_t Rows, std::uint32_t THREADS, class RowAt,
          class Place>
void start_copies(const dsl::Shared<T>& dst, const dsl::Tensor<T>& src,
                  const dsl::Expr<dsl::u32>& first, const dsl::Expr<dsl::u32>& count,
                  RowAt&& row_at, Place&& place) {
  using namespace iron::dsl;
  constexpr std::uint32_t kW = 16 / lane_bytes<T>();
  constexpr std::uint32_t kPerRow = D / kW;
  static_assert(Rows * kPerRow % THREADS == 0, "whole copies per thread");
  for (std::uint32_t j = 0; j < Rows * kPerRow / THREADS; ++j) {
    auto piece = thread_id<0>() + j * THREADS;
    auto r = piece / kPerRow;
    auto c = piece % kPerRow * kW;
    auto inside = first + r < count;
    auto from = row_at(select(inside, first + r, Expr<u32>(0u))) + c;
    copy_async<kW>(dst[place(r, c)], src[from], inside);
  }
}

/// start_copies by this body's group into rows of pitch<T, D>() elements at `at`.
template <class T, std::uint32_t D, std::uint32_t Rows, class RowAt>
void start_rows(const dsl::Shared<T>& dst, const dsl::Expr<dsl::u32>& at, const dsl::Tensor<T>& src,
                const dsl::Expr<dsl::u32>& first, const dsl::Expr<dsl::u32>& count,
                RowAt&& row_at) {
  using dsl::Expr;
  using dsl::u32;
  start_copies<T, D, Rows, kThreads>(
      dst, src, first, count, row_at,
      [&](const Expr<u32>& r, const Expr<u32>& c) { return at + r * pitch<T, D>() + c; });
}

/// `m` where it is finite, else 0: the shift of a row whose keys are all masked so far (every
/// exponent then stays −inf and gives 0 instead of NaN).
inline dsl::Expr<dsl::f32> shift_of(const dsl::Expr<dsl::f32>& m) {
  return dsl::select(m == -dsl::infinity, dsl::Expr<dsl::f32>(0.0f), m);
}

/// What one query tile attends to: the sequence's q rows, its keys (a KV source,
/// kv_sources.hpp), the masks and the scale.
struct Masks {
  dsl::Expr<dsl::u32> causal;  ///< nonzero: query i sees keys j ≤ i + keys − q_len
  dsl::Expr<dsl::u32> window;  ///< nonzero: query i sees keys j > i + keys − q_len − window
};

/// The keys some row of a tile sees: [begin, end), begin rounded down to a step of STEP keys.
struct KeyRange {
  dsl::Expr<dsl::u32> begin, end;
};

/// The keys query row i (of q_len) sees of `keys`: j < keys; j ≤ i + keys − q_len when causal;
/// j > i + keys − q_len − window when windowed. Empty (begin ≥ end) for a row that sees none.
inline KeyRange key_bounds(const dsl::Expr<dsl::u32>& i, const dsl::Expr<dsl::u32>& q_len,
                           const dsl::Expr<dsl::u32>& keys, const Masks& masks) {
  using namespace iron::dsl;
  auto reach = i + keys + 1u;  // one past row i's diagonal, plus q_len
  auto end = select(masks.causal == 0u, keys,
                    select(reach > q_len, min(keys, reach - q_len), Expr<u32>(0u)));
  auto begin = select(masks.window > 0u && reach > q_len + masks.window,
                      reach - q_len - masks.window, Expr<u32>(0u));
  return {begin, end};
}

/// The keys rows q0 … q_hi − 1 (of q_len, q_hi > q0) see of `keys`: from the first row's
/// first (rounded down to a step of STEP keys) to the last row's last.
template <std::uint32_t STEP>
KeyRange key_range(const dsl::Expr<dsl::u32>& q0, const dsl::Expr<dsl::u32>& q_hi,
                   const dsl::Expr<dsl::u32>& q_len, const dsl::Expr<dsl::u32>& keys,
                   const Masks& masks) {
  const KeyRange first = key_bounds(q0, q_len, keys, masks);
  const KeyRange last = key_bounds(q_hi - 1u, q_len, keys, masks);
  return {first.begin / STEP * STEP, last.end};
}

/// A step's scores s (keys p … p + N − 1 for the simdgroup's rows warp_row …) scaled by scale2
/// (log2 units) when SCALE, and, where an edge cuts the tile's rows q0 … q_hi − 1, masked keys
/// set to −inf.
template <bool SCALE, std::uint32_t R, std::uint32_t N>
void scale_and_mask(dsl::FragAcc<R, N>& s, const dsl::Expr<dsl::u32>& p,
                    const dsl::Expr<dsl::u32>& q0, const dsl::Expr<dsl::u32>& q_hi,
                    const dsl::Expr<dsl::u32>& warp_row, const dsl::Expr<dsl::u32>& q_len,
                    const dsl::Expr<dsl::u32>& keys, const Masks& masks,
                    const dsl::Expr<dsl::f32>& scale2) {
  using namespace iron::dsl;
  const auto scaled = [&](const Expr<f32>& x) -> Expr<f32> {
    if constexpr (SCALE) {
      return x * scale2;
    } else {
      return x;
    }
  };
  // Row i sees keys [lo_i, hi_i) (see key_bounds): each row's bounds relative to p, clamped to
  // [0, N], are computed once a row and kept in row vectors (their bits: fragments hold f32), so
  // that an element only compares its column with its row's two.
  const auto mask = [&] {
    FragAcc<R, 8> lo;
    FragAcc<R, 8> hi;
    const auto relative = [&](const Expr<u32>& bound) {
      return bitcast<f32>(select(bound > p, min(bound - p, Expr<u32>(N)), Expr<u32>(0u)));
    };
    lo.map([&](const Expr<f32>&, const Expr<u32>& r, const Expr<u32>&) {
      return relative(key_bounds(warp_row + r, q_len, keys, masks).begin);
    });
    hi.map([&](const Expr<f32>&, const Expr<u32>& r, const Expr<u32>&) {
      return relative(key_bounds(warp_row + r, q_len, keys, masks).end);
    });
    s.map([&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>& c, std::uint32_t e) {
      auto seen = c >= bitcast<u32>(s.row_value(lo, e)) && c < bitcast<u32>(s.row_value(hi, e));
      return select(seen, scaled(x), Expr<f32>(-infinity));
    });
  };
  // Every row of the tile sees every key of the step (the common case): no mask.
  auto whole = p + N <= keys && (masks.causal == 0u || p + N + q_len <= q0 + keys + 1u) &&
               (masks.window == 0u || q_hi + keys <= p + masks.window + q_len);
  if constexpr (SCALE) {
    IRON_IF(whole) {
      s.map([&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>&) { return scaled(x); });
    }
    IRON_ELSE { mask(); }
  } else {
    IRON_IF(!whole) { mask(); }
  }
}

/// The online softmax of a simdgroup's R rows: each row's running maximum m (log2 units) and
/// its running sum l of exp2(s − m).
template <std::uint32_t R>
struct RowState {
  dsl::FragAcc<R, 8> m{-dsl::infinity};
  dsl::FragAcc<R, 8> l;

  /// Takes a step's scores s, in log2 units, or (FOLDED) unscaled, to be scaled by scale2 > 0
  /// inside the weights' exponent: m and l move to the step, s becomes its weights
  /// exp2(s − m_new) (exp2(fma(s, scale2, −m_new)) when FOLDED, one rounding fewer and no
  /// multiply of its own), alpha each row's factor exp2(m_old − m_new), which rescale applies to
  /// the accumulators. A positive scale keeps each row's order, so the maximum of the unscaled
  /// scores, scaled, is the maximum of the scaled ones.
  template <bool FOLDED, std::uint32_t N>
  void step(dsl::FragAcc<R, N>& s, dsl::FragAcc<R, 8>& alpha, const dsl::Expr<dsl::f32>& scale2) {
    using namespace iron::dsl;
    auto m_step = s.row_max();
    if constexpr (FOLDED) {
      m_step.map(
          [&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>&) { return x * scale2; });
    }
    // Each row's shift, once a row: the new maximum, 0 while the row has seen no key.
    FragAcc<R, 8> shift;
    shift.map([&](const Expr<f32>&, const Expr<u32>&, const Expr<u32>&, std::uint32_t e) {
      return shift_of(max(m.get(e), m_step.get(e)));
    });
    alpha.map([&](const Expr<f32>&, const Expr<u32>&, const Expr<u32>&, std::uint32_t e) {
      return exp2_approx(m.get(e) - shift.get(e));
    });
    m.map([&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>&, std::uint32_t e) {
      return max(x, m_step.get(e));
    });
    s.map([&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>&, std::uint32_t e) {
      if constexpr (FOLDED) {
        return exp2_approx(fma(x, scale2, -s.row_value(shift, e)));
      } else {
        return exp2_approx(x - s.row_value(shift, e));
      }
    });
    const auto l_step = s.row_sum();
    l.map([&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>&, std::uint32_t e) {
      return x * alpha.get(e) + l_step.get(e);
    });
  }

  /// Every accumulator of `o` times its row's factor in alpha.
  template <class Acc, std::size_t C>
  static void rescale(std::array<Acc, C>& o, const dsl::FragAcc<R, 8>& alpha) {
    using namespace iron::dsl;
    for (auto& oc : o) {
      oc.map([&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>&, std::uint32_t e) {
        return x * oc.row_value(alpha, e);
      });
    }
  }

  /// The rows' outputs: each accumulator of `o` (columns COLS apart) normalized by its row's
  /// weight with the sink's exp2(sink − top) added, store(i, c, value) for rows i < q_len, and
  /// lse(i, value) unless lse is NoLse. Where the lane map pairs a lane's slots (2j, 2j + 1 are
  /// columns c, c + 1 of one row) and `store` takes two values, store(i, c, v0, v1) writes both
  /// in one access: half the stores, each covering whole 4-byte words of a row.
  template <class Acc, std::size_t C, class Store, class Lse>
  void finish(const std::array<Acc, C>& o, std::uint32_t cols, const dsl::Expr<dsl::u32>& warp_row,
              const dsl::Expr<dsl::u32>& q_len, const dsl::Expr<dsl::f32>& sink, Store&& store,
              Lse&& lse) const {
    using namespace iron::dsl;
    auto sink2 = sink * kLog2e;
    FragAcc<R, 8> top;
    top.map([&](const Expr<f32>&, const Expr<u32>&, const Expr<u32>&, std::uint32_t e) {
      return shift_of(max(m.get(e), sink2));
    });
    FragAcc<R, 8> total;
    total.map([&](const Expr<f32>&, const Expr<u32>&, const Expr<u32>&, std::uint32_t e) {
      return l.get(e) * exp2(m.get(e) - top.get(e)) + exp2(sink2 - top.get(e));
    });
    FragAcc<R, 8> factor;
    factor.map([&](const Expr<f32>&, const Expr<u32>&, const Expr<u32>&, std::uint32_t e) {
      auto t = total.get(e);
      return select(t > 0.0f, exp2(m.get(e) - top.get(e)) / t, Expr<f32>(0.0f));
    });
    // The column of slot e of accumulator n, formed where a row is stored.
    const auto column = [&](std::size_t n, std::uint32_t e) {
      return static_cast<std::uint32_t>(n) * cols + o[n].col(e);
    };
    // W = 1: store(i, c, value) per element; W = 2: store(i, c, v0, v1) per pair of slots.
    const auto store_rows = [&](auto width) {
      constexpr std::uint32_t W = decltype(width)::value;
      for (std::size_t n = 0; n < C; ++n) {
        for (std::uint32_t e = 0; e < Acc::elements; e += W) {
          auto i = warp_row + o[n].row(e);
          if constexpr (W == 1) {
            auto value = o[n].get(e) * o[n].row_value(factor, e);
            IRON_IF(i < q_len) { store(i, column(n, e), value); }
          } else {
            auto f = o[n].row_value(factor, e);
            auto v0 = o[n].get(e) * f;
            auto v1 = o[n].get(e + 1) * f;
            IRON_IF(i < q_len) { store(i, column(n, e), v0, v1); }
          }
        }
      }
    };
    using F = Expr<f32>;
    using U = Expr<u32>;
    if constexpr (std::is_invocable_v<Store&, const U&, const U&, const F&, const F&> &&
                  Acc::elements % 2 == 0) {
      IRON_IF(target_has(TargetFeature::PairedAccumulatorColumns)) {
        store_rows(std::integral_constant<std::uint32_t, 2>{});
      }
      IRON_ELSE { store_rows(std::integral_constant<std::uint32_t, 1>{}); }
    } else {
      store_rows(std::integral_constant<std::uint32_t, 1>{});
    }
    if constexpr (!std::is_same_v<std::decay_t<Lse>, NoLse>) {
      for (std::uint32_t e = 0; e < FragAcc<R, 8>::elements; ++e) {
        auto i = warp_row + total.row(e);
        auto value = (log2(total.get(e)) + top.get(e)) * kLn2;
        IRON_IF(total.col(e) == 0u && i < q_len) { lse(i, value); }
      }
    }
  }
};

/// softmax_step (below) without the rescale: alpha gets each row's factor, for the caller to apply
/// to the accumulators when they are not in use (a product may still be adding to them).
template <std::uint32_t R, std::uint32_t N>
void softmax_weights(RowState<R>& rows, dsl::FragAcc<R, N>& s, dsl::FragAcc<R, 8>& alpha,
                     const dsl::Expr<dsl::u32>& p, const dsl::Expr<dsl::u32>& q0,
                     const dsl::Expr<dsl::u32>& q_hi, const dsl::Expr<dsl::u32>& warp_row,
                     const dsl::Expr<dsl::u32>& q_len, const dsl::Expr<dsl::u32>& keys,
                     const Masks& masks, const dsl::Expr<dsl::f32>& scale2) {
  using namespace iron::dsl;
  IRON_IF(specialized(scale2 > 0.0f)) {
    scale_and_mask<false>(s, p, q0, q_hi, warp_row, q_len, keys, masks, scale2);
    rows.template step<true>(s, alpha, scale2);
  }
  IRON_ELSE {
    scale_and_mask<true>(s, p, q0, q_hi, warp_row, q_len, keys, masks, scale2);
    rows.template step<false>(s, alpha, scale2);
  }
}

/// A step's scores s (unscaled, keys p … for the simdgroup's rows warp_row …) into the online
/// softmax: masked where an edge cuts the tile (scale_and_mask), the rows' state moved on, s
/// turned into the step's weights and the accumulators of `o` rescaled. With a positive scale (a
/// launch constant: specialized, the usual binding) the scale folds into the weights' exponent
/// (RowState::step); otherwise the scores are scaled first.
template <std::uint32_t R, std::uint32_t N, class Acc, std::size_t C>
void softmax_step(RowState<R>& rows, dsl::FragAcc<R, N>& s, std::array<Acc, C>& o,
                  const dsl::Expr<dsl::u32>& p, const dsl::Expr<dsl::u32>& q0,
                  const dsl::Expr<dsl::u32>& q_hi, const dsl::Expr<dsl::u32>& warp_row,
                  const dsl::Expr<dsl::u32>& q_len, const dsl::Expr<dsl::u32>& keys,
                  const Masks& masks, const dsl::Expr<dsl::f32>& scale2) {
  dsl::FragAcc<R, 8> alpha;
  softmax_weights(rows, s, alpha, p, q0, q_hi, warp_row, q_len, keys, masks, scale2);
  RowState<R>::rescale(o, alpha);
}

/// Runs the group's tile: query rows q0 … q0 + block_q − 1 of a sequence of q_len rows whose row i
/// is at q_row(i) (D elements), against `kv`. Calls store(i, c, value) for each output element of a
/// row i < q_len (c < D, value the normalized f32 output) and lse(i, value) once per such row
/// with its natural log-sum-exp (sink included; −inf for a row that weighs nothing), unless lse
/// is NoLse.
template <class T, std::uint32_t D, class Kv, class QRow, class Store, class Lse>
void attend(const dsl::Tensor<T>& q, QRow&& q_row, const dsl::Expr<dsl::u32>& q0,
            const dsl::Expr<dsl::u32>& q_len, const Kv& kv, const Masks& masks,
            const dsl::Expr<dsl::f32>& scale, const dsl::Expr<dsl::f32>& sink, Store&& store,
            Lse&& lse) {
  using namespace iron::dsl;
  static_assert(D % kValueCols == 0 && D <= 256, "head_dim 32, 64, … 256");
  constexpr std::uint32_t kWarpRows = warp_rows<D>();
  constexpr std::uint32_t kBlockQ = block_q<D>();
  // The queries stay in registers where they fit beside the accumulators, else each step
  // reads them from shared memory.
  constexpr bool kQueriesInRegisters = dsl::lane_bytes<T>() == 2 && kWarpRows * D <= 2048;
  constexpr std::uint32_t kBlockK = block_k<T, D>();
  constexpr std::uint32_t kPitch = pitch<T, D>();
  constexpr std::uint32_t kStage = kBlockK * kPitch;
  const auto keys = kv.keys;
  auto warp_row = q0 + simdgroup_id() * kWarpRows;

  // The tile's queries, into each simdgroup's registers.
  auto q_tile = rows_of<T, D, false>(kBlockQ);
  start_rows<T, D, kBlockQ>(q_tile, Expr<u32>(0u), q, q0, q_len, q_row);
  async_commit();
  async_wait(0);
  barrier();
  auto q_at = simdgroup_id() * kWarpRows * kPitch;
  std::array<FragA<T, kWarpRows, 16>, kQueriesInRegisters ? D / 16 : 0> qf;
  for (auto& f : qf) f.load(q_tile, q_at + static_cast<std::uint32_t>(&f - qf.data()) * 16, kPitch);

  auto q_hi = min(q0 + kBlockQ, q_len);
  const KeyRange range = key_range<kBlockK>(q0, q_hi, q_len, keys, masks);
  auto scale2 = scale * kLog2e;

  RowState<kWarpRows> rows;
  std::array<FragAcc<kWarpRows, kValueCols>, D / kValueCols> o;
  auto k_ring = rows_of<T, D, true>(kBlockK);
  auto v_ring = rows_of<T, D, true>(kBlockK);
  pipelined(
      range.begin, range.end, Expr<u32>(kBlockK), kStages,
      [&](const Expr<u32>& p, const Expr<u32>& slot) {
        kv.with_rows([&](const auto& row) {
          start_rows<T, D, kBlockK>(k_ring, slot * kStage, kv.k, p, keys, row);
          start_rows<T, D, kBlockK>(v_ring, slot * kStage, kv.v, p, keys, row);
        });
      },
      [&](const Expr<u32>& p, const Expr<u32>& slot) {
        // s = q · kᵀ, masked keys −inf, then the online softmax's step in log2 units.
        FragAcc<kWarpRows, kBlockK> s;
        for (std::uint32_t i = 0; i < D / 16; ++i) {
          FragB<T, 16, kBlockK> kb;
          kb.load(k_ring, slot * kStage + i * 16, kPitch, col_major);
          if constexpr (kQueriesInRegisters) {
            mma(s, qf[i], kb);
          } else {
            FragA<T, kWarpRows, 16> qa;
            qa.load(q_tile, q_at + i * 16, kPitch);
            mma(s, qa, kb);
          }
        }
        softmax_step(rows, s, o, p, q0, q_hi, warp_row, q_len, keys, masks, scale2);
        // o += p · v.
        const auto pa = s.template to_a<T>();
        for (std::uint32_t n = 0; n < D / kValueCols; ++n) {
          FragB<T, kBlockK, kValueCols> vb;
          vb.load(v_ring, slot * kStage + n * kValueCols, kPitch);
          mma(o[n], pa, vb);
        }
      });
  rows.finish(o, kValueCols, warp_row, q_len, sink, store, lse);
}

}  // namespace iron::kernels::sdpa
