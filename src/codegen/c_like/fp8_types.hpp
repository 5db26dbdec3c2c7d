/// The 8-bit floats in emitted code (docs/dtypes.md, "8-bit floats"): one-byte structs holding
/// the bits, whose conversions to and from f32 spell the arithmetic of include/iron/core/fp8.hpp
/// (exact decode; round to nearest even with saturation), so CUDA, Metal and the simulator round
/// alike. Arithmetic goes through f32 and rounds once, as the 16-bit types' does.
#pragma once

#include <string>
#include <string_view>

namespace iron::codegen::c_like {

/// How a dialect spells what the prelude needs.
struct Fp8Spelling {
  std::string_view qualifier;  ///< before each function: "__device__ __forceinline__", "inline"
  std::string_view member;     ///< before each member function: "__device__ ", ""
  std::string_view as_uint;    ///< f32 bits as an unsigned int: "__float_as_uint"
  std::string_view as_float;   ///< and back: "__uint_as_float"
  std::string_view uint_type;  ///< "unsigned int", "uint"
  std::string_view byte_type;  ///< "unsigned char", "uchar"
  std::string_view rint;       ///< round to nearest even: "rintf", "rint"
  /// Whether f32 → 8-bit float may use the conversion instruction where the device has one
  /// (CUDA: `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` on sm_89 and later, chosen by __CUDA_ARCH__).
  bool conversion_instruction = false;
};

/// The definitions of iron_f8e4m3 and iron_f8e5m2 (those asked for): the struct, explicitly
/// constructible from float and convertible to it, iron_to_f32, iron_f32_to_f8e4m3 /
/// iron_f32_to_f8e5m2, and the arithmetic and comparison operators.
std::string fp8_types_prelude(bool e4m3, bool e5m2, const Fp8Spelling& s);

}  // namespace iron::codegen::c_like
