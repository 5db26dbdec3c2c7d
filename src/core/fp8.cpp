/// Bit-exact float <-> e4m3 / e5m2 conversions (docs/dtypes.md, "8-bit floats"). The same
/// arithmetic is what the CUDA and Metal preludes spell, so every backend rounds alike.
#include "iron/core/fp8.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace iron {
namespace {

constexpr std::uint32_t kF32AbsMask = 0x7FFFFFFFu;

/// The layout of one 8-bit float: MANT mantissa bits, exponent bias BIAS, its largest finite
/// pattern and its NaN pattern (sign clear).
struct Fp8Format {
  unsigned mant;
  unsigned bias;
  std::uint8_t largest;
  std::uint8_t nan;
  float largest_value;
};

constexpr Fp8Format kE4M3{3, 7, 0x7E, 0x7F, 448.0f};
constexpr Fp8Format kE5M2{2, 15, 0x7B, 0x7F, 57344.0f};

std::uint8_t encode(const Fp8Format& f, float v) {
  const auto x = std::bit_cast<std::uint32_t>(v);
  const auto sign = static_cast<std::uint8_t>((x >> 24) & 0x80u);
  const auto a = std::bit_cast<float>(x & kF32AbsMask);
  if (std::isnan(a)) return sign | f.nan;
  if (a >= f.largest_value) return sign | f.largest;
  // Below the smallest normal 2^(1 - bias), the quantum is 2^(1 - bias - mant): count quanta,
  // ties to even (the scaling by a power of two is exact; 2^mant quanta is the smallest normal).
  const float smallest_normal = std::ldexp(1.0f, 1 - static_cast<int>(f.bias));
  if (a < smallest_normal) {
    const float quanta = std::nearbyint(std::ldexp(a, static_cast<int>(f.bias + f.mant) - 1));
    return sign | static_cast<std::uint8_t>(quanta);
  }
  // A normal: round f32's mantissa to `mant` bits at bit 23 - mant (a carry bumps the exponent),
  // then rebias 127 -> bias. Below the largest finite, the result is at most the largest.
  const unsigned drop = 23 - f.mant;
  const auto ax = std::bit_cast<std::uint32_t>(a);
  const std::uint32_t rounded = ax + ((1u << (drop - 1)) - 1) + ((ax >> drop) & 1u);
  const std::uint32_t exponent = (rounded >> 23) - (127 - f.bias);
  const std::uint32_t mantissa = (rounded >> drop) & ((1u << f.mant) - 1);
  return sign | static_cast<std::uint8_t>((exponent << f.mant) | mantissa);
}

float decode(const Fp8Format& f, std::uint8_t bits, bool has_infinity) {
  const bool negative = (bits & 0x80u) != 0;
  const unsigned exponent = (bits & 0x7Fu) >> f.mant;
  const unsigned mantissa = bits & ((1u << f.mant) - 1);
  const unsigned top = (1u << (7 - f.mant)) - 1;  // the all-ones exponent
  float magnitude = 0.0f;
  if ((bits & 0x7Fu) == f.nan || (has_infinity && exponent == top && mantissa != 0)) {
    magnitude = std::numeric_limits<float>::quiet_NaN();
  } else if (has_infinity && exponent == top) {
    magnitude = std::numeric_limits<float>::infinity();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), 1 - static_cast<int>(f.bias + f.mant));
  } else {
    magnitude =
        std::bit_cast<float>(((exponent + 127 - f.bias) << 23) | (mantissa << (23 - f.mant)));
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace

std::uint8_t f32_to_f8e4m3_bits(float v) { return encode(kE4M3, v); }
float f8e4m3_bits_to_f32(std::uint8_t bits) { return decode(kE4M3, bits, false); }
std::uint8_t f32_to_f8e5m2_bits(float v) { return encode(kE5M2, v); }
float f8e5m2_bits_to_f32(std::uint8_t bits) { return decode(kE5M2, bits, true); }

}  // namespace iron
