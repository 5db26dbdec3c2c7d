/// Turns (docs/tensor-cores.md, "Turns"): two warpgroups taking turns at their products run
/// clean and exactly on the simulator, each way of breaking the rules is reported, the IR's text
/// form keeps them, and only sm_90a keeps them (as named barriers).
#include <gtest/gtest.h>

#include <string>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
using iron::runtime::SimError;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;

/// How a kernel breaks the rules, one way a variant.
enum class Breach : std::uint8_t { None, OneWarpgroup, NoBegin, BegunTwice };

constexpr std::uint32_t kRow = 64;   // elements of a 128-byte row of 16-bit values
constexpr std::uint32_t kSteps = 3;  // turns each warpgroup takes
constexpr std::uint32_t kWarpgroups = 2;

// out[g] = kSteps · a · bᵀ for each warpgroup g of two (a, b [64, 64], b as [n, k]): each step a
// product started in the warpgroup's turn; BREACH breaks one rule.
IRON_KERNEL_TEMPLATE(wg_turns, (Breach BREACH), (Tensor<T> a, Tensor<T> b, Out<f32> out)) {
  dispatch(tiled, {exactly(kWarpgroups * 128)});
  auto tile_a = shared<T>(kRow * kRow, Swizzled{kRow});
  auto tile_b = shared<T>(kRow * kRow, Swizzled{kRow});
  for (auto i : range(thread_id<0>(), kRow * kRow, kWarpgroups * 128u)) {
    store(tile_a[i], load(a[i]));
    store(tile_b[i], load(b[i]));
  }
  fence_async_proxy();
  barrier();
  if constexpr (BREACH != Breach::NoBegin) begin_turns<kWarpgroups>();
  if constexpr (BREACH == Breach::BegunTwice) begin_turns<kWarpgroups>();
  FragAcc<16, kRow> acc;
  const auto turn = [&] {
    take_turn<kWarpgroups>([&] {
      warpgroup_mma<kRow>(acc, tile_a, 0u, kRow, tile_b, 0u, kRow);
      warpgroup_commit();
    });
  };
  for (auto step : range(0u, kSteps, 1u)) {
    (void)step;
    if constexpr (BREACH == Breach::OneWarpgroup) {
      IRON_IF(simdgroup_id() < 4u) { turn(); }
    } else {
      turn();
    }
    warpgroup_wait(0, acc);
  }
  auto group = simdgroup_id() / 4u;
  auto row0 = simdgroup_id() % 4u * 16u;
  for (std::uint32_t slot = 0; slot < FragAcc<16, kRow>::elements; ++slot) {
    store(out[group * kRow * kRow + (row0 + acc.row(slot)) * kRow + acc.col(slot)], acc.get(slot));
  }
}
IRON_KERNEL_VARIANT(wg_turns, kept, Breach::None);
IRON_KERNEL_VARIANT(wg_turns, one_warpgroup, Breach::OneWarpgroup);
IRON_KERNEL_VARIANT(wg_turns, no_begin, Breach::NoBegin);
IRON_KERNEL_VARIANT(wg_turns, begun_twice, Breach::BegunTwice);

/// The finding of the variant on small integers; nullopt when clean (the kept one's outputs
/// checked against the sum).
std::optional<SimError> finding_of(const std::string& variant) {
  const ir::Kernel k = kernel_ir_for("wg_turns_" + variant, DType::BF16);
  std::vector<double> a(kRow * kRow);
  std::vector<double> b(kRow * kRow);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<double>(i % 7) - 3.0;
    b[i] = static_cast<double>(i % 5) - 2.0;
  }
  iron::runtime::HostTensor ta = sim_test::make_tensor(DType::BF16, a);
  iron::runtime::HostTensor tb = sim_test::make_tensor(DType::BF16, b);
  iron::runtime::HostTensor out = sim_test::zeros(DType::F32, kWarpgroups * kRow * kRow);
  auto found = sim_test::finding(k, {&ta, &tb, &out}, {{1, 1, 1}, {kWarpgroups * 128, 1, 1}});
  if (found || variant != "kept") return found;
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t g = 0; g < kWarpgroups; ++g) {
    for (std::size_t i = 0; i < kRow; ++i) {
      for (std::size_t j = 0; j < kRow; ++j) {
        double want = 0.0;
        for (std::size_t p = 0; p < kRow; ++p) want += a[i * kRow + p] * b[j * kRow + p];
        EXPECT_EQ(got[(g * kRow + i) * kRow + j], kSteps * want) << g << ": " << i << ", " << j;
      }
    }
  }
  return std::nullopt;
}

