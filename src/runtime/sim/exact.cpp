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

/// The type an op's operands are read in: a cast's source, the op's own type otherwise.
DType operand_type(const Instr& in) { return in.kind == OpKind::Cast ? in.arg_types[0] : in.type; }

/// The true value of integer arithmetic `w` on two operands of type t; nullopt for a shift by
/// 64 or more (operands have at most 32 bits, so every other true value fits a Wide).
std::optional<Wide> true_value(Wrapping w, DType t, Slot a_slot, Slot b_slot) {
  const Wide a = int_value(a_slot, t);
  const Wide b = int_value(b_slot, t);
  switch (w) {
    case Wrapping::Neg:
      return -a;
    case Wrapping::Abs:
      return a < 0 ? -a : a;
    case Wrapping::Add:
      return a + b;
    case Wrapping::Sub:
      return a - b;
    case Wrapping::Mul:
      return a * b;
    case Wrapping::Div:
      return b == 0 ? 0 : a / b;  // a division by zero is reported before
    case Wrapping::Shl:
      if (a == 0) return Wide{0};
      if (b < 0 || b >= 64) return std::nullopt;
      return a * (Wide{1} << static_cast<int>(b));
    case Wrapping::Cast:
      return a;
  }
  return std::nullopt;
}

/// Whether op `in` (of arithmetic `w`) gives its true value, within `bounds` (of its type), on
/// these operands. Operands have at most 32 bits, so only products can leave 64 bits; those are
/// checked for overflow.
bool exact(const Instr& in, Wrapping w, IntBounds bounds, Slot a_slot, Slot b_slot) {
  if (w == Wrapping::Cast) {
    const DType from = in.arg_types[0];
    if (in.type == DType::Bool || from == DType::Bool) return true;
    if (is_float(from)) return float_fits(a_slot, bounds);
    return fits(int_value(a_slot, from), bounds);
  }
  const std::int64_t a = int_value(a_slot, in.type);
  const std::int64_t b = int_value(b_slot, in.type);
  std::int64_t v = 0;
  switch (w) {
    case Wrapping::Neg:
      v = -a;
      break;
    case Wrapping::Abs:
      v = a < 0 ? -a : a;
      break;
    case Wrapping::Add:
      v = a + b;
      break;
    case Wrapping::Sub:
      v = a - b;
      break;
    case Wrapping::Mul:
      if (__builtin_mul_overflow(a, b, &v)) return false;
      break;
    case Wrapping::Div:
      v = b == 0 ? 0 : a / b;
      break;
    case Wrapping::Shl:
      if (a == 0) return true;
      if (b < 0 || b >= 63 || __builtin_mul_overflow(a, std::int64_t{1} << b, &v)) return false;
      break;
    case Wrapping::Cast:
      return true;
  }
  return fits(v, bounds);
}

/// "mul of 65536 and 65536 is 4294967296": what the op computes, exactly.
std::string describe(const Instr& in, Slot a_slot, Slot b_slot) {
  const DType t = operand_type(in);
  const std::string a =
      is_float(t) ? fmt::format("{}", as_float(a_slot)) : std::to_string(int_value(a_slot, t));
  const std::string b = std::to_string(int_value(b_slot, t));
  if (in.exec == Exec::For) {
    return fmt::format("the loop counter {} plus its step {} is {}", a, b,
                       text(*true_value(Wrapping::Add, t, a_slot, b_slot)));
  }
  const Wrapping w = *wrapping_of(in.kind);
  if (w == Wrapping::Cast) return fmt::format("cast of {} from {}", a, dtype_name(t));
  const std::string_view name = ir::op_name(in.kind);
  const std::optional<Wide> v = true_value(w, t, a_slot, b_slot);
  if (!v) return fmt::format("{} of {} by {}", name, a, b);
  if (in.operands == 1) return fmt::format("{} of {} is {}", name, a, text(*v));
  return fmt::format("{} of {} and {} is {}", name, a, b, text(*v));
}

}  // namespace

void GroupRunner::track_wraps(const Instr& in, Active active) {
  std::uint32_t* out = wraps(in.result);
  if (in.kind == OpKind::Select) {
    const Slot* cond = row(in.args[0]);
    const std::uint32_t* x = wraps(in.args[1]);
    const std::uint32_t* y = wraps(in.args[2]);
    for (std::uint32_t t : active) out[t] = cond[t] != 0 ? x[t] : y[t];
    return;
  }
  if (in.exec == Exec::Copy || in.exec == Exec::VarStore) {  // a variable's value moves
    std::uint32_t* to = in.exec == Exec::Copy ? out : wraps(in.args[0]);
    const std::uint32_t* from = wraps(in.args[in.exec == Exec::Copy ? 0 : 1]);
    for (std::uint32_t t : active) to[t] = from[t];
    return;
  }
  const std::uint32_t* w[2] = {wraps(in.args[0]), wraps(in.args[1])};
  const Slot* v[2] = {row(in.args[0]), row(in.args[1])};
  const std::optional<Wrapping> wrapping = wrapping_of(in.kind);
  const bool checked = wrapping && is_integer(in.type);
  const IntBounds bounds = checked ? int_bounds(in.type) : IntBounds{};
  const std::uint32_t self = instr_index(in) + 1;
  for (std::uint32_t t : active) {
    std::uint32_t mark = w[0][t];
    if (mark == 0 && in.operands > 1) mark = w[1][t];
    if (mark == 0 && checked && !exact(in, *wrapping, bounds, v[0][t], v[1][t])) {
      mark = self;
      last_wrap_[t] = {self, v[0][t], v[1][t]};
    }
    out[t] = mark;
  }
}

void GroupRunner::mark_counter(const Instr& in, std::uint32_t thread, Slot counter, Slot step) {
  std::uint32_t& mark = wraps(in.result)[thread];
  if (mark != 0) return;
  mark = instr_index(in) + 1;
  last_wrap_[thread] = {mark, counter, step};
}

void GroupRunner::report_index_wrap(const Instr& in, std::uint32_t thread) {
  report_index_wrap(in, thread, in.args[0]);
}

void GroupRunner::report_index_wrap(const Instr& in, std::uint32_t thread, std::uint32_t from) {
  const std::uint32_t mark = wraps(from)[thread];
  const Instr& origin = program_.code[mark - 1];
  const Wrap& w = last_wrap_[thread];
  const std::string what = w.instr == mark
                               ? fmt::format("{}, which does not fit {}",
                                             describe(origin, w.a, w.b), dtype_name(origin.type))
                               : fmt::format("the result of {} does not fit {}",
                                             ir::op_name(origin.kind), dtype_name(origin.type));
  throw report_.index_overflow(in, origin, thread, what);
}

}  // namespace iron::runtime::sim
