/// Target queries: the simulator runs a kernel with target_has(...) once per answer and reports
/// outputs that differ; each target compiles only its own branch and shared memory.
#include <gtest/gtest.h>

#include <string>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/codegen/passes/select_target_paths.hpp"
#include "iron/core/fragment.hpp"
#include "iron/core/printer.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
using iron::runtime::SimError;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;
namespace codegen = iron::codegen;

// out = 2·x, each path its own way; when DIFFER, the path of targets with warpgroup products adds
// one more.
IRON_KERNEL_TEMPLATE(two_paths, (bool DIFFER), (Tensor<f32> x, Out<f32> out)) {
  dispatch(reduction, {multiple_of(32)});
  auto i = thread_id<0>();
  auto staged = shared<f32>(64);
  IRON_IF(target_has(TargetFeature::WarpgroupProducts)) {
    auto wide = shared<f32>(256);
    store(wide[i], load(x[i]) * 2.0f + (DIFFER ? 1.0f : 0.0f));
    store(staged[i], load(wide[i]));
  }
  IRON_ELSE { store(staged[i], load(x[i]) + load(x[i])); }
  store(out[i], load(staged[i]));
}
IRON_KERNEL_VARIANT(two_paths, same, false);
IRON_KERNEL_VARIANT(two_paths, differ, true);

std::optional<SimError> run_two_paths(const std::string& variant, iron::runtime::HostTensor& out) {
  const ir::Kernel k = kernel_ir_for("two_paths_" + variant, DType::F32);
  auto x = sim_test::make_tensor(DType::F32,
                                 {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32});
  return sim_test::finding(k, {&x, &out}, {{1, 1, 1}, {32, 1, 1}});
}

TEST(TargetQueries, BothPathsRunAndAgree) {
  auto out = sim_test::zeros(DType::F32, 32);
  EXPECT_FALSE(run_two_paths("same", out).has_value());
  EXPECT_EQ(sim_test::read_tensor(out)[31], 64.0);
}

TEST(TargetQueries, SimulatorReportsPathsThatDisagree) {
  auto out = sim_test::zeros(DType::F32, 32);
  const auto found = run_two_paths("differ", out);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->kind(), SimError::Kind::TargetPathDependent);
  const std::string what = found->what();
  EXPECT_NE(what.find("two_paths_differ: element 0 of 'out' differs between the path of targets "
                      "with warpgroup products, with paired accumulator columns and with large "
                      "shared memory and the path of targets without warpgroup products, without "
                      "paired accumulator columns and without large shared memory"),
            std::string::npos)
      << what;
}

TEST(TargetQueries, AccumulatorColumnsArePairedOnEveryLaneMapButWmmas) {
  using codegen::MmaStrategy;
  using codegen::TargetProfile;
  constexpr auto kPaired = TargetFeature::PairedAccumulatorColumns;
  EXPECT_TRUE(codegen::target_has(TargetProfile::cuda(80), kPaired));
  EXPECT_TRUE(codegen::target_has(TargetProfile::cuda(90, MmaStrategy::Software), kPaired));
  EXPECT_TRUE(codegen::target_has(TargetProfile::cuda(90, MmaStrategy::Wgmma), kPaired));
  EXPECT_FALSE(codegen::target_has(TargetProfile::cuda(90, MmaStrategy::Wmma), kPaired));
  EXPECT_TRUE(codegen::target_has(TargetProfile::metal(31), kPaired));
  // What the answer claims, under both of the lane maps it is given for.
  const ir::FragmentShape acc{ir::FragmentRole::Acc, 32, 16};
  for (const ir::LaneMap map : {ir::LaneMap::Mma, ir::LaneMap::Simdgroup8x8}) {
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      for (std::uint32_t slot = 0; slot < acc.elements_per_lane(); slot += 2) {
        const ir::FragmentCoord first = ir::fragment_coord(map, acc, lane, slot);
        const ir::FragmentCoord second = ir::fragment_coord(map, acc, lane, slot + 1);
        EXPECT_EQ(second.row, first.row);
        EXPECT_EQ(second.col, first.col + 1);
        EXPECT_EQ(first.col % 2, 0u);
      }
    }
  }
}

TEST(TargetQueries, EachTargetCompilesItsOwnBranchAndSharedMemory) {
  const ir::Kernel k = kernel_ir_for("two_paths_same", DType::F32);
  const auto hopper =
      codegen::compile_kernel(k, codegen::TargetProfile::cuda(90, codegen::MmaStrategy::Wgmma));
  const auto plain = codegen::compile_kernel(k, codegen::TargetProfile::cuda(90));
  const auto metal = codegen::compile_kernel(k, codegen::TargetProfile::metal(31));
  EXPECT_EQ(hopper.lowered.shared.size(), 2u);
  EXPECT_EQ(hopper.lowered.shared_bytes, (64u + 256u) * 4u);
  EXPECT_EQ(plain.lowered.shared.size(), 1u);
  EXPECT_EQ(plain.lowered.shared_bytes, 64u * 4u);
  EXPECT_EQ(metal.lowered.shared.size(), 1u);
  EXPECT_EQ(ir::print_kernel(hopper.lowered).find("target.has"), std::string::npos);
}

}  // namespace
