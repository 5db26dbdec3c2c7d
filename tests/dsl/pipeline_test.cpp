/// Pipelined loops from the DSL: traced as a pipeline over a ring, run by the simulator with the
/// stages sm_90 would use, lowered to cp.async groups on CUDA and to one stage on Metal; and the
/// hazard a hand-written ring invites (a stage overwritten while another simdgroup still reads
/// it), which the simulator reports.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/printer.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;

constexpr std::uint32_t kPiece = 64 * 8;  // one step: 8 halves for each of 64 threads

// out[t] = Σ over steps s of inp[s·512 + (t·8 + 256) % 512]: each thread reads a piece another
// simdgroup copied, through a 3-stage ring.
IRON_KERNEL(piped_sum, (Tensor<f16> inp, Out<f32> out, Constexpr<u32> n)) {
  dispatch(tiled, {exactly(64)});
  auto t = thread_id<0>();
  auto tile = ring<f16>(kPiece);
  Var<f32> acc(0.0f);
  pipelined(
      0u, n, kPiece, 3,
      [&](const Expr<u32>& p, const Expr<u32>& slot) {
        copy_async<8>(tile[slot * kPiece + t * 8u], inp[p + t * 8u], Expr<bool>(true));
      },
      [&](const Expr<u32>&, const Expr<u32>& slot) {
        acc = acc + cast<f32>(load(tile[slot * kPiece + (t * 8u + 256u) % kPiece]));
      });
  store(out[t], Expr<f32>(acc));
}

// The same sum through two hand-written stages, missing the barrier after each step: a fast
// thread starts the copy of step s + 1 into the stage others still read for step s - 1.
int g_overwrite_line = 0;
IRON_KERNEL(ring_without_barrier, (Tensor<f16> inp, Out<f32> out, Constexpr<u32> n)) {
  dispatch(tiled, {exactly(64)});
  auto t = thread_id<0>();
  auto tile = shared<f16>(2 * kPiece);
  Var<f32> acc(0.0f);
  copy_async<8>(tile[t * 8u], inp[t * 8u], Expr<bool>(true));
  async_commit();
  for (auto p : range(0u, n, kPiece)) {
    auto stage = p / kPiece % 2u;
    g_overwrite_line = __LINE__ + 2;
    IRON_IF(p + kPiece < n) {
      copy_async<8>(tile[(1u - stage) * kPiece + t * 8u], inp[p + kPiece + t * 8u],
                    Expr<bool>(true));
    }
    async_commit();
    async_wait(1);
    barrier();
    acc = acc + cast<f32>(load(tile[stage * kPiece + (t * 8u + 256u) % kPiece]));
  }
  async_wait(0);
  store(out[t], Expr<f32>(acc));
}

iron::runtime::Grid one_group() {
  iron::runtime::Grid grid;
  grid.groups = {1, 1, 1};
  grid.group_size = {64, 1, 1};
  return grid;
}

std::vector<double> steps_input(std::uint32_t steps) {
  std::vector<double> in(steps * kPiece);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i % 13) - 6.0;
  return in;
}

TEST(Pipelines, SimulatorSumsEveryStepThroughTheRing) {
  const ir::Kernel k = kernel_ir_for("piped_sum", DType::F32);
  for (const std::uint32_t steps : {1u, 2u, 5u}) {
    const std::vector<double> in = steps_input(steps);
    auto inp = sim_test::make_tensor(DType::F16, in);
    auto out = sim_test::zeros(DType::F32, 64);
    sim_test::run(k, {&inp, &out, sim_test::scalar(DType::U32, steps * kPiece)}, one_group());
    const std::vector<double> got = sim_test::read_tensor(out);
    for (std::uint32_t t = 0; t < 64; ++t) {
      double want = 0.0;
      for (std::uint32_t s = 0; s < steps; ++s) want += in[s * kPiece + (t * 8 + 256) % kPiece];
      EXPECT_EQ(got[t], want) << "steps " << steps << ", thread " << t;
    }
  }
}

TEST(Pipelines, TraceAsAPipelineAndLowerPerTarget) {
  const ir::Kernel k = kernel_ir_for("piped_sum", DType::F32);
  const std::string text = ir::print_kernel(k);
  EXPECT_NE(text.find(" ring"), std::string::npos) << text;
  EXPECT_NE(text.find("stages 3 : u32 {"), std::string::npos) << text;
  EXPECT_NE(text.find("pipeline.index slot"), std::string::npos) << text;
  const auto cuda = iron::codegen::compile_kernel(k, iron::codegen::TargetProfile::cuda(90));
  EXPECT_NE(cuda.source.find("cp.async.wait_group 1;"), std::string::npos) << cuda.source;
  EXPECT_EQ(cuda.lowered.shared_bytes, 3u * kPiece * 2u);
  const auto metal = iron::codegen::compile_kernel(k, iron::codegen::TargetProfile::metal(31));
  EXPECT_EQ(metal.lowered.shared_bytes, kPiece * 2u) << "one stage where copies are synchronous";
}

TEST(Pipelines, SimulatorReportsAStageOverwrittenWhileAnotherSimdgroupReadsIt) {
  const ir::Kernel k = kernel_ir_for("ring_without_barrier", DType::F32);
  auto inp = sim_test::make_tensor(DType::F16, steps_input(4));
  auto out = sim_test::zeros(DType::F32, 64);
  const auto found =
      sim_test::finding(k, {&inp, &out, sim_test::scalar(DType::U32, 4 * kPiece)}, one_group());
  ASSERT_TRUE(found.has_value()) << "the missing barrier went unreported";
  const std::string what = found->what();
  EXPECT_NE(what.find("shm0"), std::string::npos) << what;
  EXPECT_NE(what.find("tests/dsl/pipeline_test.cpp:"), std::string::npos) << what;
}

}  // namespace
