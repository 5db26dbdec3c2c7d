/// DSL intrinsics: thread geometry built-ins, math, select/fma/min/max, simdgroup operations,
/// threadgroup reductions and barriers.
#pragma once

#include "iron/core/source_location.hpp"
#include "iron/dsl/expr.hpp"

namespace iron::dsl {

namespace detail {
ir::ValueId record_builtin(ir::Builtin b, int axis);
ir::ValueId record_op(ir::OpKind kind, std::initializer_list<ir::ValueId> args, DType type);
void record_barrier();
void record_barrier_among(std::uint32_t threads);
void record_simdgroup_barrier();

/// A float or signed integer element type (abs).
template <class T>
concept SignedElement = FloatElement<T> || dtype_of<T>
== DType::I32 || dtype_of<T> == DType::I8;
/// Any element type but boolean (min, max).
template <class T>
concept NumericElement = !std::is_same_v<T, boolean>;

// The return types of the deleted twins below, printed in the error at the user's line.
struct needs_a_float_value_cast_first {};
struct needs_a_float_or_signed_integer_value {};
struct needs_a_number {};
}  // namespace detail

// ── Built-in indices (all u32) ───────────────────────────────────────────────────────────────

#define IRON_AXIS_BUILTIN(fn, kind)                                          \
  template <int Axis>                                                        \
  Expr<u32> fn(SourceLocation where = SourceLocation::current()) {           \
    static_assert(Axis >= 0 && Axis <= 2, "Iron: axis must be 0, 1 or 2");   \
    detail::at(where);                                                       \
    return Expr<u32>::wrap(detail::record_builtin(ir::Builtin::kind, Axis)); \
  }
/// Thread index within its group.
IRON_AXIS_BUILTIN(thread_id, ThreadId)
/// Group index within the grid.
IRON_AXIS_BUILTIN(group_id, GroupId)
/// Threads per group.
IRON_AXIS_BUILTIN(group_size, GroupSize)
/// Groups in the grid.
IRON_AXIS_BUILTIN(grid_groups, GridGroups)
/// group_id * group_size + thread_id.
IRON_AXIS_BUILTIN(global_id, GlobalId)
#undef IRON_AXIS_BUILTIN

#define IRON_FLAT_BUILTIN(fn, kind)                                       \
  inline Expr<u32> fn(SourceLocation where = SourceLocation::current()) { \
    detail::at(where);                                                    \
    return Expr<u32>::wrap(detail::record_builtin(ir::Builtin::kind, 0)); \
  }
/// Lane within the 32-wide simdgroup.
IRON_FLAT_BUILTIN(lane_id, Lane)
/// Simdgroup index within the group.
IRON_FLAT_BUILTIN(simdgroup_id, Simdgroup)
/// Simdgroups per group.
IRON_FLAT_BUILTIN(simdgroup_count, SimdgroupCount)
#undef IRON_FLAT_BUILTIN

/// Threads in the whole grid along an axis: grid_groups * group_size. The step of a grid-stride
/// loop `for (auto i : range(global_id<0>(), n, grid_threads<0>()))`, which is correct for any
/// grid and which the vectorizer turns into 16-byte accesses.
template <int Axis>
Expr<u32> grid_threads(SourceLocation where = SourceLocation::current()) {
  const ir::ValueId groups = grid_groups<Axis>(where).id();
  const ir::ValueId size = group_size<Axis>(where).id();
  return Expr<u32>::wrap(detail::record_binary(ir::OpKind::Mul, groups, size, DType::U32));
}

/// The work index of the declared mode: the global thread id for elementwise kernels, the
/// group id for reduction and tiled kernels. Declare dispatch(...) before calling it.
template <int Axis>
Expr<u32> program_id(SourceLocation where = SourceLocation::current()) {
  const bool per_thread = detail::Tracer::current().lock_mode() == ir::DispatchMode::Elementwise;
  return per_thread ? global_id<Axis>(where) : group_id<Axis>(where);
}

// ── Math ─────────────────────────────────────────────────────────────────────────────────────

// Each function has a deleted twin for operands it rejects, so the compiler reports the user's
// line first, naming the mistake in the twin's return type. The macro arguments are names
// (functions, concepts, types) that cannot be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define IRON_UNARY_MATH(fn, kind, requirement, rejection)                                \
  template <Symbolic X>                                                                  \
  requires requirement<element_of<X>> Expr<element_of<X>> fn(                            \
      const X& x, SourceLocation where = SourceLocation::current()) {                    \
    using T = element_of<X>;                                                             \
    detail::at(where);                                                                   \
    return Expr<T>::wrap(                                                                \
        detail::record_op(ir::OpKind::kind, {detail::to_expr<T>(x).id()}, dtype_of<T>)); \
  }                                                                                      \
  template <Symbolic X>                                                                  \
  requires(!requirement<element_of<X>>) detail::rejection fn(const X& x)                 \
  = delete;
#define IRON_FLOAT_MATH(fn, kind) \
  IRON_UNARY_MATH(fn, kind, FloatElement, needs_a_float_value_cast_first)
IRON_FLOAT_MATH(sqrt, Sqrt)
IRON_FLOAT_MATH(rsqrt, Rsqrt)
IRON_FLOAT_MATH(exp, Exp)
IRON_FLOAT_MATH(exp2, Exp2)
IRON_FLOAT_MATH(log, Log)
IRON_FLOAT_MATH(log2, Log2)
IRON_FLOAT_MATH(sin, Sin)
IRON_FLOAT_MATH(cos, Cos)
IRON_FLOAT_MATH(tanh, Tanh)
IRON_FLOAT_MATH(erf, Erf)
IRON_FLOAT_MATH(recip, Recip)
IRON_FLOAT_MATH(floor, Floor)
IRON_FLOAT_MATH(ceil, Ceil)
// 2^x and 1/x by the hardware's fast approximations (within 2.5 and 1.5 ulp of f32; subnormal
// operands and results flush to zero): for results rounded to f16 or bf16 afterwards.
IRON_FLOAT_MATH(exp2_approx, Exp2Approx)
IRON_FLOAT_MATH(recip_approx, RecipApprox)
IRON_UNARY_MATH(abs, Abs, detail::SignedElement, needs_a_float_or_signed_integer_value)
#undef IRON_FLOAT_MATH
#undef IRON_UNARY_MATH

#define IRON_BINARY_MATH(fn, kind, requirement, rejection)                                         \
  template <class A, class B>                                                                      \
  requires detail::Compatible<A, B> && requirement<common_t<A, B>> Expr<common_t<A, B>> fn(        \
      const A& a, const B& b, SourceLocation where = SourceLocation::current()) {                  \
    using T = common_t<A, B>;                                                                      \
    detail::at(where);                                                                             \
    return Expr<T>::wrap(detail::record_op(                                                        \
        ir::OpKind::kind, {detail::to_expr<T>(a).id(), detail::to_expr<T>(b).id()}, dtype_of<T>)); \
  }                                                                                                \
  template <class A, class B>                                                                      \
  requires detail::Mismatched<A, B> detail::mismatch_tag<A, B> fn(const A& a, const B& b)          \
  = delete;                                                                                        \
  template <class A, class B>                                                                      \
  requires detail::Compatible<A, B> &&(!requirement<common_t<A, B>>)detail::rejection fn(          \
      const A& a, const B& b) = delete;
IRON_BINARY_MATH(pow, Pow, FloatElement, needs_a_float_value_cast_first)
IRON_BINARY_MATH(atan2, Atan2, FloatElement, needs_a_float_value_cast_first)
IRON_BINARY_MATH(min, Min, detail::NumericElement, needs_a_number)
IRON_BINARY_MATH(max, Max, detail::NumericElement, needs_a_number)
#undef IRON_BINARY_MATH
// NOLINTEND(bugprone-macro-parentheses)

/// a * b + c with one rounding.
template <class A, class B, class C>
requires(Operands<A, B> || Symbolic<C>) auto fma(const A& a, const B& b, const C& c,
                                                 SourceLocation where = SourceLocation::current()) {
  using T = typename detail::element_or<
      A, typename detail::element_or<B, typename detail::element_or<C, void>::type>::type>::type;
  static_assert(FloatElement<T>, "Iron: fma needs float values");
  detail::at(where);
  return Expr<T>::wrap(detail::record_op(
      ir::OpKind::Fma,
      {detail::to_expr<T>(a).id(), detail::to_expr<T>(b).id(), detail::to_expr<T>(c).id()},
      dtype_of<T>));
}

/// `cond ? a : b` per thread. Both operands are evaluated: a load in either one always runs,
/// so an index that is only valid when `cond` holds needs IRON_IF instead.
template <class A, class B>
requires detail::Compatible<A, B> Expr<common_t<A, B>> select(
    const Expr<boolean>& cond, const A& a, const B& b,
    SourceLocation where = SourceLocation::current()) {
  using T = common_t<A, B>;
  detail::at(where);
  return Expr<T>::wrap(detail::record_op(
      ir::OpKind::Select, {cond.id(), detail::to_expr<T>(a).id(), detail::to_expr<T>(b).id()},
      dtype_of<T>));
}
template <class A, class B>
requires detail::Mismatched<A, B> detail::mismatch_tag<A, B> select(const Expr<boolean>& cond,
                                                                    const A& a, const B& b)
= delete;

// ── Simdgroup and threadgroup collectives ───────────────────────────────────────────────────

#define IRON_COLLECTIVE(fn, kind)                                                        \
  template <Symbolic X>                                                                  \
  Expr<element_of<X>> fn(const X& x, SourceLocation where = SourceLocation::current()) { \
    using T = element_of<X>;                                                             \
    detail::at(where);                                                                   \
    return Expr<T>::wrap(                                                                \
        detail::record_op(ir::OpKind::kind, {detail::to_expr<T>(x).id()}, dtype_of<T>)); \
  }
/// Across the 32 lanes of the simdgroup; every lane gets the result.
IRON_COLLECTIVE(simd_sum, SimdSum)
IRON_COLLECTIVE(simd_max, SimdMax)
IRON_COLLECTIVE(simd_min, SimdMin)
/// Inclusive and exclusive prefix sums over the lanes.
IRON_COLLECTIVE(simd_prefix_sum, SimdPrefixSum)
IRON_COLLECTIVE(simd_prefix_exclusive_sum, SimdPrefixExclusiveSum)
/// Across the whole threadgroup (an implicit barrier); every thread gets the result.
IRON_COLLECTIVE(reduce_sum, ReduceSum)
IRON_COLLECTIVE(reduce_max, ReduceMax)
IRON_COLLECTIVE(reduce_min, ReduceMin)
#undef IRON_COLLECTIVE

#define IRON_SHUFFLE(fn, kind)                                                           \
  template <Symbolic X, class L>                                                         \
  Expr<element_of<X>> fn(const X& x, const L& lane,                                      \
                         SourceLocation where = SourceLocation::current()) {             \
    using T = element_of<X>;                                                             \
    detail::at(where);                                                                   \
    return Expr<T>::wrap(detail::record_op(                                              \
        ir::OpKind::kind, {detail::to_expr<T>(x).id(), detail::to_expr<u32>(lane).id()}, \
        dtype_of<T>));                                                                   \
  }
/// Value of `x` in lane `lane` (shuffle), lane ^ mask (xor), lane - delta (up), lane + delta
/// (down; lanes past the end keep their own value), or lane `lane` for all (broadcast).
IRON_SHUFFLE(simd_shuffle, SimdShuffle)
IRON_SHUFFLE(simd_shuffle_xor, SimdShuffleXor)
IRON_SHUFFLE(simd_shuffle_up, SimdShuffleUp)
IRON_SHUFFLE(simd_shuffle_down, SimdShuffleDown)
IRON_SHUFFLE(simd_broadcast, SimdBroadcast)
#undef IRON_SHUFFLE

/// Waits until every thread of the group arrives; orders threadgroup-memory accesses.
inline void barrier(SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_barrier();
}

/// barrier() among the group's first `threads` threads only (whole simdgroups; each of them
/// reaches it, no other thread does): the consumers of a specialized pipeline, which may
/// synchronize in its compute block while the producer runs on (a named barrier on CUDA; Metal
/// has none, so a kernel keeps it on a path Metal does not take).
inline void barrier_among(std::uint32_t threads, SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_barrier_among(threads);
}

/// Waits until every lane of the calling simdgroup arrives, and orders their threadgroup-memory
/// accesses: what one lane wrote before it, another lane of the simdgroup reads after it (a
/// simdgroup's own staging area needs no barrier of the group). Every lane of the simdgroup
/// reaches it.
inline void simdgroup_barrier(SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  detail::record_simdgroup_barrier();
}

}  // namespace iron::dsl
