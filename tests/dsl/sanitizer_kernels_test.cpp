// Deliberately broken kernels: each sanitizer finding of the simulator, reported through the
// test harness with the buffer, index, thread and source line.
#include <gtest/gtest.h>

#include <string>

#include "iron/iron.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
using iron::testing::Rng;
using iron::testing::TestSetup;

/// Runs registered test `name` in f32 on the simulator; returns its failure message.
std::string failure_of(const std::string& name) {
  for (const auto& t : iron::testing::registered_tests()) {
    if (t.name != name) continue;
    auto sim = iron::runtime::make_backend("sim");
    const auto result = iron::testing::run_test(t, DType::F32, *sim, 1);
    EXPECT_FALSE(result.passed) << name << " passed but must fail";
    return result.message;
  }
  ADD_FAILURE() << "no test named " << name;
  return {};
}

int g_select_line = 0;
// The select discards the loaded value past n, but the load itself still reads past the end.
IRON_KERNEL(broken_select_guard, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  auto i = program_id<0>();
  g_select_line = __LINE__ + 1;
  auto v = select(i < n, load(inp[i]), load(inp[0u]));
  IRON_IF(i < n) { store(out[i], v); }
}
IRON_TEST(broken_select_guard, reads_past_the_end, F32(0.0)) {
  std::vector<float> x(100, 1.0f);
  return TestSetup("broken_select_guard", dt)
      .input("inp", x)
      .output("out", 100)
      .constant("n", 100)
      .expect("out", x)
      .grid_1d(100, 64);
}

TEST(SanitizerKernels, OutOfBoundsReadBehindSelect) {
  const std::string msg = failure_of("broken_select_guard.reads_past_the_end");
  EXPECT_NE(msg.find("inp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("100"), std::string::npos) << msg;  // the first bad index
  EXPECT_NE(msg.find("thread"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tests/dsl/sanitizer_kernels_test.cpp:" + std::to_string(g_select_line)),
            std::string::npos)
      << msg;
}

// Every thread writes slot 0 of the same shared buffer between two barriers.
IRON_KERNEL(broken_shared_write_race, (Tensor<T> inp, Out<T> out)) {
  dispatch(reduction, {multiple_of(32), at_least(32)});
  auto s = shared<f32>(1);
  auto t = thread_id<0>();
  store(s[0u], cast<f32>(load(inp[t])));
  barrier();
  store(out[t], cast<T>(load(s[0u])));
}
IRON_TEST(broken_shared_write_race, all_threads_write_one_slot, F32(0.0)) {
  std::vector<float> x(64, 2.0f);
  return TestSetup("broken_shared_write_race", dt)
      .input("inp", x)
      .output("out", 64)
      .expect("out", x)
      .grid_rows(1, 64);
}

TEST(SanitizerKernels, RacyShared) {
  const std::string msg = failure_of("broken_shared_write_race.all_threads_write_one_slot");
  EXPECT_NE(msg.find("race"), std::string::npos) << msg;
  EXPECT_NE(msg.find("shm0"), std::string::npos) << msg;
}

// Each thread reads its neighbour's slot without a barrier after the writes.
IRON_KERNEL(broken_missing_barrier, (Tensor<T> inp, Out<T> out)) {
  dispatch(reduction, {multiple_of(32), at_least(32)});
  auto s = shared<f32>(1024);
  auto t = thread_id<0>();
  store(s[t], cast<f32>(load(inp[t])));
  store(out[t], cast<T>(load(s[(t + 1u) % group_size<0>()])));
}
IRON_TEST(broken_missing_barrier, neighbour_read, F32(0.0)) {
  std::vector<float> x(64, 3.0f);
  return TestSetup("broken_missing_barrier", dt)
      .input("inp", x)
      .output("out", 64)
      .expect("out", x)
      .grid_rows(1, 64);
}

TEST(SanitizerKernels, MissingBarrier) {
  const std::string msg = failure_of("broken_missing_barrier.neighbour_read");
  EXPECT_NE(msg.find("race"), std::string::npos) << msg;
  EXPECT_NE(msg.find("shm0"), std::string::npos) << msg;
}

// Only the first half of the group reaches the barrier.
IRON_KERNEL(broken_divergent_barrier, (Tensor<T> inp, Out<T> out)) {
  dispatch(reduction, {multiple_of(32), at_least(32)});
  auto t = thread_id<0>();
  IRON_IF(t < 16u) { barrier(); }
  store(out[t], load(inp[t]));
}
IRON_TEST(broken_divergent_barrier, half_the_group, F32(0.0)) {
  std::vector<float> x(64, 4.0f);
  return TestSetup("broken_divergent_barrier", dt)
      .input("inp", x)
      .output("out", 64)
      .expect("out", x)
      .grid_rows(1, 64);
}

TEST(SanitizerKernels, BarrierInDivergentBranch) {
  const std::string msg = failure_of("broken_divergent_barrier.half_the_group");
  EXPECT_NE(msg.find("barrier"), std::string::npos) << msg;
  EXPECT_NE(msg.find("16"), std::string::npos) << msg;
}

// A loop whose stride comes from a constexpr that the caller set to zero.
IRON_KERNEL(broken_zero_stride,
            (Tensor<T> inp, Out<T> out, Constexpr<u32> n, Constexpr<u32> stride)) {
  auto i = program_id<0>();
  Var<f32> acc = 0.0f;
  for (auto j : range(0u, n, stride)) acc += cast<f32>(load(inp[j]));
  store(out[i], cast<T>(acc));
}
IRON_TEST(broken_zero_stride, stride_zero, F32(0.0)) {
  return TestSetup("broken_zero_stride", dt)
      .input("inp", std::vector<float>(8, 1.0f))
      .output("out", 32)
      .constant("n", 8)
      .constant("stride", 0)
      .expect("out", std::vector<float>(32, 8.0f))
      .grid_1d(32, 32);
}

TEST(SanitizerKernels, LoopWithZeroStride) {
  const std::string msg = failure_of("broken_zero_stride.stride_zero");
  EXPECT_NE(msg.find("step"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tests/dsl/sanitizer_kernels_test.cpp:"), std::string::npos) << msg;
}

}  // namespace
