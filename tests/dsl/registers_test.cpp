// Register arrays (Regs<T, N>) and wide accesses (load_lanes/store_lanes) from the DSL to the
// emitters: traced as regs ops, run exactly by the simulator (any index, bounds-checked),
// promoted to scalars by the pipeline when every index is a constant after unrolling, and
// rejected at the access's line when one is not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/error.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;

const std::string kFile = "tests/dsl/registers_test.cpp:";

// Each thread keeps 16 values in registers (more trips than a plain loop unrolls) and writes
// them back reversed, through symbolic indices that unrolling makes constant.
IRON_KERNEL(regs_reverse16, (Tensor<f32> inp, Out<f32> out)) {
  auto first = thread_id<0>() * 16u;
  Regs<f32, 16> values(0.0f);
  for (auto k : range(0u, 16u)) values[k] = load(inp[first + k]);
  for (auto k : range(0u, 16u)) store(out[first + k], values[15u - k] + 0.5f);
}

int g_dynamic_line = 0;
IRON_KERNEL(regs_dynamic_index, (Tensor<f32> inp, Out<f32> out)) {
  auto t = thread_id<0>();
  Regs<f32, 4> values(1.0f);
  values[2] = load(inp[t]);
  g_dynamic_line = __LINE__ + 1;
  store(out[t], values[t % 4u].get());
}

IRON_KERNEL(regs_past_the_end, (Tensor<f32> inp, Out<f32> out)) {
  auto t = thread_id<0>();
  Regs<f32, 4> values(0.0f);
  values[t] = load(inp[t]);
  store(out[t], values[0].get());
}

int g_literal_line = 0;
IRON_KERNEL(regs_literal_past_the_end, (Tensor<f32> inp, Out<f32> out)) {
  auto t = thread_id<0>();
  Regs<f32, 4> values(0.0f);
  g_literal_line = __LINE__ + 1;
  values[4] = load(inp[t]);
  store(out[t], values[0].get());
}

// Four f16 values a thread in one 8-byte access each way, doubled in f32 registers.
IRON_KERNEL(lanes_double, (Tensor<f16> inp, Out<f16> out, Constexpr<u32> offset)) {
  auto at = thread_id<0>() * 4u + offset;
  const auto x = load_lanes<4>(inp[at]);
  Regs<f32, 4> values(0.0f);
  for (std::uint32_t e = 0; e < 4; ++e) values[e] = cast<f32>(x[e]) * 2.0f;
  std::array<Expr<f16>, 4> y;
  for (std::uint32_t e = 0; e < 4; ++e) y[e] = cast<f16>(values[e].get());
  store_lanes(out[at], y);
}

std::size_t count_ops(const ir::Kernel& k, ir::OpKind kind) {
  std::size_t n = 0;
  ir::walk(k.body, [&](const ir::Op& op) { n += op.kind == kind ? 1 : 0; });
  return n;
}

iron::runtime::Grid one_group(std::uint32_t threads) {
  iron::runtime::Grid grid;
  grid.groups = {1, 1, 1};
  grid.group_size = {threads, 1, 1};
  return grid;
}

TEST(Registers, TraceAsRegsOpsAndPrintParseBack) {
  const ir::Kernel k = kernel_ir_for("regs_reverse16", DType::F32);
  EXPECT_EQ(count_ops(k, ir::OpKind::RegsDecl), 1u);
  EXPECT_EQ(count_ops(k, ir::OpKind::RegsStore), 1u);
  EXPECT_EQ(count_ops(k, ir::OpKind::RegsLoad), 1u);
  const std::string text = ir::print_kernel(k);
  EXPECT_NE(text.find("= regs %"), std::string::npos) << text;
  EXPECT_NE(text.find(", 16 : f32"), std::string::npos) << text;
  EXPECT_EQ(ir::print_kernel(ir::parse_kernel(text)), text);
}

TEST(Registers, SimulatorRunsSymbolicIndicesExactly) {
  const ir::Kernel k = kernel_ir_for("regs_reverse16", DType::F32);
  std::vector<double> in(64);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i) * 1.25;
  auto inp = sim_test::make_tensor(DType::F32, in);
  auto out = sim_test::zeros(DType::F32, 64);
  sim_test::run(k, {&inp, &out}, one_group(4));
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t t = 0; t < 4; ++t) {
    for (std::size_t j = 0; j < 16; ++j) {
      EXPECT_EQ(got[t * 16 + j], in[t * 16 + 15 - j] + 0.5) << "thread " << t << " element " << j;
    }
  }
}

