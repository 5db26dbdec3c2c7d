/// compile_cubin's ptxas report through NVRTC: registers of a plain kernel, and the library's
/// resource check failing on kernels that put a stack frame or spills in local memory, and on a
/// ptxas warning.
#include <gtest/gtest.h>

#include <string>

#include "checks_test_support.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/nvrtc.hpp"
#include "resource_checks.hpp"

namespace iron::checks_test {
namespace {

constexpr const char* kPlainKernel = R"(
extern "C" __global__ void iron_check_plain(const float* __restrict__ inp,
                                            float* __restrict__ out, unsigned int n) {
  const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = inp[i] * 2.0f;
}
)";

/// A per-thread array indexed by loaded values: ptxas must keep it in local memory.
constexpr const char* kStackKernel = R"(
extern "C" __global__ void iron_check_stack(const int* __restrict__ index,
                                            float* __restrict__ out) {
  float scratch[32];
  for (int i = 0; i < 32; ++i) scratch[index[i] & 31] = static_cast<float>(i);
  out[threadIdx.x] = scratch[index[threadIdx.x] & 31];
}
)";

/// 40 live values per thread under a 32-register cap (1024 threads, two groups per SM).
constexpr const char* kSpillKernel = R"(
extern "C" __global__ void __launch_bounds__(1024, 2)
    iron_check_spills(const float* __restrict__ inp, float* __restrict__ out) {
  float keep[40];
#pragma unroll
  for (int i = 0; i < 40; ++i) keep[i] = inp[threadIdx.x + i * blockDim.x];
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 40; ++i) sum += keep[i] * keep[39 - i];
  out[threadIdx.x] = sum * keep[0] * keep[20];
}
)";

/// Launch bounds asking for more threads per SM than there are: a ptxas warning.
constexpr const char* kPtxasWarningKernel = R"(
extern "C" __global__ void __launch_bounds__(1024, 8) iron_check_bounds(float* out) {
  out[threadIdx.x] = 1.0f;
}
)";

TEST(ChecksPtxas, ReportsTheRegistersOfAKernelWithoutLocalMemory) {
  IRON_REQUIRE_NVRTC();
  const auto result = runtime::compile_cubin(kPlainKernel, "iron_check_plain", 90);
  const runtime::FunctionResources* kernel = result.resources.find("iron_check_plain");
  ASSERT_NE(kernel, nullptr);
  EXPECT_TRUE(kernel->entry);
  EXPECT_GT(kernel->registers, 0);
  EXPECT_LE(kernel->registers, 255);
  EXPECT_EQ(resource_problems(result.resources, "iron_check_plain"), "");
}

TEST(ChecksPtxas, TheCheckNamesAStackFrame) {
  IRON_REQUIRE_NVRTC();
  const auto result = runtime::compile_cubin(kStackKernel, "iron_check_stack", 90);
  EXPECT_GT(result.resources.find("iron_check_stack")->stack_frame_bytes, 0);
  const std::string problems = resource_problems(result.resources, "iron_check_stack");
  EXPECT_NE(problems.find("iron_check_stack uses local memory: "), std::string::npos) << problems;
  EXPECT_NE(problems.find(" bytes stack frame, 0 bytes spill stores"), std::string::npos)
      << problems;
}

TEST(ChecksPtxas, TheCheckNamesSpills) {
  IRON_REQUIRE_NVRTC();
  const auto result = runtime::compile_cubin(kSpillKernel, "iron_check_spills", 90);
  const runtime::FunctionResources* kernel = result.resources.find("iron_check_spills");
  ASSERT_NE(kernel, nullptr);
  EXPECT_GT(kernel->spill_store_bytes, 0);
  EXPECT_GT(kernel->spill_load_bytes, 0);
  EXPECT_LE(kernel->registers, 32);
  const std::string problems = resource_problems(result.resources, "iron_check_spills");
  EXPECT_NE(problems.find("iron_check_spills uses local memory: "), std::string::npos) << problems;
}

TEST(ChecksPtxas, TheCheckFailsOnAReportWithoutTheKernel) {
  IRON_REQUIRE_NVRTC();
  const auto result = runtime::compile_cubin(kPlainKernel, "iron_check_plain", 90);
  EXPECT_EQ(resource_problems(result.resources, "iron_check_other"),
            "ptxas's report names no kernel iron_check_other with its registers");
}

TEST(ChecksPtxas, APtxasWarningFailsTheCompile) {
  IRON_REQUIRE_NVRTC();
  std::string message;
  try {
    runtime::compile_cubin(kPtxasWarningKernel, "iron_check_bounds", 90);
  } catch (const Error& error) {
    message = error.what();
  }
  EXPECT_NE(message.find("NVRTC compiled iron_check_bounds with warnings:\nptxas: "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("iron_check_bounds is out of range"), std::string::npos) << message;
}

}  // namespace
}  // namespace iron::checks_test
