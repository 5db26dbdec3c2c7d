/// Typed symbolic values: Expr<T> (an immutable SSA value) and Var<T> (a mutable local that
/// lives across loop iterations), their arithmetic, comparisons and casts. Mixing element types
/// without an explicit cast does not compile; a C++ `if` on a symbolic value does not compile.
#pragma once

#include <limits>
#include <type_traits>

#include "iron/core/source_location.hpp"
#include "iron/dsl/tracer.hpp"
#include "iron/dsl/types.hpp"

namespace iron::dsl {

template <Element T>
class Expr;

namespace detail {

ir::ValueId emit_const(DType type, double fvalue, std::int64_t ivalue);
ir::ValueId emit_unary(ir::OpKind kind, ir::ValueId a, DType type);
ir::ValueId emit_binary(ir::OpKind kind, ir::ValueId a, ir::ValueId b, DType type);
ir::ValueId emit_convert(ir::OpKind kind, ir::ValueId a, DType to);

/// A C++ literal usable where an Expr<T> is expected: integers anywhere, floating-point
/// literals only for float element types, bool only for boolean.
template <class L, class T>
concept LiteralFor = std::is_arithmetic_v<L> &&
    ((std::is_same_v<L, bool> && std::is_same_v<T, boolean>) ||
     (std::is_integral_v<L> && !std::is_same_v<L, bool> && !std::is_same_v<T, boolean>) ||
     (std::is_floating_point_v<L> && FloatElement<T>));

template <Element T, class L>
ir::ValueId literal(L value) {
  if constexpr (is_float(dtype_of<T>)) {
    return emit_const(dtype_of<T>, static_cast<double>(value), 0);
  } else {
    return emit_const(dtype_of<T>, 0.0, static_cast<std::int64_t>(value));
  }
}

}  // namespace detail

/// An immutable symbolic value of element type T. Assigning to an Expr rebinds the C++ handle;
/// use Var<T> for a value that changes inside a symbolic loop or branch.
template <Element T>
class Expr {
 public:
  using element = T;
  Expr() = default;
  /// The value with IR id `id` (an id, never a number: literals use the other constructor).
  static Expr wrap(ir::ValueId id) {
    Expr e;
    e.id_ = id;
    return e;
  }
  template <class L>
  requires detail::LiteralFor<L, T> Expr(L value)  // NOLINT(google-explicit-constructor)
      : id_(detail::literal<T>(value)) {}

  ir::ValueId id() const { return id_; }

  /// Converts the value (rounding floats, truncating floats to integers).
  template <Element U>
  Expr<U> cast(SourceLocation where = SourceLocation::current()) const {
    detail::Tracer::current().at(where);
    return Expr<U>::wrap(detail::emit_convert(ir::OpKind::Cast, id_, dtype_of<U>));
  }
  /// Reinterprets the bits as U, which must have the same size.
  template <Element U>
  Expr<U> bitcast(SourceLocation where = SourceLocation::current()) const {
    static_assert(dtype_size_of<U>() == dtype_size_of<T>(), "bitcast needs equal sizes");
    detail::Tracer::current().at(where);
    return Expr<U>::wrap(detail::emit_convert(ir::OpKind::Bitcast, id_, dtype_of<U>));
  }

  /// A symbolic value has no C++ truth value: branch with IRON_IF, or choose with select().
  explicit operator bool() const = delete;

 private:
  template <Element U>
  static constexpr std::size_t dtype_size_of() {
    constexpr DType t = dtype_of<U>;
    return t == DType::F32 || t == DType::I32 || t == DType::U32    ? 4
           : t == DType::F16 || t == DType::BF16 || t == DType::U16 ? 2
                                                                    : 1;
  }
  ir::ValueId id_ = ir::kNoValue;
};

template <Element T>
class Var;

namespace detail {

template <class X>
struct value_traits {
  static constexpr bool symbolic = false;
};
/// Expr<T>, Var<T> and classes derived from them (Constexpr<T>) are symbolic values.
template <class X>
requires requires {
  typename X::element;
} &&(std::is_base_of_v<Expr<typename X::element>, X> ||
     std::is_base_of_v<Var<typename X::element>, X>)struct value_traits<X> {
  static constexpr bool symbolic = true;
  using type = typename X::element;
};

}  // namespace detail

/// Expr<T>, Var<T> or anything derived from them (such as Constexpr<T>).
template <class X>
concept Symbolic = detail::value_traits<std::remove_cvref_t<X>>::symbolic;

template <Symbolic X>
using element_of = typename detail::value_traits<std::remove_cvref_t<X>>::type;

/// A mutable local: `Var<f32> acc = 0.0f; acc += v;` carries `acc` across loop iterations.
template <Element T>
class Var {
 public:
  using element = T;
  template <class X>
  requires(Symbolic<X> || detail::LiteralFor<X, T>)
      Var(const X& init,  // NOLINT(google-explicit-constructor)
          SourceLocation where = SourceLocation::current());
  Var(const Var& other, SourceLocation where = SourceLocation::current())
      : Var(Expr<T>(other), where) {}

