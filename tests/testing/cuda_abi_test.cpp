/// Tests of the host side of the CUDA launch ABI, which needs no GPU: the 4-byte constexpr
/// carriers and the kernel-parameter array.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "../../src/runtime/cuda/kernel_params.hpp"

namespace iron::runtime::cuda {
namespace {

Scalar float_scalar(DType dtype, double value) { return {dtype, value, 0}; }
Scalar int_scalar(DType dtype, std::int64_t value) { return {dtype, 0.0, value}; }

float as_float(std::uint32_t bits) { return std::bit_cast<float>(bits); }
std::int32_t as_int(std::uint32_t bits) { return static_cast<std::int32_t>(bits); }

TEST(CudaAbi, FloatsTravelAsTheNearestFloat) {
  EXPECT_EQ(as_float(constexpr_carrier_bits(float_scalar(DType::F32, 2.5))), 2.5f);
  EXPECT_EQ(as_float(constexpr_carrier_bits(float_scalar(DType::F32, 0.1))), 0.1f);
  // f16 and bf16 are rounded to their type in the kernel, from the same float.
  EXPECT_EQ(as_float(constexpr_carrier_bits(float_scalar(DType::F16, 0.1))), 0.1f);
  EXPECT_EQ(as_float(constexpr_carrier_bits(float_scalar(DType::BF16, -3.0))), -3.0f);
  EXPECT_TRUE(std::isinf(as_float(constexpr_carrier_bits(float_scalar(DType::F32, 1e300)))));
  EXPECT_TRUE(std::isnan(as_float(constexpr_carrier_bits(float_scalar(DType::F32, NAN)))));
}

TEST(CudaAbi, SignedIntegersTravelAsIntWrappedToTheirWidth) {
  EXPECT_EQ(as_int(constexpr_carrier_bits(int_scalar(DType::I32, -7))), -7);
  EXPECT_EQ(as_int(constexpr_carrier_bits(int_scalar(DType::I32, 0x1'0000'0005))), 5);
  EXPECT_EQ(as_int(constexpr_carrier_bits(int_scalar(DType::I8, -128))), -128);
  EXPECT_EQ(as_int(constexpr_carrier_bits(int_scalar(DType::I8, 200))), -56);
  EXPECT_EQ(as_int(constexpr_carrier_bits(int_scalar(DType::I8, -129))), 127);
}

TEST(CudaAbi, UnsignedIntegersTravelAsUnsignedWrappedToTheirWidth) {
  EXPECT_EQ(constexpr_carrier_bits(int_scalar(DType::U32, 4000000000)), 4000000000u);
  EXPECT_EQ(constexpr_carrier_bits(int_scalar(DType::U32, -1)), 0xFFFFFFFFu);
  EXPECT_EQ(constexpr_carrier_bits(int_scalar(DType::U16, 70000)), 70000u - 65536u);
  EXPECT_EQ(constexpr_carrier_bits(int_scalar(DType::U8, 256 + 9)), 9u);
  EXPECT_EQ(constexpr_carrier_bits(int_scalar(DType::U8, -1)), 255u);
}

TEST(CudaAbi, BoolsTravelAsZeroOrOne) {
  EXPECT_EQ(constexpr_carrier_bits(int_scalar(DType::Bool, 0)), 0u);
  EXPECT_EQ(constexpr_carrier_bits(int_scalar(DType::Bool, 1)), 1u);
  EXPECT_EQ(constexpr_carrier_bits(int_scalar(DType::Bool, 2)), 1u);
  EXPECT_EQ(constexpr_carrier_bits(int_scalar(DType::Bool, -1)), 1u);
}

TEST(CudaAbi, ParameterArrayPointsAtAddressesAndCarriers) {
  HostTensor in{DType::F16, {}};
  HostTensor out{DType::F16, {}};
  const std::vector<Arg> args = {&in, &out, float_scalar(DType::F32, 2.5),
                                 int_scalar(DType::U32, 77)};
  const std::vector<CUdeviceptr> addresses = {0x7f0000001000ull, 0x7f0000002000ull, 0, 0};
  KernelParams params(args, addresses);
  ASSERT_EQ(params.size(), 4u);
  void** p = params.data();
  CUdeviceptr address = 0;
  std::memcpy(&address, p[0], sizeof address);
  EXPECT_EQ(address, 0x7f0000001000ull);
  std::memcpy(&address, p[1], sizeof address);
  EXPECT_EQ(address, 0x7f0000002000ull);
  float alpha = 0.0f;
  std::memcpy(&alpha, p[2], sizeof alpha);
  EXPECT_EQ(alpha, 2.5f);
  std::uint32_t n = 0;
  std::memcpy(&n, p[3], sizeof n);
  EXPECT_EQ(n, 77u);
  EXPECT_NE(p[2], p[3]);
}

}  // namespace
}  // namespace iron::runtime::cuda
