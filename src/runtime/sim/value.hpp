/// How the simulator holds one thread's value: a 32-bit slot. Floats (f32, f16, bf16) are float
/// bits, always rounded to their type; integers are wrapped to their width (i8 sign-extended);
/// bools are 0 or 1. Conversions between slots, buffer bytes, constants and scalars.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "iron/core/dtype.hpp"
#include "iron/core/error.hpp"
#include "iron/core/half.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::runtime::sim {

using Slot = std::uint32_t;

template <DType D>
using DTypeTag = std::integral_constant<DType, D>;

template <DType D>
inline constexpr bool kFloat = D == DType::F32 || D == DType::F16 || D == DType::BF16;
template <DType D>
inline constexpr bool kSigned = D == DType::I32 || D == DType::I8;
template <DType D>
inline constexpr std::size_t sizeof_dtype =
    D == DType::F32 || D == DType::I32 || D == DType::U32
        ? 4
        : (D == DType::F16 || D == DType::BF16 || D == DType::U16 ? 2 : 1);

inline float as_float(Slot s) { return std::bit_cast<float>(s); }
inline Slot float_slot(float v) { return std::bit_cast<Slot>(v); }

/// The slot of `v` rounded to the float type D.
template <DType D>
inline Slot fit_float(float v) {
  if constexpr (D == DType::F16) return float_slot(round_to_f16(v));
  if constexpr (D == DType::BF16) return float_slot(round_to_bf16(v));
  return float_slot(v);
}

/// The slot of the integer bits `v` wrapped to the integer (or bool) type D.
template <DType D>
inline Slot wrap_int(std::uint32_t v) {
  if constexpr (D == DType::U8) return v & 0xFFu;
  if constexpr (D == DType::I8)
    return static_cast<Slot>(static_cast<std::int32_t>(static_cast<std::int8_t>(v)));
  if constexpr (D == DType::U16) return v & 0xFFFFu;
  if constexpr (D == DType::Bool) return v != 0 ? 1u : 0u;
  return v;
}

/// Calls fn(DTypeTag<D>{}) for the float type t.
template <class Fn>
decltype(auto) with_float_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::F16:
      return fn(DTypeTag<DType::F16>{});
    case DType::BF16:
      return fn(DTypeTag<DType::BF16>{});
    case DType::F32:
      return fn(DTypeTag<DType::F32>{});
    default:
      internal_error("float type expected", __FILE__, __LINE__);
  }
}

/// Calls fn(DTypeTag<D>{}) for the integer or bool type t.
template <class Fn>
decltype(auto) with_int_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::I32:
      return fn(DTypeTag<DType::I32>{});
    case DType::U32:
      return fn(DTypeTag<DType::U32>{});
    case DType::U8:
      return fn(DTypeTag<DType::U8>{});
    case DType::I8:
      return fn(DTypeTag<DType::I8>{});
    case DType::U16:
      return fn(DTypeTag<DType::U16>{});
    case DType::Bool:
      return fn(DTypeTag<DType::Bool>{});
    default:
      internal_error("integer type expected", __FILE__, __LINE__);
  }
}

/// Calls fn(DTypeTag<D>{}) for any type t.
template <class Fn>
decltype(auto) with_type(DType t, Fn&& fn) {
  if (is_float(t)) return with_float_type(t, fn);
  return with_int_type(t, fn);
}

/// The values of an integer (or bool) type, exactly.
struct IntBounds {
  std::int64_t lo, hi;
};
constexpr IntBounds int_bounds(DType t) {
  switch (t) {
    case DType::U32:
      return {0, 0xFFFFFFFFll};
    case DType::I32:
      return {-0x80000000ll, 0x7FFFFFFFll};
    case DType::U16:
      return {0, 0xFFFF};
    case DType::U8:
      return {0, 0xFF};
    case DType::I8:
      return {-128, 127};
    default:
      return {0, 1};  // bool
  }
}

/// The integer a slot of the integer or bool type t stands for.
inline std::int64_t int_value(Slot s, DType t) {
  if (is_signed_int(t)) return static_cast<std::int32_t>(s);
  return s;
}

/// The slot of `v` rounded to the float type t.
inline Slot fit_slot(DType t, float v) {
  return with_float_type(t, [&](auto d) { return fit_float<decltype(d)::value>(v); });
}

/// The slot of `v`, given as integer bits, wrapped to the integer or bool type t.
inline Slot wrap_slot(DType t, std::uint32_t v) {
  return with_int_type(t, [&](auto d) { return wrap_int<decltype(d)::value>(v); });
}

/// The 8, 16 or 32 bits a value of type D occupies in memory.
template <DType D>
inline std::uint32_t raw_bits(Slot v) {
  if constexpr (D == DType::F16) return f32_to_f16_bits(as_float(v));
  if constexpr (D == DType::BF16) return f32_to_bf16_bits(as_float(v));
  if constexpr (D == DType::U8 || D == DType::I8 || D == DType::Bool) return v & 0xFFu;
  if constexpr (D == DType::U16) return v & 0xFFFFu;
  return v;
}

/// The slot of type D whose memory bits are `bits`.
template <DType D>
inline Slot from_raw_bits(std::uint32_t bits) {
  if constexpr (D == DType::F16)
    return float_slot(f16_bits_to_f32(static_cast<std::uint16_t>(bits)));
  if constexpr (D == DType::BF16)
    return float_slot(bf16_bits_to_f32(static_cast<std::uint16_t>(bits)));
  if constexpr (D == DType::F32) return bits;
  if constexpr (!kFloat<D>) return wrap_int<D>(bits);
}

/// The slot of the element of type D stored at p (little-endian host), and the reverse.
template <DType D>
inline Slot decode(const std::byte* p) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, p, sizeof_dtype<D>);
  return from_raw_bits<D>(bits);
}
template <DType D>
inline void encode(Slot v, std::byte* p) {
  const std::uint32_t bits = raw_bits<D>(v);
  std::memcpy(p, &bits, sizeof_dtype<D>);
}

/// Cast semantics: float -> integer truncates toward zero and saturates (NaN -> 0); integer ->
/// float rounds to f32, then to f16/bf16; anything -> bool is "!= 0"; integers wrap.
Slot convert(Slot v, DType from, DType to);
/// Whether a bitcast between the two types is defined (equal sizes, bool only to itself).
bool bitcast_defined(DType from, DType to);
/// Reinterprets the bits of a value as another type of the same size.
Slot bitcast(Slot v, DType from, DType to);

/// The slot of a Const op of type t (floats from `f`, integers and bools from `i`).
Slot const_slot(DType t, double f, std::int64_t i);
/// The slot of a constexpr argument converted to the type t.
Slot scalar_slot(const Scalar& s, DType t);
/// The value for messages: "1.5" or "-3".
std::string format_slot(Slot v, DType t);

}  // namespace iron::runtime::sim
