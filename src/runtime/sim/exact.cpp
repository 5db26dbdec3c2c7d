/// Index arithmetic computed exactly: every op on the way into an index (marked `exact`) carries,
/// per thread, a wrap mark naming the first op whose true value did not fit its type, and an
/// index that carries one is reported. A wrapped value that a select discards is no finding.
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>

#include "interpreter.hpp"

namespace iron::runtime::sim {
namespace {

using ir::OpKind;

__extension__ using Wide = __int128;  // holds every product of two 64-bit magnitudes

std::string text(Wide v) {
  if (v >= INT64_MIN && v <= INT64_MAX) return std::to_string(static_cast<std::int64_t>(v));
  const bool negative = v < 0;
  std::string digits;
  for (Wide m = negative ? -v : v; m > 0; m /= 10) {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
  }
  return negative ? "-" + digits : digits;
}

bool fits(std::int64_t v, IntBounds b) { return v >= b.lo && v <= b.hi; }

bool float_fits(Slot a, IntBounds b) {
  const double x = std::trunc(static_cast<double>(as_float(a)));
  return !std::isnan(x) && x >= static_cast<double>(b.lo) && x <= static_cast<double>(b.hi);
}

/// The true value of an integer op on its operands, for the report; nullopt for a shift by 64
/// or more.
std::optional<Wide> true_value(const Instr& in, Slot a_slot, Slot b_slot, Slot c_slot) {
  const DType t = in.kind == OpKind::Cast ? in.arg_type : in.type;
  const Wide a = int_value(a_slot, t);
  const Wide b = int_value(b_slot, t);
  switch (in.kind) {
    case OpKind::Neg:
      return -a;
    case OpKind::Abs:
      return a < 0 ? -a : a;
    case OpKind::Add:
    case OpKind::For:  // the counter plus its step
      return a + b;
    case OpKind::Sub:
      return a - b;
    case OpKind::Mul:
      return a * b;
    case OpKind::Div:
      return b == 0 ? 0 : a / b;  // a division by zero is reported before
    case OpKind::Shl:
      if (a == 0) return Wide{0};
      if (b < 0 || b >= 64) return std::nullopt;
      return a * (Wide{1} << static_cast<int>(b));
    case OpKind::Fma:
      return a * b + int_value(c_slot, t);
    default:  // Cast
      return a;
  }
}

/// Whether the op's result is its true value (`bounds`: of its type). Operands have at most 32
/// bits, so only products can leave 64 bits; those are checked for overflow.
bool exact(const Instr& in, IntBounds bounds, Slot a_slot, Slot b_slot, Slot c_slot) {
  if (in.kind == OpKind::Cast) {
    if (in.type == DType::Bool || in.arg_type == DType::Bool || !is_integer(in.type)) return true;
    if (is_float(in.arg_type)) return float_fits(a_slot, bounds);
    return fits(int_value(a_slot, in.arg_type), bounds);
  }
  const std::int64_t a = int_value(a_slot, in.type);
  const std::int64_t b = int_value(b_slot, in.type);
  std::int64_t v = 0;
  switch (in.kind) {
    case OpKind::Neg:
      v = -a;
      break;
    case OpKind::Abs:
      v = a < 0 ? -a : a;
      break;
    case OpKind::Add:
      v = a + b;
      break;
    case OpKind::Sub:
      v = a - b;
      break;
    case OpKind::Mul:
      if (__builtin_mul_overflow(a, b, &v)) return false;
      break;
    case OpKind::Div:
      v = b == 0 ? 0 : a / b;
      break;
    case OpKind::Shl:
      if (a == 0) return true;
      if (b < 0 || b >= 63 || __builtin_mul_overflow(a, std::int64_t{1} << b, &v)) return false;
      break;
    case OpKind::Fma:
      if (__builtin_mul_overflow(a, b, &v) ||
          __builtin_add_overflow(v, int_value(c_slot, in.type), &v)) {
        return false;
      }
      break;
    default:
      return true;
  }
  return fits(v, bounds);
}

/// "mul of 65536 and 65536 is 4294967296": what the op computes, exactly.
std::string describe(const Instr& in, Slot a_slot, Slot b_slot, Slot c_slot) {
  const DType t = in.kind == OpKind::Cast ? in.arg_type : in.type;
  const std::string a =
      is_float(t) ? fmt::format("{}", as_float(a_slot)) : std::to_string(int_value(a_slot, t));
  const std::string b = std::to_string(int_value(b_slot, t));
  const std::string_view name = ir::op_name(in.kind);
  const std::optional<Wide> v = true_value(in, a_slot, b_slot, c_slot);
  switch (in.kind) {
    case OpKind::Cast:
      return fmt::format("cast of {} from {}", a, dtype_name(in.arg_type));
    case OpKind::For:
      return fmt::format("the loop counter {} plus its step {} is {}", a, b, text(*v));
    case OpKind::Shl:
      if (!v) return fmt::format("shl of {} by {}", a, b);
      break;
    case OpKind::Fma:
      return fmt::format("fma of {}, {} and {} is {}", a, b, int_value(c_slot, t), text(*v));
    default:
      break;
  }
  if (ir::op_class(in.kind) == ir::OpClass::Unary) {
    return fmt::format("{} of {} is {}", name, a, text(*v));
  }
  return fmt::format("{} of {} and {} is {}", name, a, b, text(*v));
}

}  // namespace

void GroupRunner::track_wraps(const Instr& in, Active active) {
  std::uint32_t* out = wraps(in.result);
  switch (in.kind) {
    case OpKind::Select: {
      const Slot* cond = row(in.args[0]);
      const std::uint32_t* x = wraps(in.args[1]);
      const std::uint32_t* y = wraps(in.args[2]);
      for (std::uint32_t t : active) out[t] = cond[t] != 0 ? x[t] : y[t];
      return;
    }
    case OpKind::VarDecl:
    case OpKind::VarLoad: {
      const std::uint32_t* from = wraps(in.args[0]);
      for (std::uint32_t t : active) out[t] = from[t];
      return;
    }
    case OpKind::VarStore: {
      std::uint32_t* var = wraps(in.args[0]);
      const std::uint32_t* from = wraps(in.args[1]);
      for (std::uint32_t t : active) var[t] = from[t];
      return;
    }
    default:
      break;
  }
  const std::size_t operands = in.kind == OpKind::Fma                                    ? 3
                               : in.cls == ir::OpClass::Unary || in.kind == OpKind::Cast ? 1
                                                                                         : 2;
  const std::uint32_t* w[3] = {wraps(in.args[0]), wraps(in.args[1]), wraps(in.args[2])};
  const Slot* v[3] = {row(in.args[0]), row(in.args[1]), row(in.args[2])};
  const bool checked = can_wrap(in.kind) && is_integer(in.type);
  const IntBounds bounds = int_bounds(in.type);
  const std::uint32_t self = instr_index(in) + 1;
  for (std::uint32_t t : active) {
    std::uint32_t mark = w[0][t];
    for (std::size_t k = 1; k < operands && mark == 0; ++k) mark = w[k][t];
    if (mark == 0 && checked && !exact(in, bounds, v[0][t], v[1][t], v[2][t])) {
      mark = self;
      last_wrap_[t] = {self, v[0][t], v[1][t], v[2][t]};
    }
    out[t] = mark;
  }
}

void GroupRunner::mark_counter(const Instr& in, std::uint32_t thread, Slot counter, Slot step) {
  std::uint32_t& mark = wraps(in.result)[thread];
  if (mark != 0) return;
  mark = instr_index(in) + 1;
  last_wrap_[thread] = {mark, counter, step, 0};
}

void GroupRunner::report_index_wrap(const Instr& in, std::uint32_t thread) {
  const std::uint32_t mark = wraps(in.args[0])[thread];
  const Instr& origin = program_.code[mark - 1];
  const Wrap& w = last_wrap_[thread];
  const std::string what =
      w.instr == mark ? fmt::format("{}, which does not fit {}", describe(origin, w.a, w.b, w.c),
                                    dtype_name(origin.type))
                      : fmt::format("the result of {} does not fit {}", ir::op_name(origin.kind),
                                    dtype_name(origin.type));
  throw report_.index_overflow(in, origin, thread, what);
}

}  // namespace iron::runtime::sim
