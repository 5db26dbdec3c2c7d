/// Typed symbolic values: Expr<T> (an immutable SSA value) and Var<T> (a mutable local that
/// lives across loop iterations), their arithmetic, comparisons and casts. Every operation
/// records the source line of the C++ expression that made it. Mixing element types without an
/// explicit cast does not compile, and the error names the user's line first; a C++ `if` on a
/// symbolic value does not compile.
#pragma once

#include <limits>
#include <type_traits>

#include "iron/core/source_location.hpp"
#include "iron/dsl/tracer.hpp"
#include "iron/dsl/types.hpp"

namespace iron::dsl {

template <Element T>
class Expr;
template <Element T>
class Var;
template <Element T>
class RegsElement;

namespace detail {

ir::ValueId record_const(DType type, double fvalue, std::int64_t ivalue);
ir::ValueId record_unary(ir::OpKind kind, ir::ValueId a, DType type);
ir::ValueId record_binary(ir::OpKind kind, ir::ValueId a, ir::ValueId b, DType type);
ir::ValueId record_convert(ir::OpKind kind, ir::ValueId a, DType to);
void record_var_store(ir::ValueId var, ir::ValueId value);
ir::ValueId record_var_decl(ir::ValueId init, DType type);
ir::ValueId record_var_load(ir::ValueId var, DType type);
ir::ValueId record_regs_load(ir::ValueId array, ir::ValueId index, DType type);

/// Makes `where` the location of the ops recorded next.
inline void at(const SourceLocation& where) { Tracer::current().at(where); }

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
    return record_const(dtype_of<T>, static_cast<double>(value), 0);
  } else {
    return record_const(dtype_of<T>, 0.0, static_cast<std::int64_t>(value));
  }
}

template <Element T>
class Operations;

// The return or parameter types of the deleted overloads that reject a misuse: the compiler
// prints them in the error it reports at the user's line. Cast one operand with cast<U>(x).
struct operands_have_different_element_types {};
struct literal_cannot_stand_for_this_element_type {};

}  // namespace detail

/// An immutable symbolic value of element type T. Assigning to an Expr rebinds the C++ handle;
/// use Var<T> for a value that changes inside a symbolic loop or branch. It has no C++ truth
/// value (no conversion to bool, so a C++ `if` on it does not compile): branch with IRON_IF, or
/// choose with select(). A deleted `operator bool` would be a candidate of the built-in `&&`,
/// `||` and `!`, making the DSL's own ones ambiguous.
template <Element T>
class Expr : public detail::Operations<T> {
 public:
  using element = T;
  Expr() = default;
  /// The value with IR id `id` (an id, never a number: literals use the other constructor).
  static Expr wrap(ir::ValueId id) {
    Expr e;
    e.id_ = id;
    return e;
  }
  /// A literal as a constant of type T.
  template <class L>
  requires detail::LiteralFor<L, T> Expr(L value,  // NOLINT(google-explicit-constructor)
                                         SourceLocation where = SourceLocation::current()) {
    detail::at(where);
    id_ = detail::literal<T>(value);
  }
  /// The current value of a Var.
  Expr(const Var<T>& var,  // NOLINT(google-explicit-constructor)
       SourceLocation where = SourceLocation::current());

  ir::ValueId id() const { return id_; }

