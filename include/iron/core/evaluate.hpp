/// What Iron's pure ops compute, written once: `evaluate` applies an op to scalar values held
/// as the simulator holds them, and both constant folding and the simulator call it, so a folded
/// constant is always the value the kernel would have computed. The definition is inline (at the
/// end of this file) so that the simulator's loop over lanes compiles to one op's arithmetic.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>

#include "iron/core/dtype.hpp"
#include "iron/core/error.hpp"
#include "iron/core/fp8.hpp"
#include "iron/core/half.hpp"
#include "iron/core/op_table.hpp"

namespace iron::ir {

/// The f32 bits of `v` rounded to the float type t (f16 and bf16 round to nearest even, the 8-bit
/// floats to nearest even with saturation).
[[gnu::always_inline]] inline std::uint32_t round_bits(DType t, float v) {
  if (t == DType::F16) v = round_to_f16(v);
  if (t == DType::BF16) v = round_to_bf16(v);
  if (t == DType::F8E4M3) v = round_to_f8e4m3(v);
  if (t == DType::F8E5M2) v = round_to_f8e5m2(v);
  return std::bit_cast<std::uint32_t>(v);
}

/// The integer bits `v` wrapped to the width of the integer or bool type t: u8 and u16 keep
/// their low bits, i8 its low byte sign-extended, a bool is 1 for anything but 0.
[[gnu::always_inline]] constexpr std::uint32_t wrap_bits(DType t, std::uint32_t v) {
  switch (t) {
    case DType::U8:
      return v & 0xFFu;
    case DType::I8:
      return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(v)));
    case DType::U16:
      return v & 0xFFFFu;
    case DType::Bool:
      return v != 0 ? 1u : 0u;
    case DType::I32:
    case DType::U32:
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3:
    case DType::F8E5M2:
      return v;
  }
  return v;
}

/// The 8, 16 or 32 bits a value of type t occupies in memory, from its held bits `v`.
[[gnu::always_inline]] inline std::uint32_t memory_bits(DType t, std::uint32_t v) {
  if (t == DType::F16) return f32_to_f16_bits(std::bit_cast<float>(v));
  if (t == DType::BF16) return f32_to_bf16_bits(std::bit_cast<float>(v));
  if (t == DType::F8E4M3) return f32_to_f8e4m3_bits(std::bit_cast<float>(v));
  if (t == DType::F8E5M2) return f32_to_f8e5m2_bits(std::bit_cast<float>(v));
  return wrap_bits(t == DType::I8 || t == DType::Bool ? DType::U8 : t, v);
}

/// The held bits of the value of type t whose memory bits are `raw`.
[[gnu::always_inline]] inline std::uint32_t from_memory_bits(DType t, std::uint32_t raw) {
  if (t == DType::F16) return std::bit_cast<std::uint32_t>(f16_bits_to_f32(raw & 0xFFFFu));
  if (t == DType::BF16) return std::bit_cast<std::uint32_t>(bf16_bits_to_f32(raw & 0xFFFFu));
  if (t == DType::F8E4M3) return std::bit_cast<std::uint32_t>(f8e4m3_bits_to_f32(raw & 0xFFu));
  if (t == DType::F8E5M2) return std::bit_cast<std::uint32_t>(f8e5m2_bits_to_f32(raw & 0xFFu));
  return wrap_bits(t, raw);
}

/// A scalar value as Iron's semantics hold it, in 32 bits: f32 bits for every float type (an f16
/// or bf16 value rounded to its type), integer bits wrapped to the type's width (i8
/// sign-extended), a bool as 0 or 1.
struct ScalarValue {
  DType type = DType::U32;
  std::uint32_t bits = 0;

  float as_float() const { return std::bit_cast<float>(bits); }
  /// The integer (or bool) it stands for: signed for i32 and i8.
  std::int64_t as_int() const {
    return is_signed_int(type) ? std::int64_t{static_cast<std::int32_t>(bits)} : bits;
  }
  bool operator==(const ScalarValue&) const = default;
};

/// The value of a `const` op of type t: its float attribute `f` for a float type (rounded to
/// the type), its integer attribute `i` otherwise (wrapped).
ScalarValue constant_value(DType t, double f, std::int64_t i);

