/// Constant evaluation that mirrors src/runtime/sim (arith.cpp, value.cpp) bit for bit: floats
/// computed in f32 and rounded to their type, integers computed on 32 bits and wrapped.
#include "const_eval.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>

#include "iron/core/half.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

std::uint32_t float_bits(DType t, float v) {
  if (t == DType::F16) v = round_to_f16(v);
  if (t == DType::BF16) v = round_to_bf16(v);
  return std::bit_cast<std::uint32_t>(v);
}

std::uint32_t wrap(DType t, std::uint32_t v) {
  switch (t) {
    case DType::U8:
      return v & 0xFFu;
    case DType::I8:
      return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(v)));
    case DType::U16:
      return v & 0xFFFFu;
    case DType::Bool:
      return v != 0 ? 1u : 0u;
    default:
      return v;
  }
}

int type_bits(DType t) { return static_cast<int>(dtype_size(t)) * 8; }

std::optional<ConstValue> float_result(DType t, float v) {
  if (std::isnan(v)) return std::nullopt;
  return ConstValue{t, float_bits(t, v)};
}

std::optional<ConstValue> float_unary(OpKind k, DType t, float x) {
  switch (k) {
    case OpKind::Neg:
      return float_result(t, -x);
    case OpKind::Sqrt:
      return float_result(t, std::sqrt(x));
    case OpKind::Rsqrt:
      return float_result(t, 1.0f / std::sqrt(x));
    case OpKind::Exp:
      return float_result(t, std::exp(x));
    case OpKind::Exp2:
      return float_result(t, std::exp2(x));
    case OpKind::Log:
      return float_result(t, std::log(x));
    case OpKind::Log2:
      return float_result(t, std::log2(x));
    case OpKind::Sin:
      return float_result(t, std::sin(x));
    case OpKind::Cos:
      return float_result(t, std::cos(x));
    case OpKind::Tanh:
      return float_result(t, std::tanh(x));
    case OpKind::Erf:
      return float_result(t, std::erf(x));
    case OpKind::Abs:
      return float_result(t, std::fabs(x));
    case OpKind::Recip:
      return float_result(t, 1.0f / x);
    case OpKind::Floor:
      return float_result(t, std::floor(x));
    case OpKind::Ceil:
      return float_result(t, std::ceil(x));
    default:
      return std::nullopt;
  }
}

std::optional<ConstValue> float_binary(OpKind k, DType t, float x, float y) {
  switch (k) {
    case OpKind::Add:
      return float_result(t, x + y);
    case OpKind::Sub:
      return float_result(t, x - y);
    case OpKind::Mul:
      return float_result(t, x * y);
    case OpKind::Div:
      return float_result(t, x / y);
    case OpKind::Rem:
      return float_result(t, std::fmod(x, y));
    case OpKind::Min:
      return float_result(t, std::fmin(x, y));
    case OpKind::Max:
      return float_result(t, std::fmax(x, y));
    case OpKind::Pow:
      return float_result(t, std::pow(x, y));
    case OpKind::Atan2:
      return float_result(t, std::atan2(x, y));
    default:
      return std::nullopt;
  }
}

std::optional<ConstValue> int_unary(OpKind k, DType t, std::uint32_t x) {
  switch (k) {
    case OpKind::Neg:
      if (t == DType::Bool) return std::nullopt;
      return ConstValue{t, wrap(t, 0u - x)};
    case OpKind::Not:
      return ConstValue{t, wrap(t, t == DType::Bool ? x ^ 1u : ~x)};
    case OpKind::Abs:
      if (t == DType::Bool) return std::nullopt;
      return ConstValue{t,
                        wrap(t, is_signed_int(t) && static_cast<std::int32_t>(x) < 0 ? 0u - x : x)};
    default:
      return std::nullopt;
  }
}

bool int_less(bool is_signed, std::uint32_t x, std::uint32_t y) {
  return is_signed ? static_cast<std::int32_t>(x) < static_cast<std::int32_t>(y) : x < y;
}

/// Division and remainder where the GPU languages define them (no zero divisor, no INT_MIN / -1).
std::optional<ConstValue> int_divide(OpKind k, DType t, std::uint32_t x, std::uint32_t y) {
  const bool is_signed = is_signed_int(t);
  if (y == 0 || (is_signed && y == 0xFFFFFFFFu && x == 0x80000000u)) return std::nullopt;
  std::uint32_t r = 0;
  if (!is_signed) {
    r = k == OpKind::Div ? x / y : x % y;
  } else {
    const auto sx = static_cast<std::int32_t>(x);
    const auto sy = static_cast<std::int32_t>(y);
    r = static_cast<std::uint32_t>(k == OpKind::Div ? sx / sy : sx % sy);
  }
  return ConstValue{t, wrap(t, r)};
}

