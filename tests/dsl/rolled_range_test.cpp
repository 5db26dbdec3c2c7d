/// rolled_range: a loop that stays a loop. Its constant bounds would let unroll_loops copy its
/// body; kept rolled, the lowered IR still holds it, the CUDA source asks NVVM not to unroll it
/// either, and it computes what the same loop under range() computes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;

// out[t] = Σ_{j < 4} inp[4t + j], over four trips of a constant loop, rolled or not.
template <bool ROLLED>
void sum_of_four(const Tensor<f32>& inp, const Out<f32>& out) {
  auto t = thread_id<0>();
  Var<f32> sum = 0.0f;
  const auto body = [&](const Expr<u32>& j) { sum = Expr<f32>(sum) + load(inp[t * 4u + j]); };
  if constexpr (ROLLED) {
    for (auto j : rolled_range(0u, 4u)) body(j);
  } else {
    for (auto j : range(0u, 4u)) body(j);
  }
  store(out[t], Expr<f32>(sum));
}

IRON_KERNEL(rolled_sum, (Tensor<f32> inp, Out<f32> out)) { sum_of_four<true>(inp, out); }
IRON_KERNEL(unrolled_sum, (Tensor<f32> inp, Out<f32> out)) { sum_of_four<false>(inp, out); }

std::size_t loops_in(const ir::Kernel& k) {
  std::size_t loops = 0;
  ir::walk(k.body, [&](const ir::Op& op) { loops += op.kind == ir::OpKind::For ? 1 : 0; });
  return loops;
}

TEST(RolledRange, StaysALoopAndAsksNvvmToKeepIt) {
  const auto target = iron::codegen::TargetProfile::cuda(90);
  const auto rolled =
      iron::codegen::compile_kernel(kernel_ir_for("rolled_sum", DType::F32), target);
  EXPECT_EQ(loops_in(rolled.lowered), 1u);
  EXPECT_NE(rolled.source.find("#pragma unroll 1\n"), std::string::npos) << rolled.source;
  const auto plain =
      iron::codegen::compile_kernel(kernel_ir_for("unrolled_sum", DType::F32), target);
  EXPECT_EQ(loops_in(plain.lowered), 0u) << "range() of four trips unrolls";
  EXPECT_EQ(plain.source.find("#pragma unroll"), std::string::npos);
}

TEST(RolledRange, ComputesWhatTheUnrolledLoopComputes) {
  for (const char* name : {"rolled_sum", "unrolled_sum"}) {
    std::vector<double> values(128);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.5 * static_cast<double>(i);
    iron::runtime::HostTensor in = sim_test::make_tensor(DType::F32, values);
    iron::runtime::HostTensor out = sim_test::zeros(DType::F32, 32);
    sim_test::run(kernel_ir_for(name, DType::F32), {&in, &out}, {{1, 1, 1}, {32, 1, 1}});
    const std::vector<double> got = sim_test::read_tensor(out);
    for (std::uint32_t t = 0; t < 32; ++t) {
      EXPECT_EQ(got[t], 0.5 * (16.0 * t + 6.0)) << name << " thread " << t;
    }
  }
}

}  // namespace