/// Whether an evaluation gave the single value the op defines, and if not, why.
enum class Outcome : std::uint8_t {
  Defined,         ///< the one value every conforming device computes
  NotANumber,      ///< a NaN: its sign and payload differ between hosts and devices
  DivisionByZero,  ///< an integer division or remainder by zero (the bits are 0)
  Undefined,       ///< a result the GPU languages leave undefined or implementation-defined:
                   ///< i32 INT_MIN / -1 and INT_MIN % -1, a shift by the type's width or more
                   ///< or of a negative value, a bitcast to bool of a byte other than 0 or 1,
                   ///< the sign of min or max of +0 and -0 (the bits are the simulator's choice,
                   ///< documented at evaluate())
};

/// The result of evaluate(): the value (meaningful for every outcome but DivisionByZero) and
/// whether it is the op's one defined value.
struct Evaluation {
  ScalarValue value;
  Outcome outcome = Outcome::Defined;
};

/// Whether evaluate() computes ops of kind k: the lane-wise pure ops (unary, binary, compare,
/// select, fma, cast, bitcast).
constexpr bool is_evaluable(OpKind k) {
  const OpInfo& info = op_info(k);
  switch (info.op_class) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Compare:
      return true;
    case OpClass::Other:
      return info.types == TypeRule::Selection || info.types == TypeRule::Float ||
             info.types == TypeRule::Conversion || info.types == TypeRule::Reinterpretation;
    case OpClass::Leaf:
    case OpClass::Atomic:
    case OpClass::Simd:
    case OpClass::Group:
      return false;
  }
  return false;
}

/// Whether evaluate(k, type, …) is meaningful on operands of `operand_types`: k is evaluable,
/// takes that many operands, of the types its rule asks for, and is defined on them. Callers
/// that may see unverified IR (the constant folder) check it first; the simulator runs only
/// verified IR.
bool can_evaluate(OpKind k, DType type, std::span<const DType> operand_types);

/// Op k, whose result has type `type`, applied to `operands` (for a compare, `type` is bool and
/// the operands' own type decides how they compare). Floats are computed in f32 and rounded to
/// their type once; integers are computed on 32 bits and wrapped; casts from float to integer
/// truncate toward zero and saturate (NaN gives 0), casts to bool test `!= 0`. Where the outcome
/// is not Defined the bits are still the simulator's: the host's NaN; 0 for a division by zero;
/// INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0; a shift uses its amount modulo 32 (an
/// arithmetic shift for signed types); a bitcast to bool is 1 for any byte but 0; min and max of
/// +0 and -0 give the first operand. An approximate op (exp2.approx, recip.approx) gives its exact
/// function with subnormal operands and results flushed to zero, as its instruction does; the
/// instruction itself may differ from that by the op's error bound (docs/compiler.md).
/// Precondition: can_evaluate(k, type, the operands' types).
Evaluation evaluate(OpKind k, DType type, std::span<const ScalarValue> operands);

/// The binary op with which an atomic, simd or group op of kind k combines two values (add for
/// atomic.add, simd.sum, simd.prefix_sum, reduce.sum, …); nullopt for the ops that combine
/// nothing (atomic.xchg, the shuffles and broadcast) and for every other kind.
std::optional<OpKind> combiner_of(OpKind k);

/// Calls fn(std::integral_constant<OpKind, K>{}) for the kind k, so that a loop calling
/// evaluate_lane() with it is compiled once per kind, down to that kind's arithmetic.
template <class Fn>
decltype(auto) with_op_kind(OpKind k, Fn&& fn) {
  switch (k) {
#define IRON_X(e, ...) \
  case OpKind::e:      \
    return fn(std::integral_constant<OpKind, OpKind::e>{});
    IRON_IR_OPS(IRON_X)
#undef IRON_X
  }
  IRON_INTERNAL_ERROR("an op kind outside the op table");
}

