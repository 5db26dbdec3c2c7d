/// The DSL's element types. Scalars are the C++ types themselves (so `template <u32 BITS>`
/// works for variants); f16, bf16 and the 8-bit floats are tags, since C++ has no portable types
/// for them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "iron/core/dtype.hpp"

namespace iron::dsl {

using f32 = float;
using i32 = std::int32_t;
using u32 = std::uint32_t;
using u16 = std::uint16_t;
using u8 = std::uint8_t;
using i8 = std::int8_t;
using boolean = bool;
/// IEEE binary16 element type tag.
struct f16 {};
/// bfloat16 element type tag.
struct bf16 {};
/// The 8-bit float element type tags (e4m3: OCP e4m3fn, largest 448; e5m2: largest 57344):
/// storage types whose values compute in f32 (include/iron/core/fp8.hpp).
struct f8e4m3 {};
struct f8e5m2 {};

template <class T>
struct dtype_traits;
#define IRON_DTYPE_TRAIT(type, value)            \
  template <>                                    \
  struct dtype_traits<type> {                    \
    static constexpr DType dtype = DType::value; \
  };
IRON_DTYPE_TRAIT(f32, F32)
IRON_DTYPE_TRAIT(f16, F16)
IRON_DTYPE_TRAIT(bf16, BF16)
IRON_DTYPE_TRAIT(i32, I32)
IRON_DTYPE_TRAIT(u32, U32)
IRON_DTYPE_TRAIT(u16, U16)
IRON_DTYPE_TRAIT(u8, U8)
IRON_DTYPE_TRAIT(i8, I8)
IRON_DTYPE_TRAIT(boolean, Bool)
IRON_DTYPE_TRAIT(f8e4m3, F8E4M3)
IRON_DTYPE_TRAIT(f8e5m2, F8E5M2)
#undef IRON_DTYPE_TRAIT

/// A type that can be the element type of a DSL value.
template <class T>
concept Element = requires {
  dtype_traits<T>::dtype;
};

template <Element T>
inline constexpr DType dtype_of = dtype_traits<T>::dtype;

template <class T>
concept FloatElement = Element<T> && is_float(dtype_of<T>);

template <class T>
concept IntegerElement = Element<T> && is_integer(dtype_of<T>);

}  // namespace iron::dsl
