/// Ops that involve several threads at once: barriers, simdgroup ops and group reductions.
#include <algorithm>
#include <optional>

#include "interpreter.hpp"

namespace iron::runtime::sim {
namespace {

using ir::OpKind;

// Sums in increasing thread order, in f32 for floats (rounded once at the end) or wrapping i32.
Slot sum(DType t, const Slot* a, std::uint32_t n) {
  if (is_float(t)) {
    float s = 0.0f;
    for (std::uint32_t i = 0; i < n; ++i) s += as_float(a[i]);
    return ir::round_bits(t, s);
  }
  std::uint32_t s = 0;
  for (std::uint32_t i = 0; i < n; ++i) s += a[i];
  return ir::wrap_bits(t, s);
}

Slot fold(OpKind combiner, DType t, const Slot* a, std::uint32_t n) {
  Slot v = a[0];
  for (std::uint32_t i = 1; i < n; ++i) v = combine(combiner, t, v, a[i]);
  return v;
}

void prefix_sum(DType t, bool inclusive, const Slot* a, Slot* r, std::uint32_t n) {
  if (is_float(t)) {
    float s = 0.0f;
    for (std::uint32_t i = 0; i < n; ++i) {
      const float before = s;
      s += as_float(a[i]);
      r[i] = ir::round_bits(t, inclusive ? s : before);
    }
    return;
  }
  std::uint32_t s = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t before = s;
    s += a[i];
    r[i] = ir::wrap_bits(t, inclusive ? s : before);
  }
}

// The lane a shuffle or broadcast reads for `lane`; outside [0, lanes) the lane keeps its own
// value.
std::int64_t source_lane(OpKind k, std::uint32_t lane, std::int64_t operand) {
  if (k == OpKind::SimdShuffleXor) return lane ^ static_cast<std::uint32_t>(operand);
  if (k == OpKind::SimdShuffleUp) return lane - operand;
  if (k == OpKind::SimdShuffleDown) return lane + operand;
  return operand;  // SimdShuffle, SimdBroadcast
}

// One complete simdgroup: lanes [0, lanes) are the threads at a[0 .. lanes).
void simd_one(const Instr& in, std::uint32_t lanes, const Slot* a, const Slot* operand, Slot* r) {
  const std::optional<OpKind> combiner = ir::combiner_of(in.kind);
  if (!combiner) {  // a shuffle or broadcast
    for (std::uint32_t lane = 0; lane < lanes; ++lane) {
      const std::int64_t src =
          source_lane(in.kind, lane, int_value(operand[lane], in.arg_types[1]));
      r[lane] = src >= 0 && src < lanes ? a[src] : a[lane];
    }
  } else if (in.kind == OpKind::SimdPrefixSum || in.kind == OpKind::SimdPrefixExclusiveSum) {
    prefix_sum(in.type, in.kind == OpKind::SimdPrefixSum, a, r, lanes);
  } else if (*combiner == OpKind::Add) {
    std::fill_n(r, lanes, sum(in.type, a, lanes));
  } else {
    std::fill_n(r, lanes, fold(*combiner, in.type, a, lanes));
  }
}

}  // namespace

void GroupRunner::barrier(const Instr& in, Active active) {
  // Threads that ran exit no longer take part (as on the GPU).
  if (active.size() != threads_ - exits_) {
    throw report_.divergent_barrier(in, active, threads_ - exits_);
  }
  shared_.barrier();
  ++interval_;
}

void GroupRunner::barrier_among(const Instr& in, Active active) {
  if (in.inner > threads_ || active.size() != in.inner ||
      active[active.size() - 1] != in.inner - 1) {
    throw report_.barrier_among_mismatch(in, active, threads_);
  }
  shared_.barrier();
  ++interval_;
}

void GroupRunner::simdgroup_barrier(const Instr& in, Active active) {
  each_simdgroup(in, active, [&](std::uint32_t first, std::uint32_t) {
    shared_.simdgroup_barrier(first / kSimdgroupLanes);
  });
}

void GroupRunner::turn(const Instr& in, Active active) {
  const std::uint32_t takers = in.inner * ir::kWarpgroupThreads;
  if (takers > threads_) throw report_.turn_out_of_order(in, "the group has fewer warpgroups");
  if (active.size() != takers || active[active.size() - 1] != takers - 1) {
    throw report_.divergent_barrier(in, active, takers);
  }
  const auto step = static_cast<ir::TurnStep>(in.axis);
  const bool in_order = step == ir::TurnStep::Begin  ? !turns_begun_
                        : step == ir::TurnStep::Wait ? turns_begun_ && turn_ != ir::TurnStep::Wait
                                                     : turn_ == ir::TurnStep::Wait;
  if (!in_order) {
    throw report_.turn_out_of_order(
        in, step == ir::TurnStep::Begin ? "turns begun twice"
            : step == ir::TurnStep::Wait
                ? (turns_begun_ ? "a second wait before a pass" : "a wait before the turns begin")
                : "a pass without a wait");
  }
  turns_begun_ = true;
  turn_ = step;
  last_turn_ = &in;
}

void GroupRunner::simd(const Instr& in, Active active) {
  const Slot* a = row(in.args[0]);
  const Slot* operand = row(in.args[1]);  // unused by ops without a lane operand
  Slot* r = row(in.result);
  each_simdgroup(in, active, [&](std::uint32_t first, std::uint32_t lanes) {
    simd_one(in, lanes, a + first, operand + first, r + first);
  });
}

void GroupRunner::reduce(const Instr& in, Active active) {
  if (active.size() != threads_) throw report_.divergent_barrier(in, active, threads_);
  shared_.barrier();
  ++interval_;
  const Slot* a = row(in.args[0]);
  const OpKind combiner = *ir::combiner_of(in.kind);
  const Slot v =
      combiner == OpKind::Add ? sum(in.type, a, threads_) : fold(combiner, in.type, a, threads_);
  std::fill_n(row(in.result), threads_, v);
}

}  // namespace iron::runtime::sim
