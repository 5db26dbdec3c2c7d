/// Constexpr arguments as slots, and slots as text for messages.
#include "value.hpp"

#include <fmt/format.h>

#include <array>

namespace iron::runtime::sim {

Slot scalar_slot(const Scalar& s, DType t) {
  const std::array operand = {ir::constant_value(s.dtype, s.f, s.i)};
  return ir::evaluate(ir::OpKind::Cast, t, operand).value.bits;
}

std::string format_slot(Slot v, DType t) {
  if (is_float(t)) return fmt::format("{}", as_float(v));
  if (t == DType::Bool) return v != 0 ? "true" : "false";
  return std::to_string(int_value(v, t));
}

}  // namespace iron::runtime::sim
