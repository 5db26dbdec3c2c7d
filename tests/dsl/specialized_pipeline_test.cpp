/// Specialized pipelines from the DSL (docs/tensor-cores.md, "Specialized pipelines"): a product
/// whose copies a producer warpgroup loads runs exactly on the simulator (on both paths of its
/// target query, the sm_90a one with the producer's TMA ring), sm_90a gets the producer's TMA loop,
/// register budgets and exit, the other targets a guarded compute block; what tracing and compiling
/// refuse.
#include <gtest/gtest.h>

#include <string>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;
using iron::codegen::MmaStrategy;
using iron::codegen::TargetProfile;

constexpr std::uint32_t kRow = 64;     // elements of a 128-byte row of 16-bit values
constexpr std::uint32_t kDepth = 256;  // k: four 64-column steps

// out = a · bᵀ for a [64, 256] and b [64, 256] (as [n, k]): one consumer warpgroup multiplies,
// a second loads each step's boxes by tile copies; products in flight one step, declared as a
// lag of LAG.
IRON_KERNEL_TEMPLATE(specialized_product, (bool BARRIER_IN_COMPUTE, std::uint32_t LAG),
                     (Tensor<T> a, Tensor<T> b, Out<f32> out)) {
  dispatch(tiled, {exactly(256)});
  auto tile_a = ring<T>(kRow * kRow, Swizzled{kRow});
  auto tile_b = ring<T>(kRow * kRow, Swizzled{kRow});
  FragAcc<16, kRow> acc;
  pipelined(
      0u, kDepth, kRow, 3,
      [&](const Expr<u32>& p0, const Expr<u32>& slot) {
        copy_tile_async<kRow, kRow>(tile_a, slot * (kRow * kRow), a, 0u, kRow, kDepth, 0u, p0);
        copy_tile_async<kRow, kRow>(tile_b, slot * (kRow * kRow), b, 0u, kRow, kDepth, 0u, p0);
      },
      [&](const Expr<u32>&, const Expr<u32>& slot) {
        warpgroup_mma<kRow>(acc, tile_a, slot * (kRow * kRow), kRow, tile_b, slot * (kRow * kRow),
                            kRow);
        warpgroup_commit();
        warpgroup_wait(1, acc);
        if constexpr (BARRIER_IN_COMPUTE) barrier();
      },
      LAG, Specialized{128});
  warpgroup_wait(0, acc);
  auto row0 = simdgroup_id() * 16u;
  for (std::uint32_t slot = 0; slot < FragAcc<16, kRow>::elements; ++slot) {
    IRON_IF(simdgroup_id() < 4u) {
      store(out[(row0 + acc.row(slot)) * kRow + acc.col(slot)], acc.get(slot));
    }
  }
}
IRON_KERNEL_VARIANT(specialized_product, kept, false, 1);
IRON_KERNEL_VARIANT(specialized_product, barrier_in_compute, true, 1);
IRON_KERNEL_VARIANT(specialized_product, lag_understated, false, 0);

IRON_KERNEL(specialized_partial_warpgroup, (Tensor<T> x, Out<T> out)) {
  dispatch(tiled, {exactly(256)});
  auto tile = ring<T>(32);
  pipelined(
      0u, 64u, 32u, 2,
      [&](const Expr<u32>& p, const Expr<u32>& slot) {
        store(tile[slot * 32u + thread_id<0>() % 32u], load(x[p + thread_id<0>() % 32u]));
      },
      [&](const Expr<u32>& p, const Expr<u32>& slot) {
        store(out[p + thread_id<0>() % 32u], load(tile[slot * 32u + thread_id<0>() % 32u]));
      },
      0, Specialized{96});
}

TEST(SpecializedPipeline, AProducerLoadedProductRunsExactly) {
  const ir::Kernel k = kernel_ir_for("specialized_product_kept", DType::BF16);
  constexpr std::size_t kElements = std::size_t{kRow} * kDepth;
  std::vector<double> a(kElements);
  std::vector<double> b(kElements);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<double>(i % 7) - 3.0;
    b[i] = static_cast<double>(i % 5) - 2.0;
  }
  iron::runtime::HostTensor ta = sim_test::make_tensor(DType::BF16, a);
  iron::runtime::HostTensor tb = sim_test::make_tensor(DType::BF16, b);
  iron::runtime::HostTensor out = sim_test::zeros(DType::F32, std::size_t{kRow} * kRow);
  const auto found = sim_test::finding(k, {&ta, &tb, &out}, {{1, 1, 1}, {256, 1, 1}});
  ASSERT_FALSE(found.has_value()) << found->what();
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t i = 0; i < kRow; ++i) {
    for (std::size_t j = 0; j < kRow; ++j) {
      double want = 0.0;
      for (std::size_t p = 0; p < kDepth; ++p) want += a[i * kDepth + p] * b[j * kDepth + p];
      EXPECT_EQ(got[i * kRow + j], want) << "at " << i << ", " << j;
    }
  }
}

