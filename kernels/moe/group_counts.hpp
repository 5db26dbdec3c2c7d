/// Exclusive prefix sums of several u32 counts per thread across the whole group, in thread
/// order, all in one round of threadgroup memory: a simdgroup scan of each count, then each
/// simdgroup adds the totals of the simdgroups before it. Integer sums are exact (the counts of
/// a group must total below 2^32). iron_moe_sort ranks each expert's assignments with it.
#pragma once

#include <array>
#include <cstddef>
#include <iron/iron.hpp>

namespace iron::kernels {

/// For each count c: the sum of c over the threads before this one, and over the group.
template <std::size_t C>
struct GroupCounts {
  std::array<dsl::Expr<dsl::u32>, C> before;
  std::array<dsl::Expr<dsl::u32>, C> total;
};

/// All threads of the group must call it (one barrier; tpg a multiple of 32).
template <std::size_t C>
GroupCounts<C> group_exclusive_counts(const std::array<dsl::Expr<dsl::u32>, C>& counts) {
  using namespace iron::dsl;
  constexpr u32 kCounts = static_cast<u32>(C);
  auto lane = lane_id();
  auto simdgroup = simdgroup_id();
  auto totals = shared<u32>(32 * kCounts);  // simdgroup s's total of count c at s·C + c
  std::array<Expr<u32>, C> within;
  for (std::size_t c = 0; c < C; ++c) within[c] = simd_prefix_exclusive_sum(counts[c]);
  IRON_IF(lane == 31u) {
    for (u32 c = 0; c < kCounts; ++c) store(totals[simdgroup * kCounts + c], within[c] + counts[c]);
  }
  barrier();
  GroupCounts<C> out;
  for (u32 c = 0; c < kCounts; ++c) {
    Var<u32> total = 0u;  // lane l holds simdgroup l's total
    IRON_IF(lane < simdgroup_count()) { total = load(totals[lane * kCounts + c]); }
    out.before[c] = simd_sum(select(lane < simdgroup, Expr<u32>(total), Expr<u32>(0u))) + within[c];
    out.total[c] = simd_sum(Expr<u32>(total));
  }
  return out;
}

}  // namespace iron::kernels
