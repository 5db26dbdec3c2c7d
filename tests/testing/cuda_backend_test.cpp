/// Tests of the CUDA backend: on any machine, the registry's statuses and errors; on a machine
/// with a CUDA device (skipped elsewhere), a library kernel run on the GPU against the simulator,
/// the module cache's events and the guard with the device's limits.
#include "../../src/runtime/cuda/cuda_backend.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>

#include "cuda_test_support.hpp"
#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/runtime/device_info.hpp"
#include "iron/runtime/module_cache.hpp"
#include "iron/runtime/sim.hpp"
#include "iron/testing/data.hpp"

namespace iron::runtime {
namespace {

using cuda_test::Contains;
using cuda_test::ScopedEnv;
using cuda_test::TempDir;

const BackendStatus& cuda_status() { return cuda::cuda_backend_status(); }

std::string error_of(std::string_view name) {
  try {
    make_backend(name);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CudaBackend, StatusesNameEveryBackend) {
  const auto statuses = backend_statuses();
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_EQ(statuses[0].name, "sim");
  EXPECT_TRUE(statuses[0].available);
  EXPECT_EQ(statuses[1].name, "cuda");
  EXPECT_EQ(statuses[1].available, cuda_status().available);
  EXPECT_EQ(statuses[1].reason.empty(), statuses[1].available) << statuses[1].reason;
  EXPECT_EQ(statuses[2].name, "metal");
  EXPECT_FALSE(statuses[2].available);
#ifndef __APPLE__
  EXPECT_EQ(statuses[2].reason,
            "Metal runs only on Apple platforms; MSL is still emitted by `iron build`");
#endif
}

TEST(CudaBackend, UnavailableCudaSaysWhy) {
  if (cuda_status().available) GTEST_SKIP() << "CUDA is available here";
  EXPECT_FALSE(cuda_status().reason.empty());
  EXPECT_EQ(error_of("cuda"), "backend cuda is not available: " + cuda_status().reason);
  EXPECT_EQ(make_backend("auto")->name(), "sim");
  const CudaReport& report = cuda_report();
  if (!report.driver_loaded) {
    EXPECT_TRUE(report.devices.empty());
    EXPECT_EQ(cuda_status().reason, report.reason);
  }
}

TEST(CudaBackend, UnknownBackendIsNamed) {
  EXPECT_EQ(error_of("tpu"), "unknown backend 'tpu': choose auto, sim, cuda or metal");
}

TEST(CudaBackend, AutoPicksCudaWhenAvailable) {
  if (!cuda_status().available) GTEST_SKIP() << "no CUDA: " << cuda_status().reason;
  EXPECT_EQ(make_backend("auto")->name(), "cuda");
  EXPECT_EQ(make_backend("cuda")->name(), "cuda");
  const CudaReport& report = cuda_report();
  ASSERT_FALSE(report.devices.empty());
  EXPECT_GE(report.devices[0].sm(), 80);
  EXPECT_GT(report.devices[0].multiprocessors, 0);
  EXPECT_GT(report.devices[0].memory_bytes, 0u);
}

/// iron_scale over n elements into an output of n + 8, so the last 8 must keep their poison.
struct ScaleCase {
  static constexpr std::uint32_t kN = 1000;  // a ragged last group of 256
  ir::Kernel kernel;
  HostTensor inp;
  HostTensor out;
  explicit ScaleCase(DType dtype) : kernel(dsl::kernel_ir_for("iron_scale", dtype)) {
    std::vector<float> x(kN);
    for (std::uint32_t i = 0; i < kN; ++i) x[i] = static_cast<float>(i % 97) * 0.25f - 12.0f;
    inp = testing::pack(x, dtype);
    out = testing::pack(std::vector<float>(kN, std::numeric_limits<float>::quiet_NaN()), dtype);
  }
  Launch launch(HostTensor& into, Grid grid = Grid::elementwise(kN, 256)) {
    return {&kernel, {&inp, &into, Scalar{DType::F32, 2.5, 0}, Scalar{DType::U32, 0.0, kN}}, grid};
  }
};

std::vector<CacheEvent> events_of(const std::string& symbol, std::size_t from) {
  std::vector<CacheEvent> found;
  const std::vector<CacheEvent> all = cache_events();
  for (std::size_t i = from; i < all.size(); ++i) {
    if (all[i].symbol == symbol) found.push_back(all[i]);
  }
  return found;
}

TEST(CudaBackendGpu, ScaleMatchesTheSimulator) {
  if (!cuda_status().available) GTEST_SKIP() << "no CUDA: " << cuda_status().reason;
  const TempDir cache;
  const ScopedEnv cache_dir("IRON_CACHE_DIR", cache.path().string());
  ScaleCase c(DType::F16);
  HostTensor on_sim = c.out;
  HostTensor on_gpu = c.out;
  sim_run(c.launch(on_sim));

  const std::size_t before = cache_events().size();
  cuda::CudaBackend first;
  first.run(c.launch(on_gpu));
  EXPECT_EQ(on_gpu.bytes, on_sim.bytes);
  for (const float v : testing::unpack(on_gpu)) EXPECT_FALSE(std::isnan(v));
  EXPECT_GT(first.last_kernel_ms(), 0.0);

  const std::vector<CacheEvent> cold = events_of("iron_scale_f16", before);
  ASSERT_EQ(cold.size(), 1u);
  EXPECT_EQ(cold[0].kind, CacheEventKind::Compiled);
  EXPECT_EQ(BlobStore(cache.path(), ".cubin").summary().entries, 1u);
  std::cout << "iron_scale_f16: cold compile " << cold[0].ms << " ms, kernel "
            << first.last_kernel_ms() << " ms\n";

  // A second backend (another thread's, in `iron test`) reuses the loaded module.
  HostTensor again = c.out;
  cuda::CudaBackend second;
  second.run(c.launch(again));
  EXPECT_EQ(again.bytes, on_sim.bytes);
  const std::vector<CacheEvent> warm = events_of("iron_scale_f16", before);
  ASSERT_EQ(warm.size(), 2u);
  EXPECT_EQ(warm[1].kind, CacheEventKind::MemoryHit);
}

TEST(CudaBackendGpu, GuardUsesTheDeviceLimits) {
  if (!cuda_status().available) GTEST_SKIP() << "no CUDA: " << cuda_status().reason;
  ScaleCase c(DType::F32);
  cuda::CudaBackend backend;
  HostTensor out = c.out;
  Grid too_wide = Grid::elementwise(ScaleCase::kN, 256);
  too_wide.group_size.x = 4096;
  try {
    backend.run(c.launch(out, too_wide));
    FAIL() << "a group of 4096 threads was launched";
  } catch (const DispatchError& e) {
    EXPECT_TRUE(Contains(e.what(), "iron_scale: dispatch refused, nothing launched: "));
    EXPECT_TRUE(Contains(e.what(), "exceeds the device limit of 1024"));
  }
  EXPECT_EQ(out.bytes, c.out.bytes) << "a refused launch must leave the outputs alone";
}

}  // namespace
}  // namespace iron::runtime