/// Shifts by less than the type's width of values that are not negative.
std::optional<ConstValue> int_shift(OpKind k, DType t, std::uint32_t x, std::uint32_t y) {
  if (y >= static_cast<std::uint32_t>(type_bits(t)) ||
      (is_signed_int(t) && static_cast<std::int32_t>(x) < 0)) {
    return std::nullopt;
  }
  return ConstValue{t, wrap(t, k == OpKind::Shl ? x << y : x >> y)};
}

std::optional<ConstValue> int_binary(OpKind k, DType t, std::uint32_t x, std::uint32_t y) {
  const bool is_int = is_integer(t);
  switch (k) {
    case OpKind::Add:
      return is_int ? std::optional(ConstValue{t, wrap(t, x + y)}) : std::nullopt;
    case OpKind::Sub:
      return is_int ? std::optional(ConstValue{t, wrap(t, x - y)}) : std::nullopt;
    case OpKind::Mul:
      return is_int ? std::optional(ConstValue{t, wrap(t, x * y)}) : std::nullopt;
    case OpKind::Div:
    case OpKind::Rem:
      return is_int ? int_divide(k, t, x, y) : std::nullopt;
    case OpKind::Min:
      if (!is_int) return std::nullopt;
      return ConstValue{t, int_less(is_signed_int(t), y, x) ? y : x};
    case OpKind::Max:
      if (!is_int) return std::nullopt;
      return ConstValue{t, int_less(is_signed_int(t), x, y) ? y : x};
    case OpKind::And:
      return ConstValue{t, wrap(t, x & y)};
    case OpKind::Or:
      return ConstValue{t, wrap(t, x | y)};
    case OpKind::Xor:
      return ConstValue{t, wrap(t, x ^ y)};
    case OpKind::Shl:
    case OpKind::Shr:
      return is_int ? int_shift(k, t, x, y) : std::nullopt;
    default:
      return std::nullopt;
  }
}

template <class T>
T as(ConstValue v) {
  if constexpr (std::is_same_v<T, float>) return v.as_float();
  return static_cast<T>(v.bits);
}

template <class T>
std::optional<ConstValue> compare_as(OpKind k, ConstValue a, ConstValue b) {
  const T x = as<T>(a);
  const T y = as<T>(b);
  bool r = false;
  switch (k) {
    case OpKind::Eq:
      r = x == y;
      break;
    case OpKind::Ne:
      r = x != y;
      break;
    case OpKind::Lt:
      r = x < y;
      break;
    case OpKind::Le:
      r = x <= y;
      break;
    case OpKind::Gt:
      r = x > y;
      break;
    case OpKind::Ge:
      r = x >= y;
      break;
    default:
      return std::nullopt;
  }
  return ConstValue{DType::Bool, r ? 1u : 0u};
}

std::optional<ConstValue> compare(OpKind k, ConstValue a, ConstValue b) {
  if (a.type != b.type) return std::nullopt;
  if (is_float(a.type)) return compare_as<float>(k, a, b);
  if (is_signed_int(a.type)) return compare_as<std::int32_t>(k, a, b);
  return compare_as<std::uint32_t>(k, a, b);
}

/// Float -> integer truncates toward zero and saturates (NaN -> 0); integer -> float rounds to
/// f32, then to f16/bf16; anything -> bool is "!= 0"; integers wrap.
std::optional<ConstValue> convert(ConstValue v, DType to) {
  if (v.type == to) return v;
  if (is_float(v.type)) {
    const float x = v.as_float();
    if (to == DType::Bool) return ConstValue{to, x != 0.0f ? 1u : 0u};
    if (is_float(to)) return float_result(to, x);
    if (std::isnan(x)) return ConstValue{to, 0};
    const double lo = is_signed_int(to) ? -std::ldexp(1.0, type_bits(to) - 1) : 0.0;
    const double hi = is_signed_int(to) ? std::ldexp(1.0, type_bits(to) - 1) - 1.0
                                        : std::ldexp(1.0, type_bits(to)) - 1.0;
    const double clamped = std::fmin(std::fmax(std::trunc(static_cast<double>(x)), lo), hi);
    return ConstValue{to, wrap(to, static_cast<std::uint32_t>(static_cast<std::int64_t>(clamped)))};
  }
  const std::int64_t i = v.as_int();
  if (is_float(to)) return float_result(to, static_cast<float>(i));
  return ConstValue{to, wrap(to, static_cast<std::uint32_t>(i))};
}