  /// Converts the value (rounding floats, truncating floats to integers).
  template <Element U>
  Expr<U> cast(SourceLocation where = SourceLocation::current()) const {
    detail::at(where);
    return Expr<U>::wrap(detail::record_convert(ir::OpKind::Cast, id_, dtype_of<U>));
  }
  /// Reinterprets the bits as U, which must have the same size.
  template <Element U>
  Expr<U> bitcast(SourceLocation where = SourceLocation::current()) const {
    static_assert(dtype_size_of<U>() == dtype_size_of<T>(), "bitcast needs equal sizes");
    detail::at(where);
    return Expr<U>::wrap(detail::record_convert(ir::OpKind::Bitcast, id_, dtype_of<U>));
  }

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

namespace detail {

/// X can stand for a value of element type T: a symbolic value of type T or a fitting literal.
template <class X, class T>
concept Fits = LiteralFor<X, T> ||(Symbolic<X>&& std::is_same_v<element_of<X>, T>);

/// X is a symbolic value or a literal that cannot stand for a value of type T.
template <class X, class T>
concept Unfit = (Symbolic<X> || std::is_arithmetic_v<X>)&&!Fits<X, T>;

/// The tag a rejected operand of type X (for element type T) is reported with.
template <class X, class T>
using unfit_tag = std::conditional_t<Symbolic<X>, operands_have_different_element_types,
                                     literal_cannot_stand_for_this_element_type>;

/// One operand of a DSL operator, converted implicitly from a value or a literal of element
/// type T. Operator functions cannot take a defaulted SourceLocation, so the conversion records
/// where the operand is written, and the operator's op takes that line.
template <Element T>
class Operand {
 public:
  Operand(const Expr<T>& e,  // NOLINT(google-explicit-constructor)
          SourceLocation where = SourceLocation::current())
      : id_(e.id()), where_(where) {}
  Operand(const Var<T>& v,  // NOLINT(google-explicit-constructor)
          SourceLocation where = SourceLocation::current())
      : where_(where) {
    at(where);
    id_ = record_var_load(v.id(), dtype_of<T>);
  }
  Operand(const RegsElement<T>& r,  // NOLINT(google-explicit-constructor)
          SourceLocation where = SourceLocation::current())
      : where_(where) {
    at(where);
    id_ = record_regs_load(r.array(), r.index(), dtype_of<T>);
  }
  template <class L>
  requires LiteralFor<L, T> Operand(L value,  // NOLINT(google-explicit-constructor)
                                    SourceLocation where = SourceLocation::current())
      : where_(where) {
    at(where);
    id_ = literal<T>(value);
  }
  ir::ValueId id() const { return id_; }
  const SourceLocation& where() const { return where_; }

 private:
  ir::ValueId id_ = ir::kNoValue;
  SourceLocation where_;
};

/// `a op b` at the line of `a`.
template <Element R, Element T>
Expr<R> binary(ir::OpKind kind, const Operand<T>& a, const Operand<T>& b) {
  at(a.where());
  return Expr<R>::wrap(record_binary(kind, a.id(), b.id(), dtype_of<R>));
}
template <Element T>
Expr<T> unary(ir::OpKind kind, const Operand<T>& a) {
  at(a.where());
  return Expr<T>::wrap(record_unary(kind, a.id(), dtype_of<T>));
}

/// The operators of Expr<T> and Var<T>, as hidden friends found through either class: both
/// operands convert to Operand<T>, so each op records its own line.
template <Element T>
class Operations {
#define IRON_BINARY_OP(op, kind)                           \
  friend Expr<T> operator op(Operand<T> a, Operand<T> b) { \
    return binary<T>(ir::OpKind::kind, a, b);              \
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
#define IRON_COMPARE_OP(op, kind)                                \
  friend Expr<boolean> operator op(Operand<T> a, Operand<T> b) { \
    return binary<boolean>(ir::OpKind::kind, a, b);              \
  }
  IRON_COMPARE_OP(==, Eq)
  IRON_COMPARE_OP(!=, Ne)
  IRON_COMPARE_OP(<, Lt)
  IRON_COMPARE_OP(<=, Le)
  IRON_COMPARE_OP(>, Gt)
  IRON_COMPARE_OP(>=, Ge)
#undef IRON_COMPARE_OP

  /// Logical and/or on boolean values. Both sides are always evaluated (no short circuit).
  friend Expr<T> operator&&(Operand<T> a, Operand<T> b) requires std::is_same_v<T, boolean> {
    return binary<T>(ir::OpKind::And, a, b);
  }
  friend Expr<T> operator||(Operand<T> a, Operand<T> b) requires std::is_same_v<T, boolean> {
    return binary<T>(ir::OpKind::Or, a, b);
  }

  friend Expr<T> operator-(Operand<T> a) { return unary(ir::OpKind::Neg, a); }
  friend Expr<T> operator!(Operand<T> a) {
    static_assert(std::is_same_v<T, boolean>, "Iron: ! applies to boolean values; use ~ for bits");
    return unary(ir::OpKind::Not, a);
  }
  friend Expr<T> operator~(Operand<T> a) {
    static_assert(IntegerElement<T>, "Iron: ~ applies to integer values");
    return unary(ir::OpKind::Not, a);
  }
};

}  // namespace detail

/// A mutable local: `Var<f32> acc = 0.0f; acc += v;` carries `acc` across loop iterations.
template <Element T>
class Var : public detail::Operations<T> {
 public:
  using element = T;
  template <class X>
  requires detail::Fits<X, T> Var(const X& init,  // NOLINT(google-explicit-constructor)
                                  SourceLocation where = SourceLocation::current());
  /// An initial value of another element type does not compile: cast it first.
  template <class X>
  requires detail::Unfit<X, T> Var(const X& init, detail::unfit_tag<X, T> = {})
  = delete;
  Var(const Var& other, SourceLocation where = SourceLocation::current());

