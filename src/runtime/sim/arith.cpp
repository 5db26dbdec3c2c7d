/// Lane-wise typed arithmetic: floats computed in f32 and rounded to their type, integers wrapped.
#include "arith.hpp"

#include <cmath>
#include <functional>

namespace iron::runtime::sim {
namespace {

using ir::OpKind;

template <class F>
void float_unary(DType t, Active active, Slot* r, const Slot* a, F fn) {
  with_float_type(t, [&](auto d) {
    for (std::uint32_t i : active) r[i] = fit_float<decltype(d)::value>(fn(as_float(a[i])));
  });
}

// fn(tag, x) gets the raw integer bits and the type tag, so it can tell signed from unsigned.
template <class F>
void int_unary(DType t, Active active, Slot* r, const Slot* a, F fn) {
  with_int_type(t, [&](auto d) {
    for (std::uint32_t i : active) r[i] = wrap_int<decltype(d)::value>(fn(d, a[i]));
  });
}

template <class F>
void float_binary(DType t, Active active, Slot* r, const Slot* a, const Slot* b, F fn) {
  with_float_type(t, [&](auto d) {
    for (std::uint32_t i : active) {
      r[i] = fit_float<decltype(d)::value>(fn(as_float(a[i]), as_float(b[i])));
    }
  });
}

template <class F>
void int_binary(DType t, Active active, Slot* r, const Slot* a, const Slot* b, F fn) {
  with_int_type(t, [&](auto d) {
    for (std::uint32_t i : active) r[i] = wrap_int<decltype(d)::value>(fn(d, a[i], b[i]));
  });
}

template <class T>
T as(Slot s) {
  if constexpr (std::is_same_v<T, float>) return as_float(s);
  return static_cast<T>(s);
}

template <class T, class Cmp>
void compare_as(Active active, Slot* r, const Slot* a, const Slot* b, Cmp cmp) {
  for (std::uint32_t i : active) r[i] = cmp(as<T>(a[i]), as<T>(b[i])) ? 1u : 0u;
}

template <class Cmp>
void compare_typed(DType t, Active active, Slot* r, const Slot* a, const Slot* b, Cmp cmp) {
  if (is_float(t)) return compare_as<float>(active, r, a, b, cmp);
  if (is_signed_int(t)) return compare_as<std::int32_t>(active, r, a, b, cmp);
  compare_as<std::uint32_t>(active, r, a, b, cmp);
}

template <class D>
constexpr bool is_signed_tag(D) {
  return kSigned<D::value>;
}

std::uint32_t int_div(bool is_signed, std::uint32_t x, std::uint32_t y) {
  if (y == 0) return 0;
  if (!is_signed) return x / y;
  if (static_cast<std::int32_t>(y) == -1) return 0u - x;  // INT_MIN / -1 wraps
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(x) / static_cast<std::int32_t>(y));
}

std::uint32_t int_rem(bool is_signed, std::uint32_t x, std::uint32_t y) {
  if (y == 0) return 0;
  if (!is_signed) return x % y;
  if (static_cast<std::int32_t>(y) == -1) return 0;
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(x) % static_cast<std::int32_t>(y));
}

bool int_less(bool is_signed, std::uint32_t x, std::uint32_t y) {
  return is_signed ? static_cast<std::int32_t>(x) < static_cast<std::int32_t>(y) : x < y;
}

void float_unary_op(OpKind k, DType t, Active active, Slot* r, const Slot* a) {
  switch (k) {
    case OpKind::Neg:
      return float_unary(t, active, r, a, [](float x) { return -x; });
    case OpKind::Sqrt:
      return float_unary(t, active, r, a, [](float x) { return std::sqrt(x); });
    case OpKind::Rsqrt:
      return float_unary(t, active, r, a, [](float x) { return 1.0f / std::sqrt(x); });
    case OpKind::Exp:
      return float_unary(t, active, r, a, [](float x) { return std::exp(x); });
    case OpKind::Exp2:
      return float_unary(t, active, r, a, [](float x) { return std::exp2(x); });
    case OpKind::Log:
      return float_unary(t, active, r, a, [](float x) { return std::log(x); });
    case OpKind::Log2:
      return float_unary(t, active, r, a, [](float x) { return std::log2(x); });
    case OpKind::Sin:
      return float_unary(t, active, r, a, [](float x) { return std::sin(x); });
    case OpKind::Cos:
      return float_unary(t, active, r, a, [](float x) { return std::cos(x); });
    case OpKind::Tanh:
      return float_unary(t, active, r, a, [](float x) { return std::tanh(x); });
    case OpKind::Erf:
      return float_unary(t, active, r, a, [](float x) { return std::erf(x); });
    case OpKind::Abs:
      return float_unary(t, active, r, a, [](float x) { return std::fabs(x); });
    case OpKind::Recip:
      return float_unary(t, active, r, a, [](float x) { return 1.0f / x; });
    case OpKind::Floor:
      return float_unary(t, active, r, a, [](float x) { return std::floor(x); });
    case OpKind::Ceil:
      return float_unary(t, active, r, a, [](float x) { return std::ceil(x); });
    default:
      internal_error("unary op undefined on floats", __FILE__, __LINE__);
  }
}

