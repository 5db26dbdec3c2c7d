/// Row statistics shared by the softmax family: the row maximum and the sum of exp(x - max).
///
/// Both are group reductions over one row of a [rows, n] tensor, read with the strided loop
/// `for j = thread_id to n step group_size` over `base + j`, which the vectorizer turns into
/// 16-byte loads. Everything is in f32; every thread of the group gets the results.
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels {

/// The maximum of a row and the sum of exp(x - maximum) over it, in f32.
struct RowStats {
  dsl::Expr<dsl::f32> max;
  dsl::Expr<dsl::f32> sum_exp;
};

/// Max and shifted exp-sum of `inp[base .. base + n)`, two passes over the row. All threads of
/// the group must call it (it reduces across the group).
template <class T>
RowStats row_stats(const dsl::Tensor<T>& inp, const dsl::Expr<dsl::u32>& base,
                   const dsl::Expr<dsl::u32>& n) {
  using namespace iron::dsl;
  auto tid = thread_id<0>();
  auto tpg = group_size<0>();

  Var<f32> local_max = -infinity;
  for (auto j : range(tid, n, tpg)) local_max = max(local_max, cast<f32>(load(inp[base + j])));
  auto row_max = reduce_max(local_max);

  Var<f32> local_sum = 0.0f;
  for (auto j : range(tid, n, tpg)) local_sum += exp(cast<f32>(load(inp[base + j])) - row_max);
  return {row_max, reduce_sum(local_sum)};
}

}  // namespace iron::kernels
