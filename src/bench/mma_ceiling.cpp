/// The mma.sync ceiling: the rate of the instruction the tensor-core fragments lower to on CUDA
/// (mma.sync.m16n8k16, bf16 inputs, f32 accumulation), with nothing else in the loop. It bounds
/// any kernel on the mma.sync strategy, as the cuBLAS figure bounds a product on the device.
#include <string>

#include "iron/bench/device.hpp"
#include "iron/core/error.hpp"

namespace iron::bench {
namespace {

constexpr std::uint32_t kGroups = 32768;  // about 60 waves of 4 groups a multiprocessor
constexpr std::uint32_t kThreads = 128;
constexpr std::uint32_t kSimdgroups = kThreads / 32;
constexpr std::uint32_t kRounds = 16;  // of 32 products a simdgroup
constexpr std::uint32_t kAccumulators = 32;
constexpr double kProductFlops = 2.0 * 16 * 8 * 16;

// Each simdgroup keeps 32 independent accumulators (a 64×64 tile's worth) and multiplies the
// same operands into them; the sums are stored so that nothing is dead.
constexpr const char* kSource = R"(
extern "C" __global__ void __launch_bounds__(128) iron_mma_sync_ceiling(float* out,
                                                                       unsigned int rounds) {
  float c[32][4];
#pragma unroll
  for (int j = 0; j < 32; ++j) c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.0f;
  const unsigned int a0 = threadIdx.x * 0x9e3779b9u, a1 = a0 ^ 0x3c003c00u, a2 = a0 + 7u,
                     a3 = a1 + 11u, b0 = a0 ^ 0x40004000u, b1 = a2 ^ 0x3f803f80u;
  for (unsigned int r = 0; r < rounds; ++r) {
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
          "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
          : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < 32; ++j) sum += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
)";

}  // namespace

std::optional<double> BenchDevice::mma_sync_tflops(int repeat) {
  if (sm() < 80) return std::nullopt;
  const std::size_t count = std::size_t{kGroups} * kThreads;
  const DeviceAddress out = alloc(count * sizeof(float));
  const runtime::Grid grid{{kGroups, 1, 1}, {kThreads, 1, 1}};
  const int handle = prepare_source(
      kSource, "iron_mma_sync_ceiling",
      {ResidentTensor{out, DType::F32, count}, runtime::Scalar{.dtype = DType::U32, .i = kRounds}},
      grid);
  const auto ms = time([&](int) { launch(handle); }, 2, repeat, "the mma.sync ceiling");
  const double flops = kProductFlops * kAccumulators * kRounds * kSimdgroups * kGroups;
  return flops / (spread_of(ms).median * 1e9);
}

}  // namespace iron::bench
