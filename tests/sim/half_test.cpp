/// f16 and bf16 conversions: every bit pattern round-trips, ties go to even, NaNs stay NaN.
#include "iron/core/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace iron {
namespace {

bool f16_is_nan(std::uint32_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }
bool bf16_is_nan(std::uint32_t h) { return (h & 0x7F80u) == 0x7F80u && (h & 0x7Fu) != 0; }

// The value of a finite f16 from its definition.
double f16_reference(std::uint32_t h) {
  const int exp = static_cast<int>((h >> 10) & 0x1F);
  const int mant = static_cast<int>(h & 0x3FF);
  const double magnitude = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  return (h & 0x8000u) != 0 ? -magnitude : magnitude;
}

TEST(HalfConversion, EveryF16BitPatternRoundTrips) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_bits_to_f32(static_cast<std::uint16_t>(h));
    const std::uint16_t back = f32_to_f16_bits(f);
    if (f16_is_nan(h)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_EQ(back, h | 0x200u) << "NaN comes back quiet, payload and sign kept: " << h;
    } else {
      ASSERT_EQ(back, h) << h;
      if ((h & 0x7C00u) != 0x7C00u) {
        ASSERT_EQ(f, f16_reference(h)) << h;
      }
    }
  }
  EXPECT_EQ(f16_bits_to_f32(0x7C00), INFINITY);
  EXPECT_EQ(f16_bits_to_f32(0xFC00), -INFINITY);
  EXPECT_TRUE(std::signbit(f16_bits_to_f32(0x8000)));
}

// Between each pair of neighbouring f16 values: the midpoint goes to the even one, anything
// nearer to a neighbour goes to that neighbour.
TEST(HalfConversion, F16RoundsToNearestEven) {
  for (std::uint32_t h = 0; h < 0x7BFF; ++h) {
    for (std::uint32_t sign : {0u, 0x8000u}) {
      const float lo = f16_bits_to_f32(static_cast<std::uint16_t>(h | sign));
      const float hi = f16_bits_to_f32(static_cast<std::uint16_t>((h + 1) | sign));
      const auto mid = static_cast<float>((double{lo} + hi) / 2);  // exact: 12 significant bits
      ASSERT_EQ(f32_to_f16_bits(mid), ((h & 1) == 0 ? h : h + 1) | sign) << h;
      ASSERT_EQ(f32_to_f16_bits(std::nextafter(mid, lo)), h | sign) << h;
      ASSERT_EQ(f32_to_f16_bits(std::nextafter(mid, hi)), (h + 1) | sign) << h;
    }
  }
  EXPECT_EQ(f32_to_f16_bits(65519.99f), 0x7BFF);
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7C00) << "the tie above the largest f16 goes to inf";
  EXPECT_EQ(f32_to_f16_bits(1e30f), 0x7C00);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000) << "tie with zero goes to zero";
  EXPECT_EQ(f32_to_f16_bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(f32_to_f16_bits(-1e-30f), 0x8000);
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
}

#ifdef __FLT16_MAX__
// The compiler's own conversion is an independent reference.
TEST(HalfConversion, F16AgreesWithCompilerConversion) {
  for (std::uint64_t x = 0; x < 0x100000000ull; x += 2039) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(x));
    if (std::isnan(f)) continue;
    const auto want = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
    ASSERT_EQ(f32_to_f16_bits(f), want) << std::hex << x;
  }
}
#endif

TEST(HalfConversion, NansStayNanAndBecomeQuiet) {
  const float signaling = std::bit_cast<float>(0xFF800001u);
  EXPECT_EQ(f32_to_f16_bits(signaling), 0xFE00);
  EXPECT_EQ(f32_to_bf16_bits(signaling), 0xFFC0);
  EXPECT_EQ(f32_to_f16_bits(std::bit_cast<float>(0x7FC00000u)), 0x7E00);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(f16_bits_to_f32(0x7C01)), 0x7FC02000u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(bf16_bits_to_f32(0x7F81)), 0x7FC10000u);
  // A NaN whose payload sits only in the low bits must not turn into infinity.
  EXPECT_TRUE(f16_is_nan(f32_to_f16_bits(std::bit_cast<float>(0x7F800001u))));
  EXPECT_TRUE(bf16_is_nan(f32_to_bf16_bits(std::bit_cast<float>(0x7F800001u))));
}

TEST(HalfConversion, EveryBf16BitPatternRoundTrips) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = bf16_bits_to_f32(static_cast<std::uint16_t>(h));
    const std::uint16_t back = f32_to_bf16_bits(f);
    if (bf16_is_nan(h)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_EQ(back, h | 0x40u) << h;
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(f), h << 16) << h;
      ASSERT_EQ(back, h) << h;
    }
  }
}

TEST(HalfConversion, Bf16RoundsToNearestEven) {
  for (std::uint32_t h = 0; h < 0x7F7F; ++h) {
    for (std::uint32_t sign : {0u, 0x8000u}) {
      const float lo = bf16_bits_to_f32(static_cast<std::uint16_t>(h | sign));
      const float hi = bf16_bits_to_f32(static_cast<std::uint16_t>((h + 1) | sign));
      const auto mid = static_cast<float>((double{lo} + hi) / 2);  // exact: 9 significant bits
      ASSERT_EQ(f32_to_bf16_bits(mid), ((h & 1) == 0 ? h : h + 1) | sign) << h;
      ASSERT_EQ(f32_to_bf16_bits(std::nextafter(mid, lo)), h | sign) << h;
      ASSERT_EQ(f32_to_bf16_bits(std::nextafter(mid, hi)), (h + 1) | sign) << h;
    }
  }
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::max()), 0x7F80) << "rounds up to inf";
  EXPECT_EQ(f32_to_bf16_bits(-INFINITY), 0xFF80);
  EXPECT_EQ(round_to_bf16(1.0f + 0x1p-8f), 1.0f) << "tie to even";
  EXPECT_EQ(round_to_bf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f) << "tie to even, upwards";
}

}  // namespace
}  // namespace iron
