/// Exact literal text for Iron constants: shortest round-trip floats, typed integers.
#include "literals.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>

#include "iron/core/fp8.hpp"
#include "iron/core/half.hpp"

namespace iron::codegen::c_like {

std::int64_t const_integer(const ir::Op& c) {
  const auto bits = static_cast<std::uint32_t>(c.ivalue);
  switch (c.type) {
    case DType::U8:
      return bits & 0xFFu;
    case DType::I8:
      return static_cast<std::int8_t>(bits);
    case DType::U16:
      return bits & 0xFFFFu;
    case DType::I32:
      return static_cast<std::int32_t>(bits);
    case DType::Bool:
      return c.ivalue != 0 ? 1 : 0;
    case DType::U32:
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3:
    case DType::F8E5M2:
      return bits;
  }
  return bits;
}

std::string integer_literal(DType t, std::int64_t v) {
  if (t == DType::Bool) return v != 0 ? "true" : "false";
  if (is_unsigned_int(t)) return fmt::format("{}u", v);
  // -2147483648 is not a literal: it is the negation of a literal too large for int.
  if (v == INT32_MIN) return "-2147483647 - 1";
  return fmt::format("{}", v);
}

std::string f32_literal(float v, const Dialect& dialect) {
  if (!std::isfinite(v)) return dialect.float_bits(std::bit_cast<std::uint32_t>(v));
  std::string text = fmt::format("{}", v);  // the shortest digits that read back as v
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text + "f";
}

std::string const_literal(const ir::Op& c, const Dialect& dialect, Needs& needs) {
  if (!is_float(c.type)) return integer_literal(c.type, const_integer(c));
  const auto value = static_cast<float>(c.fvalue);
  if (c.type == DType::F16) {
    return dialect.convert(f32_literal(round_to_f16(value), dialect), DType::F32, DType::F16,
                           needs);
  }
  if (c.type == DType::BF16) {
    return dialect.convert(f32_literal(round_to_bf16(value), dialect), DType::F32, DType::BF16,
                           needs);
  }
  if (is_f8(c.type)) {
    const float rounded = c.type == DType::F8E4M3 ? round_to_f8e4m3(value) : round_to_f8e5m2(value);
    return dialect.convert(f32_literal(rounded, dialect), DType::F32, c.type, needs);
  }
  return f32_literal(value, dialect);
}

}  // namespace iron::codegen::c_like
