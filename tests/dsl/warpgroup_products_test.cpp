/// Warpgroup products: each rule the simulator enforces (docs/tensor-cores.md, "Warpgroup
/// products") broken once, and the lowering each CUDA profile and Metal give the same kernel.
#include <gtest/gtest.h>

#include <string>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
using iron::runtime::SimError;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;

/// How a kernel breaks the rules, one way a variant.
enum class Breach : std::uint8_t {
  None,
  ReadBeforeWait,
  OverwriteOperand,
  NoFence,
  NeverWaited,
  MisalignedOperand,
  PartOfTheWarpgroup
};

constexpr std::uint32_t kRow = 64;  // elements of a 128-byte row of 16-bit values

// out = a · bᵀ for a [64, 64] and b [64, 64] (as [n, k]), one warpgroup, the tiles stored into
// swizzled shared rows by plain stores; BREACH breaks one rule.
IRON_KERNEL_TEMPLATE(wg_rules, (Breach BREACH), (Tensor<T> a, Tensor<T> b, Out<f32> out)) {
  dispatch(tiled, {exactly(128)});
  auto tile_a = shared<T>(kRow * kRow, Swizzled{kRow});
  auto tile_b = shared<T>(kRow * kRow, Swizzled{kRow});
  for (auto i : range(thread_id<0>(), kRow * kRow, 128u)) {
    store(tile_a[i], load(a[i]));
    store(tile_b[i], load(b[i]));
  }
  if constexpr (BREACH != Breach::NoFence) fence_async_proxy();
  barrier();
  FragAcc<16, kRow> acc;
  const std::uint32_t a_offset = BREACH == Breach::MisalignedOperand ? 8u : 0u;
  if constexpr (BREACH == Breach::PartOfTheWarpgroup) {
    IRON_IF(simdgroup_id() < 2u) {
      warpgroup_mma<kRow>(acc, tile_a, a_offset, kRow, tile_b, 0u, kRow);
    }
  } else {
    warpgroup_mma<kRow>(acc, tile_a, a_offset, kRow, tile_b, 0u, kRow);
  }
  warpgroup_commit();
  if constexpr (BREACH == Breach::ReadBeforeWait) store(out[thread_id<0>()], acc.get(0));
  if constexpr (BREACH == Breach::OverwriteOperand) store(tile_b[thread_id<0>()], 0.0f);
  if constexpr (BREACH == Breach::NeverWaited) {
    store(out[thread_id<0>()], 0.0f);
    return;
  }
  warpgroup_wait(0, acc);
  auto row0 = simdgroup_id() * 16u;
  for (std::uint32_t slot = 0; slot < FragAcc<16, kRow>::elements; ++slot) {
    store(out[(row0 + acc.row(slot)) * kRow + acc.col(slot)], acc.get(slot));
  }
}
IRON_KERNEL_VARIANT(wg_rules, kept, Breach::None);
IRON_KERNEL_VARIANT(wg_rules, read_before_wait, Breach::ReadBeforeWait);
IRON_KERNEL_VARIANT(wg_rules, overwrite_operand, Breach::OverwriteOperand);
IRON_KERNEL_VARIANT(wg_rules, no_fence, Breach::NoFence);
IRON_KERNEL_VARIANT(wg_rules, never_waited, Breach::NeverWaited);
IRON_KERNEL_VARIANT(wg_rules, misaligned_operand, Breach::MisalignedOperand);
IRON_KERNEL_VARIANT(wg_rules, part_of_the_warpgroup, Breach::PartOfTheWarpgroup);

/// The finding of the variant on small integers, one group of `threads`; nullopt when clean.
std::optional<SimError> finding_of(const std::string& variant, std::uint32_t threads = 128) {
  const ir::Kernel k = kernel_ir_for("wg_rules_" + variant, DType::BF16);
  std::vector<double> a(kRow * kRow);
  std::vector<double> b(kRow * kRow);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<double>(i % 7) - 3.0;
    b[i] = static_cast<double>(i % 5) - 2.0;
  }
  iron::runtime::HostTensor ta = sim_test::make_tensor(DType::BF16, a);
  iron::runtime::HostTensor tb = sim_test::make_tensor(DType::BF16, b);
  iron::runtime::HostTensor out = sim_test::zeros(DType::F32, kRow * kRow);
  auto found = sim_test::finding(k, {&ta, &tb, &out}, {{1, 1, 1}, {threads, 1, 1}});
  if (found || variant != "kept") return found;
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t i = 0; i < kRow; ++i) {
    for (std::size_t j = 0; j < kRow; ++j) {
      double want = 0.0;
      for (std::size_t p = 0; p < kRow; ++p) want += a[i * kRow + p] * b[j * kRow + p];
      EXPECT_EQ(got[i * kRow + j], want) << "at " << i << ", " << j;
    }
  }
  return std::nullopt;
}

