/// Element types of Iron IR values and buffers, with their sizes, names and classes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace iron {

/// Every element type a value or buffer can have. u8/i8/u16 exist for packed data.
/// F8E4M3 and F8E5M2 are the 8-bit floats (include/iron/core/fp8.hpp): storage types whose
/// values compute in f32 like f16's and bf16's.
enum class DType : std::uint8_t { F32, F16, BF16, I32, U32, U8, I8, U16, Bool, F8E4M3, F8E5M2 };

/// Bytes one element occupies in a buffer (bool is stored as one byte).
std::size_t dtype_size(DType t);
/// Lower-case name used in the text IR and the CLI: f32, f16, bf16, i32, u32, u8, i8, u16, bool,
/// f8e4m3, f8e5m2.
std::string_view dtype_name(DType t);
/// Inverse of dtype_name; nullopt for an unknown name.
std::optional<DType> parse_dtype(std::string_view name);

constexpr bool is_f8(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }
constexpr bool is_float(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || is_f8(t);
}
constexpr bool is_signed_int(DType t) { return t == DType::I32 || t == DType::I8; }
constexpr bool is_unsigned_int(DType t) {
  return t == DType::U32 || t == DType::U8 || t == DType::U16;
}
constexpr bool is_integer(DType t) { return is_signed_int(t) || is_unsigned_int(t); }

/// The smallest and largest value of an integer or bool dtype, as doubles (exact for all).
struct IntegerRange {
  double lo;
  double hi;
};
IntegerRange integer_range(DType t);

}  // namespace iron
