/// row_moments: the mean and 1/sqrt(variance + eps) of one row, for the normalizations.
///
/// Two passes: the mean first, then the variance of the centred values, corrected by their sum
/// (Chan, Golub & LeVeque's corrected two-pass algorithm). The one-pass form E[x²] - E[x]²
/// cancels catastrophically in f32 when |mean| ≫ std (a row of 1000 ± 1 loses every digit of
/// its variance), and the plain two-pass form keeps the mean's own rounding (a few units of
/// |mean| · 2^-24, which is 3e-4 of the std for that row); the second pass reads the row again
/// from cache, not memory.
/// Both loops are plain strided row loops with sum accumulators, which the vectorizer accepts.
#pragma once

#include <iron/iron.hpp>

#include "resident_row.hpp"

namespace iron::kernels {

/// A row's mean, as the first pass's rounded mean plus a small correction, and its reciprocal
/// standard deviation; f32 and uniform across the group.
struct RowMoments {
  dsl::Expr<dsl::f32> mean;        ///< the first pass's mean
  dsl::Expr<dsl::f32> correction;  ///< the true mean minus `mean`, from the second pass
  dsl::Expr<dsl::f32> rstd;        ///< 1 / sqrt(variance + eps)

  /// (x - mean of the row) / std: x - mean is exact for x near the mean, then the correction.
  dsl::Expr<dsl::f32> normalized(const dsl::Expr<dsl::f32>& x) const {
    return (x - mean - correction) * rstd;
  }
};

/// The moments of row[base .. base + n), each thread of the group striding by the group size.
/// Every thread of the group must call it (it reduces across the group).
template <class Row>
RowMoments row_moments(const Row& row, const dsl::Expr<dsl::u32>& base,
                       const dsl::Expr<dsl::u32>& n, const dsl::Expr<dsl::f32>& eps) {
  using namespace iron::dsl;
  auto tid = thread_id<0>();
  auto tpg = group_size<0>();
  Var<f32> local_sum = 0.0f;
  for (auto j : range(tid, n, tpg)) local_sum += cast<f32>(load(row[base + j]));
  auto mean = reduce_sum(local_sum) / cast<f32>(n);

  Var<f32> local_deviation = 0.0f;
  Var<f32> local_squares = 0.0f;
  for (auto j : range(tid, n, tpg)) {
    auto centred = cast<f32>(load(row[base + j])) - mean;
    local_deviation += centred;
    local_squares += centred * centred;
  }
  // The centred values sum to n · (true mean - mean), small and nearly exact: it corrects both
  // the mean's rounding and the variance (the corrected two-pass algorithm).
  auto correction = reduce_sum(local_deviation) / cast<f32>(n);
  auto variance = reduce_sum(local_squares) / cast<f32>(n) - correction * correction;
  return {mean, correction, rsqrt(max(variance, 0.0f) + eps)};
}

/// The same moments of a row held in registers: the same two passes, over registers.
template <dsl::Element T>
RowMoments row_moments(const ResidentRow<T>& row, const dsl::Expr<dsl::u32>& n,
                       const dsl::Expr<dsl::f32>& eps) {
  using namespace iron::dsl;
  auto mean = row.sum() / cast<f32>(n);
  auto correction = row.sum([&](const Expr<f32>& x) { return x - mean; }) / cast<f32>(n);
  auto squares = row.sum([&](const Expr<f32>& x) {
    auto centred = x - mean;
    return centred * centred;
  });
  auto variance = squares / cast<f32>(n) - correction * correction;
  return {mean, correction, rsqrt(max(variance, 0.0f) + eps)};
}

}  // namespace iron::kernels