void expect_finding(const std::string& variant, SimError::Kind kind, const std::string& words,
                    std::uint32_t threads = 128) {
  const auto found = finding_of(variant, threads);
  ASSERT_TRUE(found.has_value()) << variant << " ran clean";
  EXPECT_EQ(found->kind(), kind) << found->what();
  EXPECT_NE(std::string(found->what()).find(words), std::string::npos) << found->what();
}

TEST(WarpgroupProducts, AKernelThatKeepsTheRulesRunsExactly) {
  EXPECT_FALSE(finding_of("kept").has_value());
}

TEST(WarpgroupProducts, ReadingTheAccumulatorBeforeItsWaitIsReported) {
  expect_finding("read_before_wait", SimError::Kind::PendingProduct, "still writes (wg.wait");
}

TEST(WarpgroupProducts, OverwritingAnOperandBeforeTheWaitIsReported) {
  expect_finding("overwrite_operand", SimError::Kind::SharedRace, "still reads");
}

TEST(WarpgroupProducts, AStoreReadWithoutAProxyFenceIsReported) {
  expect_finding("no_fence", SimError::Kind::AsyncProxy, "no fence.proxy.async");
}

TEST(WarpgroupProducts, ProductsNeverWaitedForAreReported) {
  expect_finding("never_waited", SimError::Kind::PendingProduct, "never waited for");
}

TEST(WarpgroupProducts, AnOperandOffTheSwizzledRowsIsReported) {
  expect_finding("misaligned_operand", SimError::Kind::BadArgument, "multiple of 8 rows");
}

TEST(WarpgroupProducts, AProductOfPartOfAWarpgroupIsReported) {
  expect_finding("part_of_the_warpgroup", SimError::Kind::DivergentBarrier, "not whole");
}

TEST(WarpgroupProducts, AKernelOfProductsMustAskForWholeWarpgroups) {
  const ir::Kernel k = kernel_ir_for("wg_rules_kept", DType::BF16);
  ir::Kernel loose = k;
  loose.dispatch.group_size_rules.clear();
  loose.dispatch.group_size_rules.push_back({ir::SizeRule::Kind::MultipleOf, 64, "", 1});
  EXPECT_NE(sim_test::verifier_findings(loose).find("multiple of 128 (whole warpgroups)"),
            std::string::npos)
      << sim_test::verifier_findings(loose);
}

