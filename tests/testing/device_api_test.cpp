/// The device-resident API: tensors on the GPU (allocated and borrowed), guarded asynchronous
/// launches on created and borrowed streams, events, and a captured graph replayed. The GPU
/// cases skip where there is no CUDA; what every call says without CUDA runs everywhere.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "iron/core/error.hpp"
#include "iron/dsl/geometry.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/runtime/device.hpp"

namespace iron::runtime {
namespace {

std::vector<float> floats_of(const DeviceTensor& t) {
  std::vector<float> v(t.count());
  t.download(std::as_writable_bytes(std::span(v)));
  return v;
}

DeviceTensor tensor_of(const std::vector<float>& values) {
  DeviceTensor t = DeviceTensor::allocate(DType::F32, values.size());
  t.upload(std::as_bytes(std::span(values)));
  return t;
}

Scalar f32(double v) { return {.dtype = DType::F32, .f = v}; }
Scalar u32(std::uint32_t v) { return {.dtype = DType::U32, .i = v}; }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

constexpr std::uint32_t kN = 1000;

std::vector<float> ramp() {
  std::vector<float> x(kN);
  for (std::uint32_t i = 0; i < kN; ++i) x[i] = static_cast<float>(i % 97) * 0.25f - 12.0f;
  return x;
}

TEST(DeviceApi, SaysCudaIsUnavailableWhereItIs) {
  if (cuda_available()) GTEST_SKIP() << "CUDA is available here";
  const std::string allocate = error_of([] { DeviceTensor::allocate(DType::F32, 4); });
  EXPECT_NE(allocate.find("DeviceTensor::allocate: CUDA is unavailable: "), std::string::npos)
      << allocate;
  EXPECT_NE(error_of([] { Stream::create(); }).find("CUDA is unavailable"), std::string::npos);
  const ir::Kernel scale = dsl::kernel_ir_for("iron_scale", DType::F32);
  const std::string launch = error_of([&] {
    launch_async(scale, {f32(1), f32(1), f32(1), u32(1)}, Grid::elementwise(1, 32),
                 Stream::borrow(nullptr));
  });
  EXPECT_NE(launch.find("iron_scale: CUDA is unavailable"), std::string::npos) << launch;
}

TEST(DeviceApi, SizesAreCheckedBeforeAnyCopy) {
  // No device needed: the size check comes first.
  DeviceTensor t = DeviceTensor::borrow(0x1000, DType::F16, 8);
  EXPECT_EQ(t.bytes(), 16u);
  std::vector<std::byte> three(3);
  EXPECT_EQ(error_of([&] { t.upload(three); }),
            "DeviceTensor::upload: 3 bytes given for a tensor of 16 bytes");
  EXPECT_EQ(error_of([&] { t.download(three); }),
            "DeviceTensor::download: 3 bytes asked of a tensor of 16 bytes");
  EXPECT_EQ(error_of([] { DeviceTensor::borrow(0, DType::F32, 4); }),
            "DeviceTensor::borrow: a null address");
}

TEST(DeviceApiGpu, LaunchesAsynchronouslyOnACreatedStream) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA: " << cuda_unavailable_reason();
  const ir::Kernel scale = dsl::kernel_ir_for("iron_scale", DType::F32);
  const auto x = ramp();
  DeviceTensor in = tensor_of(x);
  DeviceTensor out = tensor_of(std::vector<float>(kN, -1.0f));
  const Stream stream = Stream::create();
  Event start, stop;
  start.record(stream);
  launch_async(scale, {&in, &out, f32(2.5), u32(kN)}, Grid::elementwise(kN, 256), stream);
  stop.record(stream);
  stream.synchronize();
  EXPECT_GE(stop.elapsed_ms(start), 0.0f);
  const auto got = floats_of(out);
  for (std::uint32_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], x[i] * 2.5f) << "element " << i;
}

TEST(DeviceApiGpu, BorrowedMemoryAndTheDefaultStream) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA: " << cuda_unavailable_reason();
  const ir::Kernel scale = dsl::kernel_ir_for("iron_scale", DType::F32);
  DeviceTensor owner = tensor_of(ramp());
  DeviceTensor result = DeviceTensor::allocate(DType::F32, kN);
  {
    const DeviceTensor view = DeviceTensor::borrow(owner.address(), DType::F32, kN);
    launch_async(scale, {&view, &result, f32(-1), u32(kN)}, Grid::elementwise(kN, 128),
                 Stream::borrow(nullptr));
  }  // the view goes; the owner's memory stays
  Stream::borrow(nullptr).synchronize();
  const auto x = ramp();
  const auto got = floats_of(result);
  for (std::uint32_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], -x[i]) << "element " << i;
}