std::uint32_t raw_bits(ConstValue v) {
  switch (v.type) {
    case DType::F16:
      return f32_to_f16_bits(v.as_float());
    case DType::BF16:
      return f32_to_bf16_bits(v.as_float());
    case DType::U8:
    case DType::I8:
    case DType::Bool:
      return v.bits & 0xFFu;
    case DType::U16:
      return v.bits & 0xFFFFu;
    default:
      return v.bits;
  }
}

std::optional<ConstValue> bitcast(ConstValue v, DType to) {
  if (v.type == to) return v;
  if (v.type == DType::Bool || to == DType::Bool || dtype_size(v.type) != dtype_size(to)) {
    return std::nullopt;
  }
  const std::uint32_t bits = raw_bits(v);
  switch (to) {
    case DType::F16:
      return float_result(to, f16_bits_to_f32(static_cast<std::uint16_t>(bits)));
    case DType::BF16:
      return float_result(to, bf16_bits_to_f32(static_cast<std::uint16_t>(bits)));
    case DType::F32:
      return float_result(to, std::bit_cast<float>(bits));
    default:
      return ConstValue{to, wrap(to, bits)};
  }
}

bool all_of_type(std::span<const ConstValue> args, DType t) {
  return std::ranges::all_of(args, [t](const ConstValue& a) { return a.type == t; });
}

}  // namespace

float ConstValue::as_float() const { return std::bit_cast<float>(bits); }

std::int64_t ConstValue::as_int() const {
  if (is_signed_int(type)) return static_cast<std::int32_t>(bits);
  return bits;
}

ConstValue const_value(const ir::Op& constant) {
  const DType t = constant.type;
  if (is_float(t)) return {t, float_bits(t, static_cast<float>(constant.fvalue))};
  return {t, wrap(t, static_cast<std::uint32_t>(constant.ivalue))};
}

ConstValue const_of(DType type, std::int64_t v) {
  if (is_float(type)) return {type, float_bits(type, static_cast<float>(v))};
  return {type, wrap(type, static_cast<std::uint32_t>(v))};
}

void set_constant(ir::Op& op, ConstValue v) {
  op.kind = OpKind::Const;
  op.type = v.type;
  op.args.clear();
  op.blocks.clear();
  op.param = -1;
  op.shared = -1;
  op.lanes = 1;
  op.builtin = ir::Builtin::ThreadId;
  op.axis = 0;
  op.fvalue = is_float(v.type) ? static_cast<double>(v.as_float()) : 0.0;
  op.ivalue = is_float(v.type) ? 0 : v.as_int();
}

std::optional<ConstValue> evaluate(OpKind kind, DType type, std::span<const ConstValue> args) {
  switch (ir::op_class(kind)) {
    case ir::OpClass::Unary:
      if (args.size() != 1 || args[0].type != type) return std::nullopt;
      if (is_float(type)) return float_unary(kind, type, args[0].as_float());
      return int_unary(kind, type, args[0].bits);
    case ir::OpClass::Binary:
      if (args.size() != 2 || !all_of_type(args, type)) return std::nullopt;
      if (is_float(type)) return float_binary(kind, type, args[0].as_float(), args[1].as_float());
      return int_binary(kind, type, args[0].bits, args[1].bits);
    case ir::OpClass::Compare:
      if (args.size() != 2 || type != DType::Bool) return std::nullopt;
      return compare(kind, args[0], args[1]);
    default:
      break;
  }
  switch (kind) {
    case OpKind::Fma:
      if (args.size() != 3 || !all_of_type(args, type)) return std::nullopt;
      if (is_float(type)) {
        return float_result(type,
                            std::fma(args[0].as_float(), args[1].as_float(), args[2].as_float()));
      }
      if (!is_integer(type)) return std::nullopt;
      return ConstValue{type, wrap(type, args[0].bits * args[1].bits + args[2].bits)};
    case OpKind::Cast:
      return args.size() == 1 ? convert(args[0], type) : std::nullopt;
    case OpKind::Bitcast:
      return args.size() == 1 ? bitcast(args[0], type) : std::nullopt;
    default:
      return std::nullopt;
  }
}

bool const_less(ConstValue a, ConstValue b) {
  if (is_float(a.type)) return a.as_float() < b.as_float();
  return int_less(is_signed_int(a.type), a.bits, b.bits);
}

}  // namespace iron::codegen
