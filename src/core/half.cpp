/// Bit-exact float <-> binary16 / bfloat16 conversions (round to nearest even, NaNs made quiet).
#include "iron/core/half.hpp"

#include <bit>

namespace iron {
namespace {

constexpr std::uint32_t kF32AbsMask = 0x7FFFFFFFu;
constexpr std::uint32_t kF32Inf = 0x7F800000u;
constexpr std::uint32_t kF32QuietBit = 0x00400000u;

// Shifts `m` right by `shift` (1..31) bits, rounding to nearest with ties to even.
std::uint32_t shift_round_even(std::uint32_t m, unsigned shift) {
  const std::uint32_t half = 1u << (shift - 1);
  const std::uint32_t rest = m & ((1u << shift) - 1);
  std::uint32_t r = m >> shift;
  if (rest > half || (rest == half && (r & 1u))) ++r;
  return r;
}

}  // namespace

std::uint16_t f32_to_f16_bits(float v) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(v);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t ax = x & kF32AbsMask;
  if (ax > kF32Inf) return sign | 0x7E00u | static_cast<std::uint16_t>((ax >> 13) & 0x3FFu);
  if (ax >= 0x477FF000u) return sign | 0x7C00u;  // 65520 and above round to infinity
  if (ax >= 0x38800000u) {                       // normal half: 2^-14 and above
    // Rebias the exponent (127 -> 15); a mantissa carry correctly bumps the exponent.
    return sign | static_cast<std::uint16_t>(shift_round_even(ax - 0x38000000u, 13));
  }
  const std::uint32_t exp = ax >> 23;
  if (exp < 102) return sign;  // below half the smallest subnormal (2^-25): rounds to zero
  // Subnormal half: units of 2^-24. value = mant24 * 2^(exp - 150) = (mant24 >> (126 - exp)) units.
  const std::uint32_t mant24 = (ax & 0x7FFFFFu) | 0x800000u;
  return sign | static_cast<std::uint16_t>(shift_round_even(mant24, 126 - exp));
}

float f16_bits_to_f32(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1Fu;
  const std::uint32_t mant = bits & 0x3FFu;
  if (exp == 0x1F) {
    const std::uint32_t nan_bits = mant != 0 ? kF32QuietBit | (mant << 13) : 0;
    return std::bit_cast<float>(sign | kF32Inf | nan_bits);
  }
  if (exp == 0) {
    const float magnitude = static_cast<float>(mant) * 0x1p-24f;  // exact
    return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

std::uint16_t f32_to_bf16_bits(float v) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(v);
  if ((x & kF32AbsMask) > kF32Inf) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);
  // Round to nearest even on the low 16 bits; a carry into the exponent gives infinity correctly.
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

float bf16_bits_to_f32(std::uint16_t bits) {
  std::uint32_t x = static_cast<std::uint32_t>(bits) << 16;
  if ((x & kF32AbsMask) > kF32Inf) x |= kF32QuietBit;
  return std::bit_cast<float>(x);
}

}  // namespace iron
