/// An exclusive prefix sum of one f32 value per thread across the whole group, in thread order:
/// a simdgroup scan, then each simdgroup adds the totals of the simdgroups before it, read back
/// from threadgroup memory. Each term passes through at most 31 + 31 + 1 additions.
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels {

struct GroupScan {
  dsl::Expr<dsl::f32> before;  ///< the sum over the threads before this one
  dsl::Expr<dsl::f32> total;   ///< the sum over the group, in every thread
};

/// All threads of the group must call it (a barrier; tpg a multiple of 32).
inline GroupScan group_exclusive_sum(const dsl::Expr<dsl::f32>& x) {
  using namespace iron::dsl;
  auto lane = lane_id();
  auto simdgroup = simdgroup_id();
  auto totals = shared<f32>(32);  // simdgroup s's total at s
  auto within = simd_prefix_exclusive_sum(x);
  IRON_IF(lane == 31u) { store(totals[simdgroup], within + x); }
  barrier();
  Var<f32> total = 0.0f;  // lane l holds simdgroup l's total
  IRON_IF(lane < simdgroup_count()) { total = load(totals[lane]); }
  auto earlier = simd_sum(select(lane < simdgroup, Expr<f32>(total), 0.0f));
  return {earlier + within, simd_sum(Expr<f32>(total))};
}

}  // namespace iron::kernels
