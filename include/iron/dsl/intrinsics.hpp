/// DSL intrinsics: thread geometry built-ins, math, select/fma/min/max, simdgroup operations,
/// threadgroup reductions and barriers.
#pragma once

#include "iron/core/source_location.hpp"
#include "iron/dsl/expr.hpp"

namespace iron::dsl {

namespace detail {
ir::ValueId emit_builtin(ir::Builtin b, int axis);
ir::ValueId emit_op(ir::OpKind kind, std::initializer_list<ir::ValueId> args, DType type);
void emit_barrier();
}  // namespace detail

// ── Built-in indices (all u32) ───────────────────────────────────────────────────────────────

#define IRON_AXIS_BUILTIN(fn, kind)                                        \
  template <int Axis>                                                      \
  Expr<u32> fn(SourceLocation where = SourceLocation::current()) {         \
    static_assert(Axis >= 0 && Axis <= 2, "Iron: axis must be 0, 1 or 2"); \
    detail::Tracer::current().at(where);                                   \
    return Expr<u32>::wrap(detail::emit_builtin(ir::Builtin::kind, Axis)); \
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
    detail::Tracer::current().at(where);                                  \
    return Expr<u32>::wrap(detail::emit_builtin(ir::Builtin::kind, 0));   \
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
  return grid_groups<Axis>(where) * group_size<Axis>(where);
}

/// The work index of the declared mode: the global thread id for elementwise kernels, the
/// group id for reduction and tiled kernels. Declare dispatch(...) before calling it.
template <int Axis>
Expr<u32> program_id(SourceLocation where = SourceLocation::current()) {
  const bool per_thread = detail::Tracer::current().lock_mode() == ir::DispatchMode::Elementwise;
  return per_thread ? global_id<Axis>(where) : group_id<Axis>(where);
}

// ── Math ─────────────────────────────────────────────────────────────────────────────────────

#define IRON_UNARY_MATH(fn, kind, requirement, message)                                \
  template <Symbolic X>                                                                \
  Expr<element_of<X>> fn(const X& x) {                                                 \
    using T = element_of<X>;                                                           \
    static_assert(requirement, message);                                               \
    return Expr<T>::wrap(                                                              \
        detail::emit_op(ir::OpKind::kind, {detail::to_expr<T>(x).id()}, dtype_of<T>)); \
  }
#define IRON_FLOAT_MATH(fn, kind) \
  IRON_UNARY_MATH(fn, kind, FloatElement<T>, "Iron: " #fn " needs a float value; cast first")
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
IRON_UNARY_MATH(abs, Abs, FloatElement<T> || dtype_of<T> == DType::I32 || dtype_of<T> == DType::I8,
                "Iron: abs needs a float or signed integer value")
#undef IRON_FLOAT_MATH
#undef IRON_UNARY_MATH

#define IRON_BINARY_MATH(fn, kind, requirement, message)                                           \
  template <class A, class B>                                                                      \
  requires Operands<A, B> Expr<common_t<A, B>> fn(const A& a, const B& b) {                        \
    using T = common_t<A, B>;                                                                      \
    static_assert(requirement, message);                                                           \
    return Expr<T>::wrap(detail::emit_op(                                                          \
        ir::OpKind::kind, {detail::to_expr<T>(a).id(), detail::to_expr<T>(b).id()}, dtype_of<T>)); \
  }
IRON_BINARY_MATH(pow, Pow, FloatElement<T>, "Iron: pow needs float values")
IRON_BINARY_MATH(atan2, Atan2, FloatElement<T>, "Iron: atan2 needs float values")
IRON_BINARY_MATH(min, Min, (!std::is_same_v<T, boolean>), "Iron: min needs numbers")
IRON_BINARY_MATH(max, Max, (!std::is_same_v<T, boolean>), "Iron: max needs numbers")
#undef IRON_BINARY_MATH

/// a * b + c with one rounding.
template <class A, class B, class C>
requires Operands<A, B> || Symbolic<C>
auto fma(const A& a, const B& b, const C& c) {
  using T = typename detail::element_or<
      A, typename detail::element_or<B, typename detail::element_or<C, void>::type>::type>::type;
  static_assert(FloatElement<T>, "Iron: fma needs float values");
  return Expr<T>::wrap(detail::emit_op(
      ir::OpKind::Fma,
      {detail::to_expr<T>(a).id(), detail::to_expr<T>(b).id(), detail::to_expr<T>(c).id()},
      dtype_of<T>));
}

/// `cond ? a : b` per thread. Both operands are evaluated: a load in either one always runs,
/// so an index that is only valid when `cond` holds needs IRON_IF instead.
template <class A, class B>
requires Operands<A, B> Expr<common_t<A, B>> select(const Expr<boolean>& cond, const A& a,
                                                    const B& b) {
  using T = common_t<A, B>;
  return Expr<T>::wrap(detail::emit_op(
      ir::OpKind::Select, {cond.id(), detail::to_expr<T>(a).id(), detail::to_expr<T>(b).id()},
      dtype_of<T>));
}

// ── Simdgroup and threadgroup collectives ───────────────────────────────────────────────────

#define IRON_COLLECTIVE(fn, kind)                                                        \
  template <Symbolic X>                                                                  \
  Expr<element_of<X>> fn(const X& x, SourceLocation where = SourceLocation::current()) { \
    using T = element_of<X>;                                                             \
    detail::Tracer::current().at(where);                                                 \
    return Expr<T>::wrap(                                                                \
        detail::emit_op(ir::OpKind::kind, {detail::to_expr<T>(x).id()}, dtype_of<T>));   \
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
    detail::Tracer::current().at(where);                                                 \
    return Expr<T>::wrap(detail::emit_op(                                                \
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
  detail::Tracer::current().at(where);
  detail::emit_barrier();
}

}  // namespace iron::dsl
