/// Warpgroup products with A in registers (the register form) and B row-major, in one swizzled
/// row or in panels of one: exact on the simulator against a product written from the math, the
/// A fragment held until the wait, panels off the swizzle's atoms reported, and each target's
/// lowering (wgmma's register form with an MN-major B on sm_90a, fragment products elsewhere).
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

constexpr std::uint32_t kK = 128;     // the product's depth
constexpr std::uint32_t kPanel = 64;  // one 128-byte swizzled row of 16-bit values
constexpr std::size_t kRows = 64;     // a warpgroup's rows

// out = a · b for a [64, kK] (read into each simdgroup's A fragment) and b [kK, N] row-major,
// stored into swizzled shared rows in panels of 64 columns, kK · 64 + PAD elements apart (one
// panel where N is 64); OVERWRITE writes the A fragment before the wait.
IRON_KERNEL_TEMPLATE(wg_registers, (std::uint32_t N, std::uint32_t PAD, bool OVERWRITE),
                     (Tensor<T> a, Tensor<T> b, Out<f32> out)) {
  dispatch(tiled, {exactly(128)});
  constexpr std::uint32_t kPanelStride = kK * kPanel + PAD;
  auto tile_b = shared<T>(kPanelStride * (N / kPanel), Swizzled{kPanel});
  for (auto i : range(thread_id<0>(), kK * N, 128u)) {
    auto r = i / N;
    auto c = i % N;
    store(tile_b[c / kPanel * kPanelStride + r * kPanel + c % kPanel], load(b[i]));
  }
  fence_async_proxy();
  barrier();
  auto row0 = simdgroup_id() * 16u;
  FragA<T, 16, kK> fa;
  fa.load(a, row0 * kK, kK);
  FragAcc<16, N> acc;
  if constexpr (N == kPanel) {
    warpgroup_mma(acc, fa, tile_b, 0u, kPanel);
  } else {
    warpgroup_mma(acc, fa, tile_b, 0u, kPanel, row_major, kPanelStride);
  }
  warpgroup_commit();
  if constexpr (OVERWRITE) fa.load(a, 0u, kK);
  warpgroup_wait(0, acc);
  for (std::uint32_t slot = 0; slot < FragAcc<16, N>::elements; ++slot) {
    store(out[(row0 + acc.row(slot)) * N + acc.col(slot)], acc.get(slot));
  }
}
IRON_KERNEL_VARIANT(wg_registers, kept, 64u, 0u, false);
IRON_KERNEL_VARIANT(wg_registers, overwritten, 64u, 0u, true);
IRON_KERNEL_VARIANT(wg_registers, panels, 192u, 0u, false);
IRON_KERNEL_VARIANT(wg_registers, panels_off_the_atoms, 128u, 64u, false);

/// Runs the variant (b of n columns) on small integers; checks the product when it runs clean.
std::optional<SimError> run(const std::string& variant, std::size_t kN = 64) {
  const ir::Kernel k = kernel_ir_for("wg_registers_" + variant, DType::BF16);
  std::vector<double> a(kRows * kK);
  std::vector<double> b(std::size_t{kK} * kN);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 7) - 3.0;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) - 2.0;
  iron::runtime::HostTensor ta = sim_test::make_tensor(DType::BF16, a);
  iron::runtime::HostTensor tb = sim_test::make_tensor(DType::BF16, b);
  iron::runtime::HostTensor out = sim_test::zeros(DType::F32, kRows * kN);
  auto found = sim_test::finding(k, {&ta, &tb, &out}, {{1, 1, 1}, {128, 1, 1}});
  if (found) return found;
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t i = 0; i < kRows; ++i) {
    for (std::size_t j = 0; j < kN; ++j) {
      double want = 0.0;
      for (std::size_t p = 0; p < kK; ++p) want += a[i * kK + p] * b[p * kN + j];
      EXPECT_EQ(got[i * kN + j], want) << "at " << i << ", " << j;
    }
  }
  return std::nullopt;
}

