/// Tests of test data: seeded generation, rounding through each dtype, packing and unpacking.
#include "iron/testing/data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "iron/core/error.hpp"

namespace iron::testing {
namespace {

constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U32,
                                DType::U8,  DType::I8,  DType::U16,  DType::Bool};

std::vector<unsigned> bytes_of(const runtime::HostTensor& t) {
  std::vector<unsigned> out;
  for (const std::byte b : t.bytes) out.push_back(static_cast<unsigned>(b));
  return out;
}

TEST(Rng, SameSeedGivesSameValues) {
  Rng a(42), b(42), c(43);
  const auto va = a.normal(16);
  EXPECT_EQ(va, b.normal(16));
  EXPECT_NE(va, c.normal(16));
}

TEST(Rng, UniformStaysInRange) {
  Rng rng(1);
  for (const float v : rng.uniform(1000, -2.0f, 3.0f)) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 3.0f);
  }
}

TEST(Rng, IntegersExcludeTheUpperBound) {
  Rng rng(7);
  const auto v = rng.integers(2000, 5, 9);
  for (const std::uint32_t x : v) {
    EXPECT_GE(x, 5u);
    EXPECT_LT(x, 9u);
  }
  EXPECT_NE(std::find(v.begin(), v.end(), 8u), v.end());
  EXPECT_THROW(rng.integers(1, 3, 3), Error);
}

TEST(RoundThrough, F32IsIdentity) {
  const std::vector<float> v = {0.1f, -3.75f, 1e-30f, 65536.5f};
  EXPECT_EQ(round_through(v, DType::F32), v);
}

TEST(RoundThrough, HalfTypesRoundToNearest) {
  EXPECT_EQ(round_through({0.1f}, DType::F16).front(), 0.0999755859375f);
  EXPECT_EQ(round_through({0.1f}, DType::BF16).front(), 0.10009765625f);
  EXPECT_EQ(round_through({70000.0f}, DType::F16).front(), std::numeric_limits<float>::infinity());
  EXPECT_EQ(round_through({70000.0f}, DType::BF16).front(), 70144.0f);
}

TEST(RoundThrough, IntegersTruncateAndSaturate) {
  EXPECT_EQ(round_through({-2.7f, 2.7f}, DType::I32), (std::vector<float>{-2.0f, 2.0f}));
  EXPECT_EQ(round_through({300.0f, -5.0f, 17.9f}, DType::U8),
            (std::vector<float>{255.0f, 0.0f, 17.0f}));
  EXPECT_EQ(round_through({-200.0f, 200.0f}, DType::I8), (std::vector<float>{-128.0f, 127.0f}));
  EXPECT_EQ(round_through({70000.0f}, DType::U16).front(), 65535.0f);
  EXPECT_EQ(round_through({-1.0f, 5e9f}, DType::U32), (std::vector<float>{0.0f, 4294967295.0f}));
  EXPECT_EQ(round_through({std::nanf("")}, DType::I32).front(), 0.0f);
  EXPECT_EQ(round_through({0.0f, -0.5f, 2.0f}, DType::Bool),
            (std::vector<float>{0.0f, 1.0f, 1.0f}));
}

TEST(Pack, WritesLittleEndianElementsOfEachSize) {
  EXPECT_EQ(bytes_of(pack({1.0f}, DType::F32)), (std::vector<unsigned>{0x00, 0x00, 0x80, 0x3F}));
  EXPECT_EQ(bytes_of(pack({1.0f}, DType::F16)), (std::vector<unsigned>{0x00, 0x3C}));
  EXPECT_EQ(bytes_of(pack({1.0f}, DType::BF16)), (std::vector<unsigned>{0x80, 0x3F}));
  EXPECT_EQ(bytes_of(pack({-1.0f}, DType::I32)), (std::vector<unsigned>{0xFF, 0xFF, 0xFF, 0xFF}));
  EXPECT_EQ(bytes_of(pack({4660.0f}, DType::U16)), (std::vector<unsigned>{0x34, 0x12}));
  EXPECT_EQ(bytes_of(pack({-3.0f}, DType::I8)), (std::vector<unsigned>{0xFD}));
  EXPECT_EQ(bytes_of(pack({0.0f, 3.0f}, DType::Bool)), (std::vector<unsigned>{0x00, 0x01}));
  EXPECT_EQ(bytes_of(pack_u32({0xDEADBEEFu}, DType::U32)),
            (std::vector<unsigned>{0xEF, 0xBE, 0xAD, 0xDE}));
}

TEST(Pack, EveryDTypeRoundTripsThroughUnpack) {
  const std::vector<float> v = {0.0f, 1.0f, -1.5f, 3.14159f, 100.25f, -250.0f, 65504.0f};
  for (const DType dt : kAllDTypes) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const auto t = pack(v, dt);
    EXPECT_EQ(t.dtype, dt);
    EXPECT_EQ(t.bytes.size(), v.size() * dtype_size(dt));
    EXPECT_EQ(unpack(t), round_through(v, dt));
  }
}

TEST(Pack, U32ValuesMustFitTheDType) {
  EXPECT_EQ(unpack(pack_u32({255, 7}, DType::U8)), (std::vector<float>{255.0f, 7.0f}));
  EXPECT_THROW(pack_u32({256}, DType::U8), Error);
  EXPECT_THROW(pack_u32({70000}, DType::U16), Error);
  EXPECT_THROW(pack_u32({2}, DType::Bool), Error);
  // Signed dtypes take a negative value as its u32 two's complement, or a raw bit pattern.
  EXPECT_EQ(unpack(pack_u32({static_cast<std::uint32_t>(-3), 0xFD}, DType::I8)),
            (std::vector<float>{-3.0f, -3.0f}));
  EXPECT_THROW(pack_u32({static_cast<std::uint32_t>(-129)}, DType::I8), Error);
  EXPECT_EQ(unpack(pack_u32({0xFFFFFFFFu}, DType::I32)).front(), -1.0f);
  EXPECT_EQ(unpack(pack_u32({3}, DType::F16)).front(), 3.0f);
}

TEST(HoldsInteger, WholeNumbersInRange) {
  EXPECT_TRUE(holds_integer(DType::U32, 4294967295.0));
  EXPECT_FALSE(holds_integer(DType::U32, -1.0));
  EXPECT_FALSE(holds_integer(DType::I32, 2.5));
  EXPECT_TRUE(holds_integer(DType::I8, -128.0));
  EXPECT_FALSE(holds_integer(DType::Bool, 2.0));
  EXPECT_FALSE(holds_integer(DType::U8, std::nan("")));
  EXPECT_FALSE(holds_integer(DType::F32, 1.0));
}

}  // namespace
}  // namespace iron::testing