void expect_hang(const std::string& variant, const std::string& words) {
  const auto found = finding_of(variant);
  ASSERT_TRUE(found.has_value()) << variant << " ran clean";
  EXPECT_EQ(found->kind(), SimError::Kind::DivergentBarrier) << found->what();
  EXPECT_NE(std::string(found->what()).find(words), std::string::npos) << found->what();
}

TEST(WarpgroupTurns, TwoWarpgroupsTakingTurnsRunExactly) {
  EXPECT_FALSE(finding_of("kept").has_value());
}

TEST(WarpgroupTurns, ATurnOfOneWarpgroupAloneIsReported) {
  expect_hang("one_warpgroup", "reached by 128 of 256 threads");
}

TEST(WarpgroupTurns, AWaitBeforeTheTurnsBeginIsReported) {
  expect_hang("no_begin", "a wait before the turns begin");
}

TEST(WarpgroupTurns, TurnsBegunTwiceAreReported) {
  expect_hang("begun_twice", "turns begun twice");
}

TEST(WarpgroupTurns, TheTextFormKeepsEachStep) {
  const ir::Kernel k = kernel_ir_for("wg_turns_kept", DType::BF16);
  const std::string text = ir::print_kernel(k);
  for (const char* step : {"wg.turn begin 2", "wg.turn wait 2", "wg.turn pass 2"}) {
    EXPECT_NE(text.find(step), std::string::npos) << step;
  }
  EXPECT_EQ(ir::print_kernel(ir::parse_kernel(text)), text);
}

/// Calls fn on every wg.turn of `block`, nested blocks included.
template <class Fn>
void each_turn(ir::Block& block, Fn&& fn) {
  for (ir::Op& op : block.ops) {
    if (op.kind == ir::OpKind::WgTurn) fn(op);
    for (ir::Block& inner : op.blocks) each_turn(inner, fn);
  }
}

TEST(WarpgroupTurns, TheVerifierRefusesOneWarpgroupOrAnUnknownStep) {
  const ir::Kernel k = kernel_ir_for("wg_turns_kept", DType::BF16);
  ir::Kernel alone = k;
  ir::Kernel unknown = k;
  each_turn(alone.body, [](ir::Op& op) { op.ivalue = 1; });
  each_turn(unknown.body, [](ir::Op& op) { op.axis = 3; });
  EXPECT_NE(sim_test::verifier_findings(alone).find("2 to 4 warpgroups take turns, not 1"),
            std::string::npos)
      << sim_test::verifier_findings(alone);
  EXPECT_NE(sim_test::verifier_findings(unknown).find("not axis 3"), std::string::npos)
      << sim_test::verifier_findings(unknown);
}

TEST(WarpgroupTurns, HopperTakesThemAtNamedBarriersAndEveryOtherTargetDropsThem) {
  const ir::Kernel k = kernel_ir_for("wg_turns_kept", DType::BF16);
  using iron::codegen::MmaStrategy;
  using iron::codegen::TargetProfile;
  const auto hopper = iron::codegen::compile_kernel(k, TargetProfile::cuda(90, MmaStrategy::Wgmma));
  EXPECT_EQ(sim_test::lowered_ops(hopper, ir::OpKind::WgTurn),
            1u + 2u * kSteps);  // the loop unrolled
  EXPECT_NE(hopper.source.find(R"(asm volatile("bar.arrive 1, 256;")"), std::string::npos);
  EXPECT_NE(hopper.source.find(R"("bar.sync %0, 256;")"), std::string::npos);
  EXPECT_NE(hopper.source.find(R"("bar.arrive %0, 256;")"), std::string::npos);
  for (const TargetProfile& t :
       {TargetProfile::cuda(90), TargetProfile::cuda(80), TargetProfile::metal(31)}) {
    const auto c = iron::codegen::compile_kernel(k, t);
    EXPECT_EQ(sim_test::lowered_ops(c, ir::OpKind::WgTurn), 0u) << t.name;
    EXPECT_EQ(c.source.find("bar.arrive"), std::string::npos) << t.name;
  }
}

}  // namespace