TEST(WarpgroupRegisterForm, AProductOfRegistersAndRowMajorRowsRunsExactly) {
  const auto found = run("kept");
  EXPECT_FALSE(found.has_value()) << found->what();
}

TEST(WarpgroupRegisterForm, ARowMajorBInPanelsRunsExactly) {
  const auto found = run("panels", 192);
  EXPECT_FALSE(found.has_value()) << found->what();
}

TEST(WarpgroupRegisterForm, PanelsOffTheSwizzlesAtomsAreReported) {
  const auto found = run("panels_off_the_atoms", 128);
  ASSERT_TRUE(found.has_value());
  EXPECT_NE(std::string(found->what()).find("a multiple of 1024 bytes apart"), std::string::npos)
      << found->what();
}

TEST(WarpgroupRegisterForm, WritingTheAFragmentBeforeTheWaitIsReported) {
  const auto found = run("overwritten");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->kind(), SimError::Kind::PendingProduct) << found->what();
  EXPECT_NE(std::string(found->what()).find("writes the A fragment"), std::string::npos)
      << found->what();
}

TEST(WarpgroupRegisterForm, HopperRunsItAsWgmmaOfRegistersAndEveryOtherTargetAsFragments) {
  const ir::Kernel k = kernel_ir_for("wg_registers_kept", DType::BF16);
  using iron::codegen::MmaStrategy;
  using iron::codegen::TargetProfile;
  const auto hopper = iron::codegen::compile_kernel(k, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  EXPECT_EQ(sim_test::lowered_ops(hopper, ir::OpKind::WgMma), 1u);
  EXPECT_NE(hopper.source.find("iron_wgmma_rs_bf16_n64<128, 1>"), std::string::npos)
      << hopper.source;
  EXPECT_NE(hopper.source.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"),
            std::string::npos);
  EXPECT_NE(hopper.source.find("iron_wgmma_descriptor_rows"), std::string::npos);
  for (const TargetProfile& t : {TargetProfile::cuda(90), TargetProfile::metal(31)}) {
    const auto c = iron::codegen::compile_kernel(k, t);
    EXPECT_EQ(sim_test::lowered_ops(c, ir::OpKind::WgMma), 0u) << t.name;
    EXPECT_EQ(sim_test::lowered_ops(c, ir::OpKind::FragMma), kK / 16) << t.name;
    EXPECT_EQ(c.source.find("wgmma"), std::string::npos) << t.name;
  }
}

TEST(WarpgroupRegisterForm, HopperReadsPanelsThroughTheDescriptorsLeadingOffset) {
  const ir::Kernel k = kernel_ir_for("wg_registers_panels", DType::BF16);
  using iron::codegen::MmaStrategy;
  using iron::codegen::TargetProfile;
  const auto hopper = iron::codegen::compile_kernel(k, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  EXPECT_EQ(sim_test::lowered_ops(hopper, ir::OpKind::WgMma), 1u);
  EXPECT_NE(hopper.source.find("iron_wgmma_rs_bf16_n192<128, 1>"), std::string::npos)
      << hopper.source;
  EXPECT_NE(hopper.source.find("iron_wgmma_descriptor_rows(b, 2u * b_panel)"), std::string::npos)
      << hopper.source;
  const auto elsewhere = iron::codegen::compile_kernel(k, TargetProfile::cuda(90));
  EXPECT_EQ(sim_test::lowered_ops(elsewhere, ir::OpKind::FragMma), kK / 16);
}

TEST(WarpgroupRegisterForm, TheVerifierRefusesAnAFragmentOfAnotherDepth) {
  ir::Kernel k = kernel_ir_for("wg_registers_kept", DType::BF16);
  for (ir::Op& op : k.body.ops) {
    if (op.kind == ir::OpKind::WgMma) op.ivalue = 64;
  }
  EXPECT_NE(sim_test::verifier_findings(k).find("16xK A fragment (K = 64)"), std::string::npos)
      << sim_test::verifier_findings(k);
}

}  // namespace
