/// A loop whose induction variable nothing reads still runs: its body's effects (here, a
/// variable doubled each trip) reach the emitted CUDA and MSL, as they do the simulator. The
/// emitters once dropped such a loop whole, since a loop's IR result is its induction variable.
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

// out[0] = the least power of two at least `count` (at most 2^10), by ten trips of a loop that
// never reads its own counter.
IRON_KERNEL(loop_unused_induction, (Out<u32> out, Constexpr<u32> count)) {
  Var<u32> size = 1u;
  for (auto trip : range(0u, 10u, 1u)) {
    (void)trip;
    IRON_IF(size < count) { size = size << 1u; }
  }
  IRON_IF(thread_id<0>() == 0u) { store(out[0u], Expr<u32>(size)); }
}

TEST(LoopEffects, ALoopWhoseCounterIsUnreadIsEmitted) {
  const ir::Kernel k = kernel_ir_for("loop_unused_induction", DType::F32);
  for (const auto& target :
       {iron::codegen::TargetProfile::cuda(90), iron::codegen::TargetProfile::metal(31)}) {
    const auto compiled = iron::codegen::compile_kernel(k, target);
    std::size_t loops = 0;
    ir::walk(compiled.lowered.body,
             [&](const ir::Op& op) { loops += op.kind == ir::OpKind::For ? 1 : 0; });
    ASSERT_EQ(loops, 1u) << "the loop is still in the lowered IR";
    EXPECT_NE(compiled.source.find("for ("), std::string::npos) << compiled.source;
    EXPECT_NE(compiled.source.find("<< 1u"), std::string::npos) << compiled.source;
  }
}

TEST(LoopEffects, TheSimulatorRunsTheLoop) {
  const ir::Kernel k = kernel_ir_for("loop_unused_induction", DType::F32);
  iron::runtime::HostTensor out = sim_test::zeros(DType::U32, 1);
  sim_test::run(k, {&out, sim_test::scalar(DType::U32, 300)}, {{1, 1, 1}, {32, 1, 1}});
  EXPECT_EQ(sim_test::read_tensor(out), std::vector<double>{512});
}

}  // namespace