namespace detail {

/// The 32 bits read as a signed integer.
[[gnu::always_inline]] inline std::int32_t signed_bits(std::uint32_t v) {
  return static_cast<std::int32_t>(v);
}

/// A float result: rounded to its type, NaN told apart.
[[gnu::always_inline]] inline Evaluation real(DType t, float v) {
  const ScalarValue r{t, round_bits(t, v)};
  return {r, std::isnan(r.as_float()) ? Outcome::NotANumber : Outcome::Defined};
}

/// `v` with a subnormal flushed to the zero of its sign, as the approximate ops' hardware
/// instructions (PTX's .ftz forms) treat their operands and results.
[[gnu::always_inline]] inline float flush_subnormal(float v) {
  return std::fabs(v) < std::numeric_limits<float>::min() ? std::copysign(0.0f, v) : v;
}

/// An integer or bool result, wrapped to its type.
[[gnu::always_inline]] inline Evaluation integer(DType t, std::uint32_t v) {
  return {{t, wrap_bits(t, v)}, Outcome::Defined};
}

/// A bool result.
[[gnu::always_inline]] inline Evaluation truth(bool v) {
  return {{DType::Bool, v ? 1u : 0u}, Outcome::Defined};
}

/// `e`, or `e` with the outcome `otherwise` where it is not the defined value.
[[gnu::always_inline]] inline Evaluation with_outcome(Evaluation e, bool defined,
                                                      Outcome otherwise) {
  if (!defined) e.outcome = otherwise;
  return e;
}

/// How two values of one type order: as floats (NaN unordered), signed or unsigned integers.
[[gnu::always_inline]] inline std::partial_ordering order(ScalarValue a, ScalarValue b) {
  if (is_float(a.type)) return a.as_float() <=> b.as_float();
  if (is_signed_int(a.type)) return signed_bits(a.bits) <=> signed_bits(b.bits);
  return a.bits <=> b.bits;
}

/// `a < b` as integers of type t.
[[gnu::always_inline]] inline bool integer_less(DType t, std::uint32_t a, std::uint32_t b) {
  return is_signed_int(t) ? signed_bits(a) < signed_bits(b) : a < b;
}

/// Integer division and remainder, truncating toward zero. i8 operands are promoted to int by
/// the GPU languages, so only i32 has a quotient (INT_MIN / -1) that does not fit.
[[gnu::always_inline]] inline Evaluation divide(OpKind k, DType t, std::uint32_t a,
                                                std::uint32_t b) {
  const bool quotient = k == OpKind::Div;
  if (b == 0) return {{t, 0}, Outcome::DivisionByZero};
  if (!is_signed_int(t)) return integer(t, quotient ? a / b : a % b);
  if (signed_bits(b) == -1) {
    const bool overflows = t == DType::I32 && a == 0x80000000u;
    return with_outcome(integer(t, quotient ? 0u - a : 0u), !overflows, Outcome::Undefined);
  }
  const std::int32_t x = signed_bits(a);
  const std::int32_t y = signed_bits(b);
  return integer(t, static_cast<std::uint32_t>(quotient ? x / y : x % y));
}

/// Shifts by an amount below the type's width of a value that is not negative.
[[gnu::always_inline]] inline Evaluation shift(OpKind k, DType t, std::uint32_t a,
                                               std::uint32_t b) {
  const std::uint32_t by = b & 31u;
  std::uint32_t r = a << by;
  if (k == OpKind::Shr) {
    r = is_signed_int(t) ? static_cast<std::uint32_t>(signed_bits(a) >> by) : a >> by;
  }
  const bool defined = b < dtype_size(t) * 8 && !(is_signed_int(t) && signed_bits(a) < 0);
  return with_outcome(integer(t, r), defined, Outcome::Undefined);
}

/// A cast of `v` to the type `to`.
[[gnu::always_inline]] inline Evaluation convert(ScalarValue v, DType to) {
  if (v.type == to) return {v, Outcome::Defined};
  if (is_float(v.type)) {
    const float x = v.as_float();
    if (to == DType::Bool) return truth(x != 0.0f);
    if (is_float(to)) return real(to, x);
    if (std::isnan(x)) return integer(to, 0);
    const IntegerRange r = integer_range(to);
    const double clamped = std::clamp(std::trunc(static_cast<double>(x)), r.lo, r.hi);
    return integer(to, static_cast<std::uint32_t>(static_cast<std::int64_t>(clamped)));
  }
  const std::int64_t i = v.as_int();
  if (is_float(to)) return real(to, static_cast<float>(i));
  return integer(to, static_cast<std::uint32_t>(i));
}

/// A bitcast of `v` to the type `to`: its bytes in memory, read as `to`.
[[gnu::always_inline]] inline Evaluation reinterpret(ScalarValue v, DType to) {
  if (v.type == to) return {v, Outcome::Defined};
  const std::uint32_t raw = memory_bits(v.type, v.bits);
  const ScalarValue r{to, from_memory_bits(to, raw)};
  if (is_float(to) && std::isnan(r.as_float())) return {r, Outcome::NotANumber};
  return {r, to == DType::Bool && raw > 1 ? Outcome::Undefined : Outcome::Defined};
}

/// A float min or max (`ordered`: its choice between two numbers, the first on a tie), as C's
/// fmin and fmax: a NaN operand gives the other operand. Which zero it gives for +0 and -0 the
/// GPU languages leave open, and host libraries differ.
[[gnu::always_inline]] inline Evaluation extremum(DType t, float x, float y, float ordered) {
  if (std::isnan(x)) return real(t, y);
  if (std::isnan(y)) return real(t, x);
  const bool opposite_zeros = x == y && std::signbit(x) != std::signbit(y);
  return with_outcome(real(t, ordered), !opposite_zeros, Outcome::Undefined);
}

/// The float or the integer result, by the type t.
[[gnu::always_inline]] inline Evaluation float_or_integer(DType t, float real_result,
                                                          std::uint32_t integer_result) {
  return is_float(t) ? real(t, real_result) : integer(t, integer_result);
}

}  // namespace detail