  /// Reads the current value.
  Expr<T> get(SourceLocation where = SourceLocation::current()) const { return {*this, where}; }

  Var& operator=(detail::Operand<T> value) {
    detail::at(value.where());
    detail::record_var_store(var_, value.id());
    return *this;
  }
  template <class X>
  requires detail::Unfit<X, T> detail::unfit_tag<X, T>
  operator=(const X& value) = delete;
  /// `a = b` between two Vars stores b's value. An assignment operator has no place for a source
  /// location, so the load and the store keep the line of the DSL call before them; `a = b.get()`
  /// gives them the assignment's own line. (A non-const parameter: a `const Var&` one would make
  /// `a = expr` ambiguous, an Expr converting both to a Var and to an operand.)
  Var& operator=(Var& other) {
    detail::record_var_store(var_, detail::record_var_load(other.var_, dtype_of<T>));
    return *this;
  }

#define IRON_COMPOUND_OP(op, kind)                                                    \
  Var& operator op(detail::Operand<T> x) {                                            \
    const Expr<T> v =                                                                 \
        detail::binary<T>(ir::OpKind::kind, detail::Operand<T>(*this, x.where()), x); \
    detail::record_var_store(var_, v.id()); /* at x's line, as binary() left it */    \
    return *this;                                                                     \
  }                                                                                   \
  template <class X>                                                                  \
  requires detail::Unfit<X, T> detail::unfit_tag<X, T>                                \
  operator op(const X& x) = delete;
  IRON_COMPOUND_OP(+=, Add)
  IRON_COMPOUND_OP(-=, Sub)
  IRON_COMPOUND_OP(*=, Mul)
  IRON_COMPOUND_OP(/=, Div)
  IRON_COMPOUND_OP(%=, Rem)
  IRON_COMPOUND_OP(&=, And)
  IRON_COMPOUND_OP(|=, Or)
  IRON_COMPOUND_OP(^=, Xor)
  IRON_COMPOUND_OP(<<=, Shl)
  IRON_COMPOUND_OP(>>=, Shr)
#undef IRON_COMPOUND_OP

  ir::ValueId id() const { return var_; }

