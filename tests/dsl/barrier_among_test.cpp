/// barrier_among (IR barrier.among): a barrier of the group's first threads alone. On the
/// simulator it orders their shared-memory accesses and reports a barrier reached by other
/// threads than exactly those; CUDA takes it at a named barrier of its own; Metal has none and
/// refuses it by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/error.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
using iron::runtime::SimError;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;

constexpr std::uint32_t kThreads = 256;
constexpr std::uint32_t kAmong = 128;

/// Who reaches the barrier.
enum class Reach : std::uint8_t { Among, Everyone, Half };

// The first 128 threads of 256 swap halves through shared memory across barrier_among(128):
// out[t] = x[127 - t] for t < 128; REACH moves who reaches the barrier.
IRON_KERNEL_TEMPLATE(among_swap, (Reach REACH), (Tensor<f32> x, Out<f32> out)) {
  dispatch(tiled, {exactly(kThreads)});
  auto staged = shared<f32>(kAmong);
  auto t = thread_id<0>();
  const std::uint32_t reached = REACH == Reach::Everyone ? kThreads
                                : REACH == Reach::Half   ? kAmong / 2
                                                         : kAmong;
  IRON_IF(t < kAmong) { store(staged[t], load(x[t])); }
  IRON_IF(t < reached) { barrier_among(kAmong); }
  IRON_IF(t < kAmong) { store(out[t], load(staged[kAmong - 1u - t])); }
}
IRON_KERNEL_VARIANT(among_swap, kept, Reach::Among);
IRON_KERNEL_VARIANT(among_swap, everyone, Reach::Everyone);
IRON_KERNEL_VARIANT(among_swap, half, Reach::Half);

struct SwapRun {
  std::optional<SimError> finding;
  std::vector<double> out;
};

SwapRun run(const std::string& variant) {
  const ir::Kernel k = kernel_ir_for("among_swap_" + variant, DType::F32);
  std::vector<double> x(kAmong);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) + 0.5;
  iron::runtime::HostTensor tx = sim_test::make_tensor(DType::F32, x);
  iron::runtime::HostTensor out = sim_test::zeros(DType::F32, kAmong);
  SwapRun r;
  r.finding = sim_test::finding(k, {&tx, &out}, {{1, 1, 1}, {kThreads, 1, 1}});
  if (!r.finding) r.out = sim_test::read_tensor(out);
  return r;
}

TEST(BarrierAmong, TheFirstThreadsSwapThroughSharedMemory) {
  const SwapRun r = run("kept");
  ASSERT_FALSE(r.finding.has_value()) << r.finding->what();
  for (std::uint32_t t = 0; t < kAmong; ++t) EXPECT_EQ(r.out[t], (kAmong - 1 - t) + 0.5) << t;
}

TEST(BarrierAmong, ABarrierReachedByOtherThreadsIsReported) {
  const SwapRun everyone = run("everyone");
  ASSERT_TRUE(everyone.finding.has_value());
  EXPECT_EQ(everyone.finding->kind(), SimError::Kind::DivergentBarrier);
  EXPECT_NE(std::string(everyone.finding->what()).find("reached it too"), std::string::npos)
      << everyone.finding->what();
  const SwapRun half = run("half");
  ASSERT_TRUE(half.finding.has_value());
  EXPECT_EQ(half.finding->kind(), SimError::Kind::DivergentBarrier);
  EXPECT_NE(std::string(half.finding->what()).find("did not"), std::string::npos)
      << half.finding->what();
  EXPECT_NE(std::string(half.finding->what()).find("reached by 64 threads"), std::string::npos)
      << half.finding->what();
}

TEST(BarrierAmong, CudaTakesItAtANamedBarrierAndMetalRefusesIt) {
  const ir::Kernel k = kernel_ir_for("among_swap_kept", DType::F32);
  using iron::codegen::TargetProfile;
  for (const TargetProfile& t : {TargetProfile::cuda(90), TargetProfile::cuda(80)}) {
    const auto c = iron::codegen::compile_kernel(k, t);
    EXPECT_NE(c.source.find(R"(asm volatile("bar.sync 15, 128;" ::: "memory");)"),
              std::string::npos)
        << t.name;
  }
  try {
    iron::codegen::compile_kernel(k, TargetProfile::metal(31));
    FAIL() << "Metal emitted a barrier of part of a threadgroup";
  } catch (const iron::Error& e) {
    EXPECT_NE(std::string(e.what()).find("barrier among the first 128 threads"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("Metal has no barrier"), std::string::npos) << e.what();
  }
}

}  // namespace
