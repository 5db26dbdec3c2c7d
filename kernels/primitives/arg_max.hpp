/// The first maximum of a row: each thread walks its elements in increasing j keeping the first
/// strictly greater one, then the group takes the largest value and, among the threads holding
/// it, the smallest index. Ties go to the smallest index whatever the split among the threads;
/// NaN compares false and never wins. Shared by iron_argmax and greedy sampling.
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels {

/// Takes (v, j) into a thread's running (best, best_index) when v is strictly greater.
inline void keep_first_max(dsl::Var<dsl::f32>& best, dsl::Var<dsl::u32>& best_index,
                           const dsl::Expr<dsl::f32>& v, const dsl::Expr<dsl::u32>& j) {
  using namespace iron::dsl;
  auto held = Expr<f32>(best);
  auto better = v > held;  // strict: a thread keeps the first of equal values
  best_index = select(better, j, best_index);
  best = select(better, v, held);
}

/// The same for elements taken in any order: v also wins a tie with a larger held index, so the
/// thread still holds its maximum at the smallest index.
inline void keep_max_first_index(dsl::Var<dsl::f32>& best, dsl::Var<dsl::u32>& best_index,
                                 const dsl::Expr<dsl::f32>& v, const dsl::Expr<dsl::u32>& j) {
  using namespace iron::dsl;
  auto held = Expr<f32>(best);
  auto held_index = Expr<u32>(best_index);
  auto better = v > held || (v == held && j < held_index);
  best_index = select(better, j, held_index);
  best = select(better, v, held);
}

/// The group's maximum and its smallest index.
struct ArgMax {
  dsl::Expr<dsl::f32> value;
  dsl::Expr<dsl::u32> index;
};

/// Reduces every thread's (best, best_index) over the group; all threads must call it. A thread
/// that saw no element holds -inf at its own thread id, which never undercuts a real -inf
/// element's index (thread 0 holds index 0), so a row of -inf gives index 0.
inline ArgMax group_arg_max(const dsl::Var<dsl::f32>& best, const dsl::Var<dsl::u32>& best_index) {
  using namespace iron::dsl;
  auto row_max = reduce_max(best);
  auto index = reduce_min(select(best == row_max, Expr<u32>(best_index), 0xFFFFFFFFu));
  return {row_max, index};
}

}  // namespace iron::kernels
