/// How the sampling passes read a row of logits: in 16-byte vectors (kLogitLanes elements: 8 of
/// f16/bf16, 4 of f32), so a row of n logits (n a multiple of 8) is n / kLogitLanes vectors.
///
/// - for_each_logit: the strided walk. Thread t takes vectors t, t + tpg, …, issuing
///   kWalkUnroll independent loads before it uses any, so each thread keeps that many 16-byte
///   reads in flight (two: four would take the sampling kernel past 64 registers a thread, the
///   most a group of 1024 has); each thread sees its elements in increasing j, and the lanes of a
///   simdgroup walk together (collectives allowed).
/// - for_each_logit_in_chunk: the contiguous walk of the draw. Thread t takes the vectors
///   [t·c, (t + 1)·c) with c = ⌈(n / kLogitLanes) / tpg⌉ (logit_chunk), elements in increasing
///   j.
#pragma once

#include <array>
#include <iron/iron.hpp>

namespace iron::kernels {

template <class T>
inline constexpr dsl::u32 kLogitLanes = 16 / dsl::lane_bytes<T>();
inline constexpr dsl::u32 kWalkUnroll = 2;

/// Calls fn(j, x, valid) for this thread's elements j of `logits[base .. base + n)`, x in f32.
/// Every lane of a simdgroup makes the same calls (the trip count is the simdgroup's), so fn may
/// use simdgroup collectives; `valid` is false for the calls past the row's end (j and x are
/// then those of the row's last vector).
template <class T, class Fn>
void for_each_logit(const dsl::Tensor<T>& logits, const dsl::Expr<dsl::u32>& base,
                    const dsl::Expr<dsl::u32>& n, const Fn& fn) {
  using namespace iron::dsl;
  constexpr u32 lanes = kLogitLanes<T>;
  auto lane = lane_id();
  auto tpg = group_size<0>();
  auto vectors = n / lanes;
  for (auto first : range(thread_id<0>() - lane, vectors, tpg * kWalkUnroll)) {
    std::array<Expr<u32>, kWalkUnroll> at;
    std::array<Expr<boolean>, kWalkUnroll> valid;
    std::array<std::array<Expr<T>, lanes>, kWalkUnroll> loaded;
    for (u32 k = 0; k < kWalkUnroll; ++k) {
      valid[k] = first + lane + k * tpg < vectors;
      at[k] = min(first + lane + k * tpg, vectors - 1u);
      loaded[k] = load_lanes<lanes>(logits[base + at[k] * lanes]);
    }
    for (u32 k = 0; k < kWalkUnroll; ++k) {
      for (u32 e = 0; e < lanes; ++e) fn(at[k] * lanes + e, cast<f32>(loaded[k][e]), valid[k]);
    }
  }
}

/// This thread's contiguous chunk of the row, in elements: [begin, end), whole vectors.
struct LogitChunk {
  dsl::Expr<dsl::u32> begin;
  dsl::Expr<dsl::u32> end;
};
template <class T>
LogitChunk logit_chunk(const dsl::Expr<dsl::u32>& n) {
  using namespace iron::dsl;
  constexpr u32 lanes = kLogitLanes<T>;
  auto vectors = n / lanes;
  auto chunk = (vectors + group_size<0>() - 1u) / group_size<0>();
  auto start = min(thread_id<0>() * chunk, vectors);
  return {start * lanes, min(start + chunk, vectors) * lanes};
}

/// Calls fn(j, x) for the elements of `chunk`, in increasing j.
template <class T, class Fn>
void for_each_logit_in_chunk(const dsl::Tensor<T>& logits, const dsl::Expr<dsl::u32>& base,
                             const LogitChunk& chunk, const Fn& fn) {
  using namespace iron::dsl;
  constexpr u32 lanes = kLogitLanes<T>;
  for (auto j0 : range(chunk.begin, chunk.end, lanes)) {
    const auto loaded = load_lanes<lanes>(logits[base + j0]);
    for (u32 e = 0; e < lanes; ++e) fn(j0 + e, cast<f32>(loaded[e]));
  }
}

}  // namespace iron::kernels