  /// Reads the current value.
  operator Expr<T>() const;  // NOLINT(google-explicit-constructor)
  Expr<T> get() const { return Expr<T>(*this); }

  template <class X>
  Var& operator=(const X& value);
  Var& operator=(const Var& other) { return *this = Expr<T>(other); }

  ir::ValueId id() const { return var_; }
  explicit operator bool() const = delete;

 private:
  ir::ValueId var_ = ir::kNoValue;
};

namespace detail {

/// Converts a symbolic value or a literal to an Expr<T>.
template <Element T, class X>
Expr<T> to_expr(const X& x) {
  if constexpr (Symbolic<X>) {
    static_assert(std::is_same_v<element_of<X>, T>,
                  "Iron: operands have different element types; convert one with .cast<U>()");
    if constexpr (std::is_base_of_v<Var<T>, X>) {
      return Expr<T>(x);
    } else {
      return static_cast<const Expr<T>&>(x);
    }
  } else {
    static_assert(LiteralFor<X, T>,
                  "Iron: this literal cannot stand for a value of this element type (a "
                  "floating-point literal needs a float type; bool needs boolean)");
    return Expr<T>(x);
  }
}

/// element_of<X> when X is symbolic, else Fallback.
template <class X, class Fallback>
struct element_or {
  using type = Fallback;
};
template <Symbolic X, class Fallback>
struct element_or<X, Fallback> {
  using type = element_of<X>;
};

/// The element type of an operation on `A` and `B`, at least one of them symbolic.
template <class A, class B>
struct common_element {};  // neither symbolic: no type, so the operators drop out quietly
template <Symbolic A, class B>
struct common_element<A, B> {
  using type = element_of<A>;
};
template <class A, Symbolic B>
requires(!Symbolic<A>) struct common_element<A, B> {
  using type = element_of<B>;
};

void emit_var_store(ir::ValueId var, ir::ValueId value);
ir::ValueId emit_var_decl(ir::ValueId init, DType type);
ir::ValueId emit_var_load(ir::ValueId var, DType type);

}  // namespace detail

template <Element T>
template <class X>
requires(Symbolic<X> || detail::LiteralFor<X, T>) Var<T>::Var(const X& init, SourceLocation where) {
  detail::Tracer::current().at(where);
  var_ = detail::emit_var_decl(detail::to_expr<T>(init).id(), dtype_of<T>);
}

template <Element T>
Var<T>::operator Expr<T>() const {
  return Expr<T>::wrap(detail::emit_var_load(var_, dtype_of<T>));
}

template <Element T>
template <class X>
Var<T>& Var<T>::operator=(const X& value) {
  detail::emit_var_store(var_, detail::to_expr<T>(value).id());
  return *this;
}

/// Either operand symbolic; the other symbolic of the same element type or a fitting literal.
template <class A, class B>
concept Operands = Symbolic<A> || Symbolic<B>;

template <class A, class B>
using common_t = typename detail::common_element<A, B>::type;

/// cast<U>(x): the same as x.cast<U>(), without `.template` inside a kernel template.
template <Element U, Symbolic X>
Expr<U> cast(const X& x, SourceLocation where = SourceLocation::current()) {
  return detail::to_expr<element_of<X>>(x).template cast<U>(where);
}
/// bitcast<U>(x): reinterprets the bits of x as U (same size).
template <Element U, Symbolic X>
Expr<U> bitcast(const X& x, SourceLocation where = SourceLocation::current()) {
  return detail::to_expr<element_of<X>>(x).template bitcast<U>(where);
}

/// Positive infinity, for initialising a running minimum or maximum.
inline constexpr float infinity = std::numeric_limits<float>::infinity();

#define IRON_BINARY_OP(op, kind)                                                           \
  template <class A, class B>                                                              \
  requires Operands<A, B> Expr<common_t<A, B>>                                             \
  operator op(const A& a, const B& b) {                                                    \
    using T = common_t<A, B>;                                                              \
    return Expr<T>::wrap(detail::emit_binary(ir::OpKind::kind, detail::to_expr<T>(a).id(), \
                                             detail::to_expr<T>(b).id(), dtype_of<T>));    \
  }
IRON_BINARY_OP(+, Add)
IRON_BINARY_OP(-, Sub)
IRON_BINARY_OP(*, Mul)
IRON_BINARY_OP(/, Div)
IRON_BINARY_OP(%, Rem)
IRON_BINARY_OP(&, And)
IRON_BINARY_OP(|, Or)
IRON_BINARY_OP(^, Xor)
IRON_BINARY_OP(<<, Shl)
IRON_BINARY_OP(>>, Shr)
#undef IRON_BINARY_OP

#define IRON_COMPARE_OP(op, kind)                                                                \
  template <class A, class B>                                                                    \
  requires Operands<A, B> Expr<boolean>                                                          \
  operator op(const A& a, const B& b) {                                                          \
    using T = common_t<A, B>;                                                                    \
    return Expr<boolean>::wrap(detail::emit_binary(ir::OpKind::kind, detail::to_expr<T>(a).id(), \
                                                   detail::to_expr<T>(b).id(), DType::Bool));    \
  }
IRON_COMPARE_OP(==, Eq)
IRON_COMPARE_OP(!=, Ne)
IRON_COMPARE_OP(<, Lt)
IRON_COMPARE_OP(<=, Le)
IRON_COMPARE_OP(>, Gt)
IRON_COMPARE_OP(>=, Ge)
#undef IRON_COMPARE_OP

/// Logical and/or on boolean values. Both sides are always evaluated (no short circuit).
template <class A, class B>
requires Operands<A, B> && std::is_same_v<common_t<A, B>, boolean> Expr<boolean>
operator&&(const A& a, const B& b) { return a & b; }
template <class A, class B>
requires Operands<A, B> && std::is_same_v<common_t<A, B>, boolean> Expr<boolean>
operator||(const A& a, const B& b) { return a | b; }

template <Symbolic A>
Expr<element_of<A>> operator-(const A& a) {
  using T = element_of<A>;
  return Expr<T>::wrap(
      detail::emit_unary(ir::OpKind::Neg, detail::to_expr<T>(a).id(), dtype_of<T>));
}
template <Symbolic A>
Expr<element_of<A>> operator!(const A& a) {
  using T = element_of<A>;
  static_assert(std::is_same_v<T, boolean>, "Iron: ! applies to boolean values; use ~ for bits");
  return Expr<T>::wrap(
      detail::emit_unary(ir::OpKind::Not, detail::to_expr<T>(a).id(), dtype_of<T>));
}
template <Symbolic A>
Expr<element_of<A>> operator~(const A& a) {
  using T = element_of<A>;
  static_assert(IntegerElement<T>, "Iron: ~ applies to integer values");
  return Expr<T>::wrap(
      detail::emit_unary(ir::OpKind::Not, detail::to_expr<T>(a).id(), dtype_of<T>));
}

#define IRON_COMPOUND_OP(op, binop)             \
  template <Element T, class X>                 \
  Var<T>& operator op(Var<T>& v, const X& x) {  \
    v = Expr<T>(v) binop detail::to_expr<T>(x); \
    return v;                                   \
  }
IRON_COMPOUND_OP(+=, +)
IRON_COMPOUND_OP(-=, -)
IRON_COMPOUND_OP(*=, *)
IRON_COMPOUND_OP(/=, /)
IRON_COMPOUND_OP(%=, %)
IRON_COMPOUND_OP(&=, &)
IRON_COMPOUND_OP(|=, |)
IRON_COMPOUND_OP(^=, ^)
IRON_COMPOUND_OP(<<=, <<)
IRON_COMPOUND_OP(>>=, >>)
#undef IRON_COMPOUND_OP

}  // namespace iron::dsl