TEST(Registers, PipelinePromotesConstantIndicesToScalars) {
  const ir::Kernel k = kernel_ir_for("regs_reverse16", DType::F32);
  for (const auto& target :
       {iron::codegen::TargetProfile::cuda(90), iron::codegen::TargetProfile::metal(31)}) {
    const auto compiled = iron::codegen::compile_kernel(k, target);
    for (const ir::OpKind kind :
         {ir::OpKind::RegsDecl, ir::OpKind::RegsLoad, ir::OpKind::RegsStore, ir::OpKind::For}) {
      EXPECT_EQ(count_ops(compiled.lowered, kind), 0u) << ir::op_name(kind);
    }
    // Sixteen values in, sixteen out, each through its own scalar: no array in the source.
    std::size_t stored = 0;
    ir::walk(compiled.lowered.body,
             [&](const ir::Op& op) { stored += op.kind == ir::OpKind::Store ? op.lanes : 0; });
    EXPECT_EQ(stored, 16u);
    EXPECT_EQ(compiled.source.find("[16]"), std::string::npos) << compiled.source;
  }
}

TEST(Registers, AnIndexThatStaysSymbolicIsRejectedAtItsLine) {
  const ir::Kernel k = kernel_ir_for("regs_dynamic_index", DType::F32);
  try {
    iron::codegen::compile_kernel(k, iron::codegen::TargetProfile::cuda(90));
    FAIL() << "compiled a register array indexed by thread_id % 4";
  } catch (const iron::IrError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(kFile + std::to_string(g_dynamic_line) +
                        ": regs.load: the index of "
                        "register array"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("not a constant after unrolling"), std::string::npos) << what;
  }
  // The simulator runs it: element t % 4 (element 2 was loaded, the others are 1).
  auto inp = sim_test::make_tensor(DType::F32, {10, 20, 30, 40, 50});
  auto out = sim_test::zeros(DType::F32, 5);
  sim_test::run(k, {&inp, &out}, one_group(5));
  EXPECT_EQ(sim_test::read_tensor(out), (std::vector<double>{1, 1, 30, 1, 1}));
}

TEST(Registers, SimulatorReportsAnIndexOutsideTheArray) {
  const ir::Kernel k = kernel_ir_for("regs_past_the_end", DType::F32);
  auto inp = sim_test::make_tensor(DType::F32, std::vector<double>(8, 1.0));
  auto out = sim_test::zeros(DType::F32, 8);
  const auto found = sim_test::finding(k, {&inp, &out}, one_group(8));
  ASSERT_TRUE(found.has_value());
  const std::string what = found->what();
  EXPECT_NE(what.find("out-of-bounds regs.store of 'register array' at index 4"), std::string::npos)
      << what;
  EXPECT_NE(what.find(kFile), std::string::npos) << what;
}

TEST(Registers, AConstantIndexOutsideTheArrayFailsTheTrace) {
  try {
    kernel_ir_for("regs_literal_past_the_end", DType::F32);
    FAIL() << "traced a store to element 4 of a 4-element register array";
  } catch (const iron::TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(kFile + std::to_string(g_literal_line) + ": regs.store at index 4 of %"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("which has 4 elements"), std::string::npos) << what;
  }
}

TEST(WideAccess, LoadsAndStoresLanesInOneAccess) {
  const ir::Kernel k = kernel_ir_for("lanes_double", DType::F32);
  std::size_t wide = 0;
  ir::walk(k.body, [&](const ir::Op& op) { wide += op.lanes == 4 ? 1 : 0; });
  EXPECT_EQ(wide, 2u);
  std::vector<double> in(16);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i) - 3.5;
  auto inp = sim_test::make_tensor(DType::F16, in);
  auto out = sim_test::zeros(DType::F16, 16);
  sim_test::run(k, {&inp, &out, sim_test::scalar(DType::U32, 0)}, one_group(4));
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_EQ(got[i], 2 * in[i]) << i;
}

TEST(WideAccess, SimulatorReportsAMisalignedAccess) {
  const ir::Kernel k = kernel_ir_for("lanes_double", DType::F32);
  auto inp = sim_test::make_tensor(DType::F16, std::vector<double>(20, 1.0));
  auto out = sim_test::zeros(DType::F16, 20);
  const auto found =
      sim_test::finding(k, {&inp, &out, sim_test::scalar(DType::U32, 2)}, one_group(4));
  ASSERT_TRUE(found.has_value());
  EXPECT_NE(std::string(found->what()).find("misaligned vector load of 'inp' at index 2"),
            std::string::npos)
      << found->what();
}

}  // namespace
