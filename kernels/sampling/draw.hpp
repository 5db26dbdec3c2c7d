/// The draw of iron_sample: the inverse CDF at u over the kept tokens in index order.
///
/// Each thread owns a contiguous run of the tokens (of the row, or of the candidate list, which
/// is in index order too), so the threads' runs are in index order. mass_walk(fn) calls fn(w)
/// for the kept weight of each token of this thread's run; the group scans the run sums, finds
/// the thread whose run holds u · Σ, and that thread alone walks its run again with
/// run_walk(fn), fn(j, w) for its tokens in increasing j: the first weight that takes the running
/// sum past u · Σ is the token; if rounding keeps the sum below, the run's last kept token.
#pragma once

#include <iron/iron.hpp>

#include "../primitives/group_scan.hpp"

namespace iron::kernels {

/// The drawn token at u = uniform() (made here, after the sums), in every thread of the group;
/// all threads must call it (barriers).
template <class Uniform, class MassWalk, class RunWalk>
dsl::Expr<dsl::u32> draw_token(const Uniform& uniform, const MassWalk& mass_walk,
                               const RunWalk& run_walk) {
  using namespace iron::dsl;
  auto tid = thread_id<0>();
  Var<f32> mass = 0.0f;
  mass_walk([&](const Expr<f32>& w) { mass += w; });
  const GroupScan scan = group_exclusive_sum(mass);
  auto goal = uniform() * scan.total;
  auto holder = reduce_max(select(scan.before <= goal && mass > 0.0f, tid, 0u));
  auto picked = shared<u32>(1);
  IRON_IF(tid == holder) {
    Var<f32> running = scan.before;
    Var<u32> found = 0u;
    Var<u32> pick = 0u;
    run_walk([&](const Expr<u32>& j, const Expr<f32>& w) {
      running += w;
      IRON_IF(found == 0u && w > 0.0f) {
        pick = j;
        IRON_IF(running > goal) { found = 1u; }
      }
    });
    store(picked[0u], Expr<u32>(pick));
  }
  barrier();
  return load(picked[0u]);
}

}  // namespace iron::kernels