TEST(DeviceApiGpu, TheGuardRefusesWrongTensorsAndLaunchesNothing) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA: " << cuda_unavailable_reason();
  const ir::Kernel scale = dsl::kernel_ir_for("iron_scale", DType::F32);
  DeviceTensor in = tensor_of(ramp());
  DeviceTensor small = DeviceTensor::allocate(DType::F32, kN / 2);
  DeviceTensor halves = DeviceTensor::allocate(DType::F16, kN);
  const Stream stream = Stream::create();
  const auto grid = Grid::elementwise(kN, 256);
  const std::string too_small = error_of([&] {
    launch_async(scale, {&in, &small, f32(1), u32(kN)}, grid, stream);
  });
  EXPECT_NE(too_small.find("iron_scale: dispatch refused, nothing launched"), std::string::npos)
      << too_small;
  EXPECT_NE(too_small.find("out"), std::string::npos) << too_small;
  const std::string wrong_type = error_of([&] {
    launch_async(scale, {&in, &halves, f32(1), u32(kN)}, grid, stream);
  });
  EXPECT_NE(wrong_type.find("dispatch refused"), std::string::npos) << wrong_type;
  EXPECT_NE(wrong_type.find("f16"), std::string::npos) << wrong_type;
  stream.synchronize();
}

TEST(DeviceApiGpu, AKeptKernelLaunchesLikeItsIr) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA: " << cuda_unavailable_reason();
  const DeviceKernel scale(dsl::kernel_ir_for("iron_scale", DType::F32));
  DeviceTensor in = tensor_of(ramp());
  DeviceTensor out = DeviceTensor::allocate(DType::F32, kN);
  DeviceTensor small = DeviceTensor::allocate(DType::F32, kN / 2);
  const Stream stream = Stream::create();
  for (const double alpha : {2.0, -0.5}) {  // the second launch reuses the compiled function
    launch_async(scale, {&in, &out, f32(alpha), u32(kN)}, Grid::elementwise(kN, 256), stream);
    stream.synchronize();
    const auto x = ramp();
    const auto got = floats_of(out);
    for (std::uint32_t i = 0; i < kN; ++i) {
      ASSERT_EQ(got[i], static_cast<float>(alpha * x[i])) << "element " << i;
    }
  }
  EXPECT_NE(
      error_of([&] {
        launch_async(scale, {&in, &small, f32(1), u32(kN)}, Grid::elementwise(kN, 256), stream);
      }).find("dispatch refused"),
      std::string::npos);
}

// A kept kernel with specializations finds its module without walking its IR at each launch:
// its launches cost the host a fraction of what launches of the plain IR (hashed and walked each
// time) cost. Timed over enqueues only, a few at a time, so the GPU's queue never fills.
TEST(DeviceApiGpu, AKeptSpecializedKernelLaunchesWithoutWalkingItsIr) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA: " << cuda_unavailable_reason();
  const ir::Kernel traced = dsl::kernel_ir_for("iron_gemm_nk", DType::F32);
  const DeviceKernel kept(traced);
  constexpr std::uint32_t kSide = 64;
  constexpr std::size_t kElements = std::size_t{kSide} * kSide;
  DeviceTensor a = DeviceTensor::allocate(DType::F32, kElements);
  DeviceTensor b = DeviceTensor::allocate(DType::F32, kElements);
  DeviceTensor out = DeviceTensor::allocate(DType::F32, kElements);
  dsl::GeometryQuery query;
  query.constants = {{"m", kSide}, {"n", kSide}, {"k", kSide}, {"alpha", 1.0}};
  query.elements = {{"a", kElements}, {"b", kElements}, {"out", kElements}};
  query.device.multiprocessors = cuda_multiprocessors();
  const auto g = dsl::geometry_for("iron_gemm_nk", query);
  ASSERT_TRUE(g.has_value());
  const Grid grid{{g->groups.x, g->groups.y, g->groups.z},
                  {g->threads.x, g->threads.y, g->threads.z}};
  const std::vector<DeviceArg> args = {&a, &b, &out, u32(kSide), u32(kSide), u32(kSide), f32(1)};
  const Stream stream = Stream::create();
  const auto host_us = [&](const std::function<void()>& launch) {
    launch();  // compiled or loaded once
    stream.synchronize();
    double total = 0.0;
    for (int round = 0; round < 10; ++round) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < 20; ++i) launch();
      total += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                   .count();
      stream.synchronize();
    }
    return total / 200.0;
  };
  const double kept_us = host_us([&] { launch_async(kept, args, grid, stream); });
  const double plain_us = host_us([&] { launch_async(traced, args, grid, stream); });
  EXPECT_LT(kept_us * 4.0, plain_us)
      << "a kept launch " << kept_us << " us, a plain one " << plain_us << " us";
}