/// evaluate() on one lane's operands (p, q, r as the op takes them): the definition of every
/// lane-wise op, one case per op kind.
[[gnu::always_inline]] inline Evaluation evaluate_lane(OpKind k, DType t, ScalarValue p,
                                                       ScalarValue q = {}, ScalarValue r = {}) {
  using namespace detail;
  const std::uint32_t a = p.bits;
  const std::uint32_t b = q.bits;
  const float x = p.as_float();
  const float y = q.as_float();
  switch (k) {
    case OpKind::Neg:
      return float_or_integer(t, -x, 0u - a);
    case OpKind::Not:
      return integer(t, t == DType::Bool ? a ^ 1u : ~a);
    case OpKind::Sqrt:
      return real(t, std::sqrt(x));
    case OpKind::Rsqrt:
      return real(t, 1.0f / std::sqrt(x));
    case OpKind::Exp:
      return real(t, std::exp(x));
    case OpKind::Exp2:
      return real(t, std::exp2(x));
    case OpKind::Exp2Approx:
      return real(t, flush_subnormal(std::exp2(flush_subnormal(x))));
    case OpKind::Log:
      return real(t, std::log(x));
    case OpKind::Log2:
      return real(t, std::log2(x));
    case OpKind::Sin:
      return real(t, std::sin(x));
    case OpKind::Cos:
      return real(t, std::cos(x));
    case OpKind::Tanh:
      return real(t, std::tanh(x));
    case OpKind::Erf:
      return real(t, std::erf(x));
    case OpKind::Abs:
      return float_or_integer(t, std::fabs(x), is_signed_int(t) && signed_bits(a) < 0 ? 0u - a : a);
    case OpKind::Recip:
      return real(t, 1.0f / x);
    case OpKind::RecipApprox:
      return real(t, flush_subnormal(1.0f / flush_subnormal(x)));
    case OpKind::Floor:
      return real(t, std::floor(x));
    case OpKind::Ceil:
      return real(t, std::ceil(x));
    case OpKind::Add:
      return float_or_integer(t, x + y, a + b);
    case OpKind::Sub:
      return float_or_integer(t, x - y, a - b);
    case OpKind::Mul:
      return float_or_integer(t, x * y, a * b);
    case OpKind::Div:
      return is_float(t) ? real(t, x / y) : divide(k, t, a, b);
    case OpKind::Rem:
      return is_float(t) ? real(t, std::fmod(x, y)) : divide(k, t, a, b);
    case OpKind::Min:
      if (is_float(t)) return extremum(t, x, y, y < x ? y : x);
      return integer(t, integer_less(t, b, a) ? b : a);
    case OpKind::Max:
      if (is_float(t)) return extremum(t, x, y, x < y ? y : x);
      return integer(t, integer_less(t, a, b) ? b : a);
    case OpKind::Pow:
      return real(t, std::pow(x, y));
    case OpKind::Atan2:
      return real(t, std::atan2(x, y));
    case OpKind::And:
      return integer(t, a & b);
    case OpKind::Or:
      return integer(t, a | b);
    case OpKind::Xor:
      return integer(t, a ^ b);
    case OpKind::Shl:
    case OpKind::Shr:
      return shift(k, t, a, b);
    case OpKind::Eq:
      return truth(std::is_eq(order(p, q)));
    case OpKind::Ne:
      return truth(std::is_neq(order(p, q)));
    case OpKind::Lt:
      return truth(std::is_lt(order(p, q)));
    case OpKind::Le:
      return truth(std::is_lteq(order(p, q)));
    case OpKind::Gt:
      return truth(std::is_gt(order(p, q)));
    case OpKind::Ge:
      return truth(std::is_gteq(order(p, q)));
    case OpKind::Select:
      return {a != 0 ? q : r, Outcome::Defined};
    case OpKind::Fma:
      return real(t, std::fma(x, y, r.as_float()));
    case OpKind::Cast:
      return convert(p, t);
    case OpKind::Bitcast:
      return reinterpret(p, t);
    case OpKind::Const:
    case OpKind::ConstexprRef:
    case OpKind::Builtin:
    case OpKind::Load:
    case OpKind::Store:
    case OpKind::SharedLoad:
    case OpKind::SharedStore:
    case OpKind::AtomicAdd:
    case OpKind::AtomicMax:
    case OpKind::AtomicMin:
    case OpKind::AtomicAnd:
    case OpKind::AtomicOr:
    case OpKind::AtomicXor:
    case OpKind::AtomicExchange:
    case OpKind::Barrier:
    case OpKind::BarrierAmong:
    case OpKind::BarrierSimdgroup:
    case OpKind::SimdSum:
    case OpKind::SimdMax:
    case OpKind::SimdMin:
    case OpKind::SimdPrefixSum:
    case OpKind::SimdPrefixExclusiveSum:
    case OpKind::SimdShuffle:
    case OpKind::SimdShuffleXor:
    case OpKind::SimdShuffleUp:
    case OpKind::SimdShuffleDown:
    case OpKind::SimdBroadcast:
    case OpKind::ReduceSum:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::VarDecl:
    case OpKind::Extract:
    case OpKind::VarLoad:
    case OpKind::VarStore:
    case OpKind::For:
    case OpKind::If:
    case OpKind::RegsDecl:
    case OpKind::RegsLoad:
    case OpKind::RegsStore:
    case OpKind::FragDecl:
    case OpKind::FragLoad:
    case OpKind::FragStore:
    case OpKind::FragMma:
    case OpKind::FragGet:
    case OpKind::FragSet:
    case OpKind::FragCoord:
    case OpKind::FragRowValue:
    case OpKind::FragRowReduce:
    case OpKind::FragConvert:
    case OpKind::CopyAsync:
    case OpKind::AsyncCommit:
    case OpKind::AsyncWait:
    case OpKind::Pipeline:
    case OpKind::PipelineIndex:
    case OpKind::WgMma:
    case OpKind::WgCommit:
    case OpKind::WgWait:
    case OpKind::FenceProxyAsync:
    case OpKind::TargetHas:
    case OpKind::Specialize:
    case OpKind::CopyTile:
    case OpKind::CopyTensor:
    case OpKind::MbarInit:
    case OpKind::MbarExpect:
    case OpKind::MbarWait:
    case OpKind::MbarInval:
    case OpKind::MbarArrive:
    case OpKind::WgRegisters:
    case OpKind::WgTurn:
    case OpKind::Exit:
      break;
  }
  IRON_INTERNAL_ERROR("evaluate() of an op that is not lane-wise arithmetic");
}

}  // namespace iron::ir