TEST(SpecializedPipeline, AProducerRefillingASlotAProductStillReadsIsReported) {
  // lag 0 declared, one step's products left in flight: the consumers free a slot their products
  // still read, and the refill is reported on both paths.
  const ir::Kernel k = kernel_ir_for("specialized_product_lag_understated", DType::BF16);
  for (const bool products : {true, false}) {
    iron::runtime::HostTensor a = sim_test::zeros(DType::BF16, std::size_t{kRow} * kDepth);
    iron::runtime::HostTensor b = sim_test::zeros(DType::BF16, std::size_t{kRow} * kDepth);
    iron::runtime::HostTensor out = sim_test::zeros(DType::F32, std::size_t{kRow} * kRow);
    iron::runtime::SimOptions options;
    options.warpgroup_products = products;
    options.compare_target_paths = false;
    const auto found = sim_test::finding(k, {&a, &b, &out}, {{1, 1, 1}, {256, 1, 1}}, options);
    ASSERT_TRUE(found.has_value()) << products;
    EXPECT_EQ(found->kind(), iron::runtime::SimError::Kind::SharedRace) << found->what();
    if (products) {  // the TMA copy meets the pending product; elsewhere the copies race its reads
      EXPECT_NE(std::string(found->what()).find("still reads"), std::string::npos) << found->what();
      EXPECT_NE(std::string(found->what()).find("copy.tensor"), std::string::npos) << found->what();
    }
  }
}

/// How many ops of `kind` the simulator runs for `k` on the path `products` names.
std::size_t simulated_ops(const ir::Kernel& k, bool products, ir::OpKind kind) {
  iron::runtime::HostTensor a = sim_test::zeros(DType::BF16, std::size_t{kRow} * kDepth);
  iron::runtime::HostTensor b = sim_test::zeros(DType::BF16, std::size_t{kRow} * kDepth);
  iron::runtime::HostTensor out = sim_test::zeros(DType::F32, std::size_t{kRow} * kRow);
  iron::runtime::SimOptions options;
  options.warpgroup_products = products;
  const ir::Kernel lowered =
      iron::runtime::simulated_kernel({&k, {&a, &b, &out}, {{1, 1, 1}, {256, 1, 1}}}, options);
  std::size_t n = 0;
  ir::walk(lowered.body, [&](const ir::Op& op) { n += op.kind == kind ? 1 : 0; });
  return n;
}

TEST(SpecializedPipeline, TheSimulatorRunsTheProducersTmaRingWhereSm90aDoes) {
  const ir::Kernel k = kernel_ir_for("specialized_product_kept", DType::BF16);
  EXPECT_EQ(simulated_ops(k, true, ir::OpKind::CopyTensor), 2u);
  EXPECT_EQ(simulated_ops(k, true, ir::OpKind::Exit), 1u);
  EXPECT_GT(simulated_ops(k, true, ir::OpKind::MbarArrive), 0u);
  EXPECT_EQ(simulated_ops(k, false, ir::OpKind::CopyTensor), 0u);
  EXPECT_EQ(simulated_ops(k, false, ir::OpKind::MbarWait), 0u);
}

TEST(SpecializedPipeline, HopperGetsAProducerThatIssuesTheCopiesAndExits) {
  const ir::Kernel k = kernel_ir_for("specialized_product_kept", DType::BF16);
  const auto hopper = iron::codegen::compile_kernel(k, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  const std::string& source = hopper.source;
  EXPECT_NE(source.find("__launch_bounds__(256, 1)"), std::string::npos) << source;
  EXPECT_NE(source.find("setmaxnreg.dec.sync.aligned.u32 40;"), std::string::npos);
  EXPECT_NE(source.find("setmaxnreg.inc.sync.aligned.u32 256;"), std::string::npos);
  EXPECT_NE(source.find("iron_tensor_copy("), std::string::npos);
  EXPECT_NE(source.find("iron_mbarrier_arrive_simdgroup("), std::string::npos);
  EXPECT_NE(source.find("return;"), std::string::npos);
  // one group barrier after the mbarriers' setup and one after the loop, none inside it
  std::size_t barriers = 0;
  for (std::size_t at = source.find("__syncthreads()"); at != std::string::npos;
       at = source.find("__syncthreads()", at + 1)) {
    ++barriers;
  }
  EXPECT_EQ(barriers, 2u) << source;
}

TEST(SpecializedPipeline, ElsewhereEveryThreadLoadsAndTheConsumersCompute) {
  const ir::Kernel k = kernel_ir_for("specialized_product_kept", DType::BF16);
  for (const TargetProfile& t : {TargetProfile::cuda(90), TargetProfile::metal(31)}) {
    const auto c = iron::codegen::compile_kernel(k, t);
    EXPECT_EQ(c.source.find("setmaxnreg"), std::string::npos) << t.name;
    EXPECT_EQ(c.source.find("mbarrier"), std::string::npos) << t.name;
    EXPECT_EQ(c.source.find("return;"), std::string::npos) << t.name;
  }
}

TEST(SpecializedPipeline, ABarrierInTheComputeBlockIsRefusedOnHopper) {
  const ir::Kernel k = kernel_ir_for("specialized_product_barrier_in_compute", DType::BF16);
  try {
    iron::codegen::compile_kernel(k, TargetProfile::cuda(90, MmaStrategy::Wgmma));
    FAIL() << "compiled";
  } catch (const iron::Error& e) {
    EXPECT_NE(std::string(e.what()).find("its producer never reaches it"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("specialized_pipeline_test.cpp"), std::string::npos)
        << e.what();
  }
}

TEST(SpecializedPipeline, ConsumersAreWholeWarpgroups) {
  try {
    kernel_ir_for("specialized_partial_warpgroup", DType::F32);
    FAIL() << "traced";
  } catch (const iron::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("whole warpgroups"), std::string::npos) << e.what();
  }
}

}  // namespace
