/// Exact conversions of the 8-bit floats e4m3 (OCP "e4m3fn": bias 7, no infinities, one NaN
/// pattern per sign, largest 448) and e5m2 (bias 15, IEEE-like, largest finite 57344): to f32
/// exactly; from f32 rounding to nearest even and saturating, as PTX's `cvt.rn.satfinite` does
/// (a finite value or infinity beyond the largest finite becomes the largest finite of its sign;
/// NaN stays NaN).
#pragma once

#include <cstdint>

namespace iron {

std::uint8_t f32_to_f8e4m3_bits(float v);
float f8e4m3_bits_to_f32(std::uint8_t bits);
std::uint8_t f32_to_f8e5m2_bits(float v);
float f8e5m2_bits_to_f32(std::uint8_t bits);

/// The float nearest to `v` that the type holds, saturated to its finite range.
inline float round_to_f8e4m3(float v) { return f8e4m3_bits_to_f32(f32_to_f8e4m3_bits(v)); }
inline float round_to_f8e5m2(float v) { return f8e5m2_bits_to_f32(f32_to_f8e5m2_bits(v)); }

}  // namespace iron
