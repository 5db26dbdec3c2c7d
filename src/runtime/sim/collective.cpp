/// Ops that involve several threads at once: barriers, simdgroup ops and group reductions.
#include <algorithm>

#include "interpreter.hpp"

namespace iron::runtime::sim {
namespace {

using ir::OpKind;

// Sums in increasing thread order, in f32 for floats (rounded once at the end) or wrapping i32.
Slot sum(DType t, const Slot* a, std::uint32_t n) {
  if (is_float(t)) {
    float s = 0.0f;
    for (std::uint32_t i = 0; i < n; ++i) s += as_float(a[i]);
    return fit_slot(t, s);
  }
  std::uint32_t s = 0;
  for (std::uint32_t i = 0; i < n; ++i) s += a[i];
  return wrap_slot(t, s);
}

Slot fold(OpKind k, DType t, const Slot* a, std::uint32_t n) {
  Slot v = a[0];
  for (std::uint32_t i = 1; i < n; ++i) v = combine(k, t, v, a[i]);
  return v;
}

void prefix_sum(DType t, bool inclusive, const Slot* a, Slot* r, std::uint32_t n) {
  if (is_float(t)) {
    float s = 0.0f;
    for (std::uint32_t i = 0; i < n; ++i) {
      const float before = s;
      s += as_float(a[i]);
      r[i] = fit_slot(t, inclusive ? s : before);
    }
    return;
  }
  std::uint32_t s = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t before = s;
    s += a[i];
    r[i] = wrap_slot(t, inclusive ? s : before);
  }
}

// The lane a shuffle reads for `lane`; outside [0, lanes) the lane keeps its own value.
std::int64_t source_lane(OpKind k, std::uint32_t lane, std::int64_t operand) {
  switch (k) {
    case OpKind::SimdShuffleXor:
      return lane ^ static_cast<std::uint32_t>(operand);
    case OpKind::SimdShuffleUp:
      return lane - operand;
    case OpKind::SimdShuffleDown:
      return lane + operand;
    default:
      return operand;  // SimdShuffle, SimdBroadcast
  }
}

// One complete simdgroup: lanes [0, lanes) are the threads at a[0 .. lanes).
void simd_one(const Instr& in, std::uint32_t lanes, const Slot* a, const Slot* operand, Slot* r) {
  switch (in.kind) {
    case OpKind::SimdSum:
      std::fill_n(r, lanes, sum(in.type, a, lanes));
      return;
    case OpKind::SimdMax:
    case OpKind::SimdMin:
      std::fill_n(r, lanes, fold(combiner_of(in.kind), in.type, a, lanes));
      return;
    case OpKind::SimdPrefixSum:
      return prefix_sum(in.type, true, a, r, lanes);
    case OpKind::SimdPrefixExclusiveSum:
      return prefix_sum(in.type, false, a, r, lanes);
    default:
      for (std::uint32_t lane = 0; lane < lanes; ++lane) {
        const std::int64_t src = source_lane(in.kind, lane, int_value(operand[lane], in.arg1_type));
        r[lane] = src >= 0 && src < lanes ? a[src] : a[lane];
      }
  }
}

}  // namespace

void GroupRunner::barrier(const Instr& in, Active active) {
  if (active.size() != threads_) throw report_.divergent_barrier(in, active, threads_);
  shared_.barrier();
  ++interval_;
}

void GroupRunner::simd(const Instr& in, Active active) {
  const Slot* a = row(in.args[0]);
  const Slot* operand = row(in.args[1]);  // unused by ops without a lane operand
  Slot* r = row(in.result);
  std::size_t k = 0;
  while (k < active.size()) {
    const std::uint32_t first = active[k] / 32 * 32;
    const std::uint32_t lanes = std::min(32u, threads_ - first);
    std::size_t end = k;
    while (end < active.size() && active[end] < first + lanes) ++end;
    if (end - k != lanes) {
      std::uint32_t missing = first;
      while (missing - first < end - k && active[k + (missing - first)] == missing) ++missing;
      throw report_.divergent_simdgroup(in, static_cast<std::uint32_t>(end - k), lanes, active[k],
                                        missing);
    }
    simd_one(in, lanes, a + first, operand + first, r + first);
    k = end;
  }
}

void GroupRunner::reduce(const Instr& in, Active active) {
  if (active.size() != threads_) throw report_.divergent_barrier(in, active, threads_);
  shared_.barrier();
  ++interval_;
  const Slot* a = row(in.args[0]);
  const Slot v = in.kind == OpKind::ReduceSum ? sum(in.type, a, threads_)
                                              : fold(combiner_of(in.kind), in.type, a, threads_);
  std::fill_n(row(in.result), threads_, v);
}

}  // namespace iron::runtime::sim
