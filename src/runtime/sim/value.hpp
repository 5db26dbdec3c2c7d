/// How the simulator holds one thread's value: a 32-bit slot holding the bits of an
/// ir::ScalarValue (floats as f32 bits rounded to their type, integers wrapped to their width, i8
/// sign-extended, bools 0 or 1). Conversions between slots, buffer bytes and scalars.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "iron/core/dtype.hpp"
#include "iron/core/error.hpp"
#include "iron/core/evaluate.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::runtime::sim {

using Slot = std::uint32_t;

template <DType D>
using DTypeTag = std::integral_constant<DType, D>;

template <DType D>
inline constexpr std::size_t sizeof_dtype =
    D == DType::F32 || D == DType::I32 || D == DType::U32
        ? 4
        : (D == DType::F16 || D == DType::BF16 || D == DType::U16 ? 2 : 1);

inline float as_float(Slot s) { return std::bit_cast<float>(s); }

/// Calls fn(DTypeTag<D>{}) for the type t, so that a loop over elements is compiled once per
/// type (the loads and stores of tensors).
template <class Fn>
decltype(auto) with_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::F32:
      return fn(DTypeTag<DType::F32>{});
    case DType::F16:
      return fn(DTypeTag<DType::F16>{});
    case DType::BF16:
      return fn(DTypeTag<DType::BF16>{});
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
    case DType::F8E4M3:
      return fn(DTypeTag<DType::F8E4M3>{});
    case DType::F8E5M2:
      return fn(DTypeTag<DType::F8E5M2>{});
  }
  IRON_INTERNAL_ERROR("a dtype outside the enum");
}

/// The values of an integer (or bool) type, exactly.
struct IntBounds {
  std::int64_t lo, hi;
};
inline IntBounds int_bounds(DType t) {
  const IntegerRange r = integer_range(t);
  return {static_cast<std::int64_t>(r.lo), static_cast<std::int64_t>(r.hi)};
}

/// The integer a slot of the integer or bool type t stands for.
inline std::int64_t int_value(Slot s, DType t) { return ir::ScalarValue{t, s}.as_int(); }

/// The slot of the element of type D stored at p (little-endian host), and the reverse.
template <DType D>
inline Slot decode(const std::byte* p) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, p, sizeof_dtype<D>);
  return ir::from_memory_bits(D, bits);
}
template <DType D>
inline void encode(Slot v, std::byte* p) {
  const std::uint32_t bits = ir::memory_bits(D, v);
  std::memcpy(p, &bits, sizeof_dtype<D>);
}

/// The slot of a constexpr argument converted to the type t.
Slot scalar_slot(const Scalar& s, DType t);
/// The value for messages: "1.5" or "-3".
std::string format_slot(Slot v, DType t);

}  // namespace iron::runtime::sim