TEST(DeviceApiGpu, BorrowedMemoryFreedOrTooSmallIsRefused) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA: " << cuda_unavailable_reason();
  const ir::Kernel scale = dsl::kernel_ir_for("iron_scale", DType::F32);
  DeviceTensor result = DeviceTensor::allocate(DType::F32, kN);
  const auto grid = Grid::elementwise(kN, 128);
  const Stream stream = Stream::borrow(nullptr);
  std::uint64_t freed = 0;
  {
    const DeviceTensor owner = tensor_of(ramp());
    freed = owner.address();
    // More elements than the allocation holds: refused although the guard's sizes agree.
    DeviceTensor wide = DeviceTensor::allocate(DType::F32, 2 * kN);
    const DeviceTensor overstated = DeviceTensor::borrow(owner.address(), DType::F32, 2 * kN);
    const std::string past_end = error_of([&] {
      launch_async(scale, {&overstated, &wide, f32(1), u32(2 * kN)}, Grid::elementwise(2 * kN, 128),
                   stream);
    });
    EXPECT_NE(past_end.find("iron_scale: argument 'inp'"), std::string::npos) << past_end;
    EXPECT_NE(past_end.find("past the end of its allocation"), std::string::npos) << past_end;
  }  // the owner frees its memory; a view of it outlives it
  const DeviceTensor dangling = DeviceTensor::borrow(freed, DType::F32, kN);
  const std::string after_free = error_of([&] {
    launch_async(scale, {&dangling, &result, f32(1), u32(kN)}, grid, stream);
  });
  EXPECT_NE(after_free.find("argument 'inp'"), std::string::npos) << after_free;
  EXPECT_NE(after_free.find("not in any live allocation"), std::string::npos) << after_free;
  // Host memory is not device memory.
  std::vector<float> host(kN);
  const DeviceTensor on_host =
      DeviceTensor::borrow(reinterpret_cast<std::uintptr_t>(host.data()), DType::F32, kN);
  EXPECT_NE(error_of([&] {
              launch_async(scale, {&on_host, &result, f32(1), u32(kN)}, grid, stream);
            }).find("not in any live allocation"),
            std::string::npos);
  // A copy the driver refuses (freed memory) is an error, not a fault: the context stays usable.
  std::vector<float> back(kN);
  const std::string copy =
      error_of([&] { dangling.download(std::as_writable_bytes(std::span(back))); });
  EXPECT_NE(copy.find("cuMemcpyDtoH failed"), std::string::npos) << copy;
  EXPECT_EQ(copy.find("unusable"), std::string::npos) << copy;
  DeviceTensor in = tensor_of(ramp());
  launch_async(scale, {&in, &result, f32(1), u32(kN)}, grid, stream);
  stream.synchronize();  // nothing faulted
  EXPECT_EQ(floats_of(result), ramp());
}

TEST(DeviceApiGpu, ACapturedGraphReplaysItsLaunches) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA: " << cuda_unavailable_reason();
  const ir::Kernel scale = dsl::kernel_ir_for("iron_scale", DType::F32);
  DeviceTensor a = tensor_of(std::vector<float>(kN, 1.0f));
  DeviceTensor b = DeviceTensor::allocate(DType::F32, kN);
  const Stream stream = Stream::create();
  const auto grid = Grid::elementwise(kN, 256);
  // a -> b (×2), b -> a (×3): each replay multiplies a by 6, and capture runs nothing.
  const Graph graph = Graph::capture(stream, [&] {
    launch_async(scale, {&a, &b, f32(2), u32(kN)}, grid, stream);
    launch_async(scale, {&b, &a, f32(3), u32(kN)}, grid, stream);
  });
  stream.synchronize();
  EXPECT_EQ(floats_of(a)[0], 1.0f) << "captured launches do not run";
  for (int i = 0; i < 3; ++i) graph.replay(stream);
  stream.synchronize();
  const auto got = floats_of(a);
  for (std::uint32_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], 216.0f) << "element " << i;
}

}  // namespace
}  // namespace iron::runtime