TEST(WarpgroupProducts, HopperRunsThemAsWgmmaAndEveryOtherTargetAsFragmentProducts) {
  const ir::Kernel k = kernel_ir_for("wg_rules_kept", DType::BF16);
  using iron::codegen::MmaStrategy;
  using iron::codegen::TargetProfile;
  const auto hopper = iron::codegen::compile_kernel(k, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  EXPECT_EQ(sim_test::lowered_ops(hopper, ir::OpKind::WgMma), 1u);
  EXPECT_EQ(sim_test::lowered_ops(hopper, ir::OpKind::FragMma), 0u);
  EXPECT_NE(hopper.source.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"),
            std::string::npos);
  EXPECT_NE(hopper.source.find("fence.proxy.async.shared::cta"), std::string::npos);
  EXPECT_TRUE(hopper.arch_specific);
  for (const TargetProfile& t :
       {TargetProfile::cuda(90), TargetProfile::cuda(80),
        TargetProfile::cuda(90, MmaStrategy::Wmma), TargetProfile::metal(31)}) {
    const auto c = iron::codegen::compile_kernel(k, t);
    EXPECT_EQ(sim_test::lowered_ops(c, ir::OpKind::WgMma), 0u) << t.name;
    EXPECT_EQ(sim_test::lowered_ops(c, ir::OpKind::WgWait) +
                  sim_test::lowered_ops(c, ir::OpKind::WgCommit) +
                  sim_test::lowered_ops(c, ir::OpKind::FenceProxyAsync),
              0u)
        << t.name;
    EXPECT_EQ(sim_test::lowered_ops(c, ir::OpKind::FragMma), kRow / 16) << t.name;
    EXPECT_EQ(c.source.find("wgmma"), std::string::npos) << t.name;
    EXPECT_FALSE(c.arch_specific) << t.name;
  }
}

// out = a · bᵀ for a [64, 256] and b [64, 256], one warpgroup, 64-column steps through a 3-stage
// pipelined ring; each step's product is waited for with wg.wait WAIT, in a pipeline of lag LAG.
IRON_KERNEL_TEMPLATE(wg_piped, (std::uint32_t WAIT, std::uint32_t LAG),
                     (Tensor<T> a, Tensor<T> b, Out<f32> out)) {
  dispatch(tiled, {exactly(128)});
  constexpr std::uint32_t kDepth = 4 * kRow;
  auto tile_a = ring<T>(kRow * kRow, Swizzled{kRow});
  auto tile_b = ring<T>(kRow * kRow, Swizzled{kRow});
  FragAcc<16, kRow> acc;
  const auto copy = [&](const Tensor<T>& src, const Shared<T>& tile, const Expr<u32>& slot,
                        const Expr<u32>& p0) {
    constexpr std::uint32_t kW = 16 / lane_bytes<T>();
    for (auto v : range(thread_id<0>(), kRow * kRow / kW, 128u)) {
      auto r = v / (kRow / kW);
      auto c = v % (kRow / kW) * kW;
      copy_async<kW>(tile[slot * (kRow * kRow) + r * kRow + c], src[r * kDepth + p0 + c], true);
    }
  };
  pipelined(
      0u, kDepth, kRow, 3,
      [&](const Expr<u32>& p0, const Expr<u32>& slot) {
        copy(a, tile_a, slot, p0);
        copy(b, tile_b, slot, p0);
      },
      [&](const Expr<u32>&, const Expr<u32>& slot) {
        warpgroup_mma<kRow>(acc, tile_a, slot * (kRow * kRow), kRow, tile_b, slot * (kRow * kRow),
                            kRow);
        warpgroup_commit();
        warpgroup_wait(WAIT, acc);
      },
      LAG);
  warpgroup_wait(0, acc);
  auto row0 = simdgroup_id() * 16u;
  for (std::uint32_t slot = 0; slot < FragAcc<16, kRow>::elements; ++slot) {
    store(out[(row0 + acc.row(slot)) * kRow + acc.col(slot)], acc.get(slot));
  }
}
IRON_KERNEL_VARIANT(wg_piped, lagged, 1u, 1u);
IRON_KERNEL_VARIANT(wg_piped, pending_without_lag, 1u, 0u);

std::optional<SimError> piped_finding(const std::string& variant) {
  const ir::Kernel k = kernel_ir_for("wg_piped_" + variant, DType::BF16);
  std::vector<double> a(kRow * 4 * kRow);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 7) - 3.0;
  iron::runtime::HostTensor ta = sim_test::make_tensor(DType::BF16, a);
  iron::runtime::HostTensor tb = sim_test::make_tensor(DType::BF16, a);
  iron::runtime::HostTensor out = sim_test::zeros(DType::F32, kRow * kRow);
  auto found = sim_test::finding(k, {&ta, &tb, &out}, {{1, 1, 1}, {128, 1, 1}});
  if (found) return found;
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t i = 0; i < kRow; ++i) {
    for (std::size_t j = 0; j < kRow; ++j) {
      double want = 0.0;
      for (std::size_t p = 0; p < 4 * kRow; ++p) want += a[i * 4 * kRow + p] * a[j * 4 * kRow + p];
      EXPECT_EQ(got[i * kRow + j], want) << "at " << i << ", " << j;
    }
  }
  return std::nullopt;
}

TEST(WarpgroupProducts, APipelineWithALagLeavesProductsInFlight) {
  const auto found = piped_finding("lagged");
  EXPECT_FALSE(found.has_value()) << found->what();
}

TEST(WarpgroupProducts, AProductLeftInFlightWithoutALagIsReported) {
  const auto found = piped_finding("pending_without_lag");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->kind(), SimError::Kind::SharedRace) << found->what();
  // Another simdgroup's copy refills the slot before a barrier follows the product's wait.
  EXPECT_NE(std::string(found->what()).find("with no barrier in between"), std::string::npos)
      << found->what();
}

}  // namespace