void int_unary_op(OpKind k, DType t, Active active, Slot* r, const Slot* a) {
  switch (k) {
    case OpKind::Neg:
      return int_unary(t, active, r, a, [](auto, std::uint32_t x) { return 0u - x; });
    case OpKind::Not:
      if (t == DType::Bool) {
        return int_unary(t, active, r, a, [](auto, std::uint32_t x) { return x ^ 1u; });
      }
      return int_unary(t, active, r, a, [](auto, std::uint32_t x) { return ~x; });
    case OpKind::Abs:
      return int_unary(t, active, r, a, [](auto d, std::uint32_t x) {
        return is_signed_tag(d) && static_cast<std::int32_t>(x) < 0 ? 0u - x : x;
      });
    default:
      internal_error("unary op undefined on integers", __FILE__, __LINE__);
  }
}

void float_binary_op(OpKind k, DType t, Active active, Slot* r, const Slot* a, const Slot* b) {
  switch (k) {
    case OpKind::Add:
      return float_binary(t, active, r, a, b, std::plus<>());
    case OpKind::Sub:
      return float_binary(t, active, r, a, b, std::minus<>());
    case OpKind::Mul:
      return float_binary(t, active, r, a, b, std::multiplies<>());
    case OpKind::Div:
      return float_binary(t, active, r, a, b, std::divides<>());
    case OpKind::Rem:
      return float_binary(t, active, r, a, b, [](float x, float y) { return std::fmod(x, y); });
    case OpKind::Min:
      return float_binary(t, active, r, a, b, [](float x, float y) { return std::fmin(x, y); });
    case OpKind::Max:
      return float_binary(t, active, r, a, b, [](float x, float y) { return std::fmax(x, y); });
    case OpKind::Pow:
      return float_binary(t, active, r, a, b, [](float x, float y) { return std::pow(x, y); });
    case OpKind::Atan2:
      return float_binary(t, active, r, a, b, [](float x, float y) { return std::atan2(x, y); });
    default:
      internal_error("binary op undefined on floats", __FILE__, __LINE__);
  }
}

void int_binary_op(OpKind k, DType t, Active active, Slot* r, const Slot* a, const Slot* b) {
  using U = std::uint32_t;
  switch (k) {
    case OpKind::Add:
      return int_binary(t, active, r, a, b, [](auto, U x, U y) { return x + y; });
    case OpKind::Sub:
      return int_binary(t, active, r, a, b, [](auto, U x, U y) { return x - y; });
    case OpKind::Mul:
      return int_binary(t, active, r, a, b, [](auto, U x, U y) { return x * y; });
    case OpKind::Div:
      return int_binary(t, active, r, a, b,
                        [](auto d, U x, U y) { return int_div(is_signed_tag(d), x, y); });
    case OpKind::Rem:
      return int_binary(t, active, r, a, b,
                        [](auto d, U x, U y) { return int_rem(is_signed_tag(d), x, y); });
    case OpKind::Min:
      return int_binary(t, active, r, a, b,
                        [](auto d, U x, U y) { return int_less(is_signed_tag(d), y, x) ? y : x; });
    case OpKind::Max:
      return int_binary(t, active, r, a, b,
                        [](auto d, U x, U y) { return int_less(is_signed_tag(d), x, y) ? y : x; });
    case OpKind::And:
      return int_binary(t, active, r, a, b, [](auto, U x, U y) { return x & y; });
    case OpKind::Or:
      return int_binary(t, active, r, a, b, [](auto, U x, U y) { return x | y; });
    case OpKind::Xor:
      return int_binary(t, active, r, a, b, [](auto, U x, U y) { return x ^ y; });
    case OpKind::Shl:
      return int_binary(t, active, r, a, b, [](auto, U x, U y) { return x << (y & 31u); });
    case OpKind::Shr:
      return int_binary(t, active, r, a, b, [](auto d, U x, U y) {
        if (is_signed_tag(d)) return static_cast<U>(static_cast<std::int32_t>(x) >> (y & 31u));
        return x >> (y & 31u);
      });
    default:
      internal_error("binary op undefined on integers", __FILE__, __LINE__);
  }
}

}  // namespace

