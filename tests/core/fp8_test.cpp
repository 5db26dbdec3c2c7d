/// The 8-bit float conversions against their definition: every pattern decoded to the value its
/// sign, exponent and mantissa fields give; every finite value encoded back to its pattern;
/// midpoints rounded to the even neighbour; saturation and NaN.
#include "iron/core/fp8.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace iron {
namespace {

/// A format from its field widths, with the conversions under test.
struct Format {
  const char* name;
  int mant;
  int bias;
  bool infinities;
  float (*decode)(std::uint8_t);
  std::uint8_t (*encode)(float);
  double largest;

  /// The value of pattern b, from the fields (NaN where the format has none).
  double value(std::uint8_t b) const {
    const int e = (b & 0x7F) >> mant;
    const int m = b & ((1 << mant) - 1);
    const int top = (1 << (7 - mant)) - 1;
    double v = 0;
    if (infinities && e == top) {
      v = m == 0 ? std::numeric_limits<double>::infinity() : std::nan("");
    } else if (!infinities && e == top && m == (1 << mant) - 1) {
      v = std::nan("");
    } else if (e == 0) {
      v = std::ldexp(m, 1 - bias - mant);
    } else {
      v = std::ldexp(1.0 + std::ldexp(m, -mant), e - bias);
    }
    return (b & 0x80) != 0 ? -v : v;
  }
};

const Format kFormats[] = {
    {"e4m3", 3, 7, false, f8e4m3_bits_to_f32, f32_to_f8e4m3_bits, 448.0},
    {"e5m2", 2, 15, true, f8e5m2_bits_to_f32, f32_to_f8e5m2_bits, 57344.0},
};

TEST(Fp8, DecodesEveryPatternToItsFields) {
  for (const Format& f : kFormats) {
    for (int b = 0; b < 256; ++b) {
      const double want = f.value(static_cast<std::uint8_t>(b));
      const float got = f.decode(static_cast<std::uint8_t>(b));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << f.name << " pattern " << b;
      } else {
        EXPECT_EQ(static_cast<double>(got), want) << f.name << " pattern " << b;
        EXPECT_EQ(std::signbit(got), (b & 0x80) != 0) << f.name << " pattern " << b;
      }
    }
  }
}

TEST(Fp8, EncodesEveryFiniteValueToItsPattern) {
  for (const Format& f : kFormats) {
    for (int b = 0; b < 256; ++b) {
      const double v = f.value(static_cast<std::uint8_t>(b));
      if (!std::isfinite(v)) continue;
      EXPECT_EQ(f.encode(static_cast<float>(v)), b) << f.name << " value " << v;
    }
  }
}

TEST(Fp8, RoundsMidpointsToTheEvenNeighbourAndOthersToTheNearest) {
  for (const Format& f : kFormats) {
    for (int b = 0; b < 0x7F; ++b) {
      const double lo = f.value(static_cast<std::uint8_t>(b));
      const double hi = f.value(static_cast<std::uint8_t>(b + 1));
      if (!std::isfinite(hi)) continue;
      const double mid = (lo + hi) / 2;  // exact in f32: one bit past the format's mantissa
      const int even = (b % 2 == 0) ? b : b + 1;
      EXPECT_EQ(f.encode(static_cast<float>(mid)), even) << f.name << " midpoint " << mid;
      EXPECT_EQ(f.encode(std::nextafter(static_cast<float>(mid), 0.0f)), b) << f.name << " " << mid;
      EXPECT_EQ(f.encode(std::nextafter(static_cast<float>(mid), 1e9f)), b + 1)
          << f.name << " " << mid;
      EXPECT_EQ(f.encode(static_cast<float>(-mid)), 0x80 | even) << f.name << " " << -mid;
    }
  }
}

TEST(Fp8, SaturatesBeyondTheLargestFiniteAndKeepsNaN) {
  for (const Format& f : kFormats) {
    const auto largest = static_cast<float>(f.largest);
    const float inf = std::numeric_limits<float>::infinity();
    for (const float v : {largest * 1.04f, largest * 2, 1e30f, inf}) {
      EXPECT_EQ(f.decode(f.encode(v)), largest) << f.name << " " << v;
      EXPECT_EQ(f.decode(f.encode(-v)), -largest) << f.name << " " << -v;
    }
    EXPECT_TRUE(std::isnan(f.decode(f.encode(std::numeric_limits<float>::quiet_NaN()))));
    const float tiny = std::ldexp(1.0f, -f.bias - f.mant);  // half the smallest subnormal
    EXPECT_EQ(f.encode(tiny), 0x00) << f.name;              // a tie: to zero, the even one
    EXPECT_EQ(f.encode(-tiny), 0x80) << f.name;
    EXPECT_EQ(f.encode(std::nextafter(tiny, 1.0f)), 0x01) << f.name;
  }
}

}  // namespace
}  // namespace iron
