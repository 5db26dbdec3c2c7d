/// NVRTC through dlopen: found, compiles to an sm_90 cubin, reports errors and warnings.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

#include "checks_test_support.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/nvrtc.hpp"

namespace iron::checks_test {
namespace {

constexpr const char* kHalfKernel = R"(#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void iron_check_scale(const __half* __restrict__ inp,
                                            __nv_bfloat16* __restrict__ out, float alpha,
                                            unsigned int n) {
  const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16(__half2float(inp[i]) * alpha);
}
)";

/// The message of the iron::Error that compiling `source` throws; "" if it compiles.
std::string compile_error(const std::string& source, const std::string& name) {
  try {
    runtime::compile_cubin(source, name, 90);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

std::uint16_t read_u16(const std::vector<std::byte>& bytes, std::size_t at) {
  return static_cast<std::uint16_t>(std::to_integer<unsigned>(bytes[at]) |
                                    std::to_integer<unsigned>(bytes[at + 1]) << 8U);
}

TEST(ChecksNvrtc, IsFoundWithAVersionAndHeaders) {
  IRON_REQUIRE_NVRTC();
  const auto& status = runtime::nvrtc_status();
  EXPECT_FALSE(status.library_path.empty());
  EXPECT_GE(status.major, 12) << status.library_path;
  EXPECT_FALSE(status.include_path.empty()) << "no cuda_fp16.h found for " << status.library_path;
}

TEST(ChecksNvrtc, CompilesHalfAndBfloat16ToAnSm90Cubin) {
  IRON_REQUIRE_NVRTC();
  const auto result = runtime::compile_cubin(kHalfKernel, "iron_check_scale", 90);
  ASSERT_GE(result.cubin.size(), 64U);
  EXPECT_EQ(result.cubin[0], std::byte{0x7f});
  EXPECT_EQ(result.cubin[1], std::byte{'E'});
  EXPECT_EQ(result.cubin[2], std::byte{'L'});
  EXPECT_EQ(result.cubin[3], std::byte{'F'});
  constexpr std::uint16_t kElfMachineCuda = 190;  // EM_CUDA: a cubin, not PTX text
  EXPECT_EQ(read_u16(result.cubin, 18), kElfMachineCuda);
  EXPECT_TRUE(result.log.empty());
}

TEST(ChecksNvrtc, ReportsACompileErrorWithTheLog) {
  IRON_REQUIRE_NVRTC();
  const std::string message = compile_error(
      R"(extern "C" __global__ void iron_check_broken(float* out) { out[0] = not_declared; })",
      "iron_check_broken");
  EXPECT_NE(message.find("NVRTC failed to compile iron_check_broken"), std::string::npos)
      << message;
  EXPECT_NE(message.find("NVRTC_ERROR_COMPILATION"), std::string::npos) << message;
  EXPECT_NE(message.find("not_declared"), std::string::npos) << message;
}

TEST(ChecksNvrtc, FailsOnAWarning) {
  IRON_REQUIRE_NVRTC();
  const std::string message =
      compile_error(R"(extern "C" __global__ void iron_check_warns(float* out) {
  int unused = 3;
  out[0] = 1.0f;
})",
                    "iron_check_warns");
  EXPECT_NE(message.find("NVRTC compiled iron_check_warns with warnings"), std::string::npos)
      << message;
  EXPECT_NE(message.find("\"unused\" was declared but never referenced"), std::string::npos)
      << message;
}

TEST(ChecksNvrtc, CompilesFromTwoThreadsAtOnce) {
  IRON_REQUIRE_NVRTC();
  std::size_t sizes[2] = {0, 0};
  std::thread other([&] { sizes[1] = runtime::compile_cubin(kHalfKernel, "b", 90).cubin.size(); });
  sizes[0] = runtime::compile_cubin(kHalfKernel, "a", 90).cubin.size();
  other.join();
  EXPECT_GT(sizes[0], 0U);
  EXPECT_EQ(sizes[0], sizes[1]);
}

}  // namespace
}  // namespace iron::checks_test
