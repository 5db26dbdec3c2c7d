/// Conversions between slots of different types, constants and scalars.
#include "value.hpp"

#include <fmt/format.h>

#include <cmath>

namespace iron::runtime::sim {

Slot convert(Slot v, DType from, DType to) {
  if (from == to) return v;
  if (is_float(from)) {
    const float x = as_float(v);
    if (to == DType::Bool) return x != 0.0f ? 1u : 0u;
    if (is_float(to)) return fit_slot(to, x);
    if (std::isnan(x)) return 0;
    const IntegerRange r = integer_range(to);
    const double clamped = std::fmin(std::fmax(std::trunc(static_cast<double>(x)), r.lo), r.hi);
    return wrap_slot(to, static_cast<std::uint32_t>(static_cast<std::int64_t>(clamped)));
  }
  const std::int64_t i = int_value(v, from);
  if (is_float(to)) return fit_slot(to, static_cast<float>(i));
  return wrap_slot(to, static_cast<std::uint32_t>(i));
}

bool bitcast_defined(DType from, DType to) {
  if (from == to) return true;
  return from != DType::Bool && to != DType::Bool && dtype_size(from) == dtype_size(to);
}

Slot bitcast(Slot v, DType from, DType to) {
  const std::uint32_t bits =
      with_type(from, [&](auto d) { return raw_bits<decltype(d)::value>(v); });
  return with_type(to, [&](auto d) { return from_raw_bits<decltype(d)::value>(bits); });
}

Slot const_slot(DType t, double f, std::int64_t i) {
  if (is_float(t)) return fit_slot(t, static_cast<float>(f));
  return wrap_slot(t, static_cast<std::uint32_t>(i));
}

Slot scalar_slot(const Scalar& s, DType t) {
  return convert(const_slot(s.dtype, s.f, s.i), s.dtype, t);
}

std::string format_slot(Slot v, DType t) {
  if (is_float(t)) return fmt::format("{}", as_float(v));
  if (t == DType::Bool) return v != 0 ? "true" : "false";
  return std::to_string(int_value(v, t));
}

}  // namespace iron::runtime::sim