 private:
  ir::ValueId var_ = ir::kNoValue;
};

namespace detail {

/// Converts a symbolic value or a literal to an Expr<T>, at the location already set.
template <Element T, class X>
Expr<T> to_expr(const X& x) {
  if constexpr (Symbolic<X>) {
    static_assert(std::is_same_v<element_of<X>, T>,
                  "Iron: operands have different element types; convert one with .cast<U>()");
    if constexpr (std::is_base_of_v<Var<T>, X>) {
      return Expr<T>::wrap(record_var_load(x.id(), dtype_of<T>));
    } else {
      return static_cast<const Expr<T>&>(x);
    }
  } else {
    static_assert(LiteralFor<X, T>,
                  "Iron: this literal cannot stand for a value of this element type (a "
                  "floating-point literal needs a float type; bool needs boolean)");
    return Expr<T>::wrap(literal<T>(x));
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

}  // namespace detail

template <Element T>
Expr<T>::Expr(const Var<T>& var, SourceLocation where) {
  detail::at(where);
  id_ = detail::record_var_load(var.id(), dtype_of<T>);
}

template <Element T>
template <class X>
requires detail::Fits<X, T> Var<T>::Var(const X& init, SourceLocation where) {
  detail::at(where);
  var_ = detail::record_var_decl(detail::to_expr<T>(init).id(), dtype_of<T>);
}

template <Element T>
Var<T>::Var(const Var& other, SourceLocation where) {
  detail::at(where);
  var_ = detail::record_var_decl(detail::to_expr<T>(other).id(), dtype_of<T>);
}

/// Either operand symbolic; the other symbolic of the same element type or a fitting literal.
template <class A, class B>
concept Operands = Symbolic<A> || Symbolic<B>;

template <class A, class B>
using common_t = typename detail::common_element<A, B>::type;

namespace detail {

/// A and B can be the operands of one operation: one symbolic, the other of its element type.
template <class A, class B>
concept Compatible = Operands<A, B> && Fits<A, common_t<A, B>> && Fits<B, common_t<A, B>>;

/// A and B cannot: two element types, or a literal that cannot stand for the other's type.
template <class A, class B>
concept Mismatched = Operands<A, B> &&(Unfit<A, common_t<A, B>> || Unfit<B, common_t<A, B>>);
template <class A, class B>
concept DifferentElements = Symbolic<A> && Symbolic<B> && Mismatched<A, B>;
template <class A, class B>
concept UnfitLiteral = Mismatched<A, B> && !(Symbolic<A> && Symbolic<B>);

/// The tag a rejected pair of operands is reported with.
template <class A, class B>
using mismatch_tag =
    std::conditional_t<Symbolic<A> && Symbolic<B>, operands_have_different_element_types,
                       literal_cannot_stand_for_this_element_type>;

}  // namespace detail

/// cast<U>(x): the same as x.cast<U>(), without `.template` inside a kernel template.
template <Element U, Symbolic X>
Expr<U> cast(const X& x, SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  return detail::to_expr<element_of<X>>(x).template cast<U>(where);
}
/// bitcast<U>(x): reinterprets the bits of x as U (same size).
template <Element U, Symbolic X>
Expr<U> bitcast(const X& x, SourceLocation where = SourceLocation::current()) {
  detail::at(where);
  return detail::to_expr<element_of<X>>(x).template bitcast<U>(where);
}

/// Positive infinity, for initialising a running minimum or maximum.
inline constexpr float infinity = std::numeric_limits<float>::infinity();

// Operands of two element types, or a literal that cannot stand for the other operand's type,
// select these deleted overloads: the compiler reports the user's line first, and the return
// type names the mistake.
#define IRON_REJECT_MISMATCH(op)                                   \
  template <class A, class B>                                      \
  detail::operands_have_different_element_types operator op(       \
      const A&, const B&) requires detail::DifferentElements<A, B> \
  = delete;                                                        \
  template <class A, class B>                                      \
  detail::literal_cannot_stand_for_this_element_type operator op(  \
      const A&, const B&) requires detail::UnfitLiteral<A, B>      \
  = delete;
IRON_REJECT_MISMATCH(+)
IRON_REJECT_MISMATCH(-)
IRON_REJECT_MISMATCH(*)
IRON_REJECT_MISMATCH(/)
IRON_REJECT_MISMATCH(%)
IRON_REJECT_MISMATCH(&)
IRON_REJECT_MISMATCH(|)
IRON_REJECT_MISMATCH(^)
IRON_REJECT_MISMATCH(<<)
IRON_REJECT_MISMATCH(>>)
IRON_REJECT_MISMATCH(==)
IRON_REJECT_MISMATCH(!=)
IRON_REJECT_MISMATCH(<)
IRON_REJECT_MISMATCH(<=)
IRON_REJECT_MISMATCH(>)
IRON_REJECT_MISMATCH(>=)
IRON_REJECT_MISMATCH(&&)
IRON_REJECT_MISMATCH(||)
#undef IRON_REJECT_MISMATCH

}  // namespace iron::dsl
