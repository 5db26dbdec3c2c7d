/// The thresholds of top-k and top-p sampling, found by a weighted radix select over the row.
///
/// Every logit maps to a 32-bit key in the same order (order_key: flip all bits of a negative
/// float, set the sign bit of a positive one; -0 counts as +0), so "the k largest" and "the
/// largest logits whose mass reaches p" are both the set of elements whose key is at least some
/// threshold v. select_threshold finds v a byte at a time, most significant first, in four
/// passes over the row (the row is 256 KB at most, so after the first pass it comes from the L2;
/// a symbolic loop of four, so the pass is emitted once): pass d accumulates, per value of byte d,
/// the weight of the eligible elements whose upper d bytes equal the prefix chosen so far, then one
/// simdgroup scans the 256 bins from the top and takes the largest bin at which the weight above
/// the prefix's range plus the bins down to it reaches the target. With unit weights that is the
/// k-th largest key; with the elements' probability masses, the top-p cut.
#pragma once

#include <array>
#include <iron/iron.hpp>

namespace iron::kernels {

/// A key in the order of the f32 values (NaN excepted): key(a) < key(b) iff a < b, and -0 = +0.
inline dsl::Expr<dsl::u32> order_key(const dsl::Expr<dsl::f32>& v) {
  using namespace iron::dsl;
  auto bits = bitcast<u32>(select(v == 0.0f, Expr<f32>(0.0f), v));
  return select((bits >> 31u) != 0u, ~bits, bits | 0x80000000u);
}

/// The largest key v such that the weights of the elements j < n with key ≥ max(v, floor) sum to
/// at least target_of(their total) and to more than 0; 0 (every element) when no v does, which
/// only rounding between passes can cause for a target within the total. `walk(fn)` calls
/// fn(x, valid, lanes_together) for this thread's elements of the row (x the logit, valid false
/// for a call to ignore, lanes_together a std::bool_constant: whether every lane of the
/// simdgroup makes the same calls, so that fn may use collectives); `weight(x)` is an element's
/// weight (W = u32 or f32). All threads of the group must call it (barriers; tpg ≥ 32).
template <class W, class Walk, class Weight, class Target>
dsl::Expr<dsl::u32> select_threshold(const Walk& walk, const Weight& weight,
                                     const dsl::Expr<dsl::u32>& floor, const Target& target_of) {
  using namespace iron::dsl;
  constexpr u32 kBins = 256;
  constexpr u32 kBinsPerLane = kBins / 32;
  auto tid = thread_id<0>();
  auto tpg = group_size<0>();
  auto hist = shared<W>(kBins);
  auto chosen = shared<u32>(1);
  Var<u32> prefix = 0u;  // the bytes chosen so far, in place
  Var<u32> known = 0u;   // the mask of those bytes
  Var<W> above = 0;      // simdgroup 0: the weight of the keys above the prefix's range
  Var<W> target = 0;     // simdgroup 0
  for (auto byte : range(0u, 4u, 1u)) {
    auto shift = 24u - 8u * byte;
    for (auto b : range(tid, kBins, tpg)) store(hist[b], W{0});
    barrier();
    // Logits cluster in a few bins (the first byte is the sign and the upper exponent), so a
    // simdgroup whose lanes all fall in one bin adds their sum with one atomic.
    walk([&](const Expr<f32>& x, const Expr<boolean>& valid, auto lanes_together) {
      auto key = order_key(x);
      auto bin = select(valid && key >= floor && (key & Expr<u32>(known)) == Expr<u32>(prefix),
                        (key >> shift) & (kBins - 1), Expr<u32>(kBins));
      auto w = weight(x);
      if constexpr (decltype(lanes_together)::value) {
        IRON_IF(simd_min(select(bin == simd_broadcast(bin, 0u), Expr<u32>(1u), Expr<u32>(0u))) ==
                1u) {
          auto sum = simd_sum(select(bin < kBins, w, Expr<W>(0)));
          IRON_IF(lane_id() == 0u && bin < kBins) { atomic_add(hist[bin], sum); }
        }
        IRON_ELSE {
          IRON_IF(bin < kBins) { atomic_add(hist[bin], w); }
        }
      } else {
        IRON_IF(bin < kBins) { atomic_add(hist[bin], w); }
      }
    });
    barrier();
    IRON_IF(simdgroup_id() == 0u) {
      // Lane l holds bins top, top − 1, …, top − 7 (top = 255 − 8l): the bins from the largest.
      auto top = (kBins - 1) - lane_id() * kBinsPerLane;
      std::array<Expr<W>, kBinsPerLane> bins;
      Expr<W> lane_total = load(hist[top]);
      bins[0] = lane_total;
      for (u32 i = 1; i < kBinsPerLane; ++i) {
        bins[i] = load(hist[top - i]);
        lane_total = lane_total + bins[i];
      }
      auto total = simd_sum(lane_total);
      IRON_IF(byte == 0u) { target = target_of(total); }
      Expr<W> reached = above + simd_prefix_exclusive_sum(lane_total);
      Expr<u32> found = 0u;  // 1 + the first bin where the target is reached, 0 for none
      Expr<W> before = 0;    // the weight above that bin
      for (u32 i = 0; i < kBinsPerLane; ++i) {
        auto previous = reached;
        reached = previous + bins[i];
        auto hit = reached >= Expr<W>(target) && reached > 0 && found == 0u;
        found = select(hit, top - i + 1u, found);
        before = select(hit, previous, before);
      }
      auto best = simd_max(found);
      above = simd_max(select(found == best, before, Expr<W>(0)));
      IRON_IF(lane_id() == 0u) { store(chosen[0u], max(best, 1u) - 1u); }
    }
    barrier();
    prefix = prefix | (load(chosen[0u]) << shift);
    known = known | (0xFFu << shift);
  }
  return prefix;
}

}  // namespace iron::kernels