bool arith_defined(OpKind k, DType t) {
  const bool f = is_float(t);
  const bool i = is_integer(t);
  const bool b = t == DType::Bool;
  if (ir::op_class(k) == ir::OpClass::Compare) return true;
  switch (k) {
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Rem:
    case OpKind::Min:
    case OpKind::Max:
    case OpKind::Fma:
      return f || i;
    case OpKind::Not:
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor:
      return i || b;
    case OpKind::Shl:
    case OpKind::Shr:
      return i;
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Exp:
    case OpKind::Exp2:
    case OpKind::Log:
    case OpKind::Log2:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tanh:
    case OpKind::Erf:
    case OpKind::Recip:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Pow:
    case OpKind::Atan2:
      return f;
    default:
      return false;
  }
}

void run_unary(OpKind k, DType t, Active active, Slot* r, const Slot* a) {
  if (is_float(t)) return float_unary_op(k, t, active, r, a);
  int_unary_op(k, t, active, r, a);
}

void run_binary(OpKind k, DType t, Active active, Slot* r, const Slot* a, const Slot* b) {
  if (is_float(t)) return float_binary_op(k, t, active, r, a, b);
  int_binary_op(k, t, active, r, a, b);
}

void run_compare(OpKind k, DType t, Active active, Slot* r, const Slot* a, const Slot* b) {
  switch (k) {
    case OpKind::Eq:
      return compare_typed(t, active, r, a, b, std::equal_to<>());
    case OpKind::Ne:
      return compare_typed(t, active, r, a, b, std::not_equal_to<>());
    case OpKind::Lt:
      return compare_typed(t, active, r, a, b, std::less<>());
    case OpKind::Le:
      return compare_typed(t, active, r, a, b, std::less_equal<>());
    case OpKind::Gt:
      return compare_typed(t, active, r, a, b, std::greater<>());
    case OpKind::Ge:
      return compare_typed(t, active, r, a, b, std::greater_equal<>());
    default:
      internal_error("compare op expected", __FILE__, __LINE__);
  }
}

void run_fma(DType t, Active active, Slot* r, const Slot* a, const Slot* b, const Slot* c) {
  if (is_float(t)) {
    return with_float_type(t, [&](auto d) {
      for (std::uint32_t i : active) {
        const float v = std::fma(as_float(a[i]), as_float(b[i]), as_float(c[i]));
        r[i] = fit_float<decltype(d)::value>(v);
      }
    });
  }
  with_int_type(t, [&](auto d) {
    for (std::uint32_t i : active) r[i] = wrap_int<decltype(d)::value>(a[i] * b[i] + c[i]);
  });
}

OpKind combiner_of(OpKind k) {
  switch (k) {
    case OpKind::AtomicAdd:
    case OpKind::SimdSum:
    case OpKind::SimdPrefixSum:
    case OpKind::SimdPrefixExclusiveSum:
    case OpKind::ReduceSum:
      return OpKind::Add;
    case OpKind::AtomicMax:
    case OpKind::SimdMax:
    case OpKind::ReduceMax:
      return OpKind::Max;
    case OpKind::AtomicMin:
    case OpKind::SimdMin:
    case OpKind::ReduceMin:
      return OpKind::Min;
    case OpKind::AtomicAnd:
      return OpKind::And;
    case OpKind::AtomicOr:
      return OpKind::Or;
    case OpKind::AtomicXor:
      return OpKind::Xor;
    default:
      return k;
  }
}

Slot combine(OpKind k, DType t, Slot a, Slot b) {
  static constexpr std::uint32_t kLane0 = 0;
  Slot r = 0;
  run_binary(k, t, Active(&kLane0, 1), &r, &a, &b);
  return r;
}

}  // namespace iron::runtime::sim
