/// promote_registers: a register array whose every index is a constant becomes one variable per
/// element; an array with any other index stays (the lowered verifier rejects it); unroll_loops
/// unrolls loops that index a register array past its usual trip limit.
#include "iron/codegen/passes/promote_registers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "iron/codegen/passes/unroll_loops.hpp"
#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::promote_registers;
using codegen::unroll_loops;

TEST(PassPromoteRegisters, ConstantIndicesBecomeOneVariablePerElement) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin thread_id.x : u32
  %1 = const 0.5 : f32
  %2 = regs %1, 3 : f32
  %3 = const 2 : u32
  %4 = load x[%0] : f32
  regs.store %2, %3, %4 : f32
  %5 = const 0 : u32
  %6 = regs.load %2, %5 : f32
  %7 = regs.load %2, %3 : f32
  %8 = add %6, %7 : f32
  store out[%0], %8 : f32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin thread_id.x : u32
  %1 = const 0.5 : f32
  %9 = var %1 : f32
  %10 = var %1 : f32
  %11 = var %1 : f32
  %3 = const 2 : u32
  %4 = load x[%0] : f32
  var.store %11, %4 : f32
  %5 = const 0 : u32
  %6 = var.load %9 : f32
  %7 = var.load %11 : f32
  %8 = add %6, %7 : f32
  store out[%0], %8 : f32
)";
  expect_pass(promote_registers, kBefore, 9, kAfter, 12);
}

TEST(PassPromoteRegisters, StoresInsideBranchesAndLoopsUseTheElementsVariables) {
  constexpr std::string_view kBefore = R"(
  %0 = builtin thread_id.x : u32
  %1 = const 0 : i32
  %2 = regs %1, 2 : i32
  %3 = const 1 : u32
  %4 = lt %0, %3 : bool
  if %4 {
    %5 = load xi[%0] : i32
    regs.store %2, %3, %5 : i32
  }
  %6 = regs.load %2, %3 : i32
  store outi[%0], %6 : i32
)";
  constexpr std::string_view kAfter = R"(
  %0 = builtin thread_id.x : u32
  %1 = const 0 : i32
  %7 = var %1 : i32
  %8 = var %1 : i32
  %3 = const 1 : u32
  %4 = lt %0, %3 : bool
  if %4 {
    %5 = load xi[%0] : i32
    var.store %8, %5 : i32
  }
  %6 = var.load %8 : i32
  store outi[%0], %6 : i32
)";
  expect_pass(promote_registers, kBefore, 7, kAfter, 9);
}

TEST(PassPromoteRegisters, AnArrayWithASymbolicIndexStays) {
  // Element %0 % 2 is not known until the kernel runs: the array cannot be scalars.
  constexpr std::string_view kBody = R"(
  %0 = builtin thread_id.x : u32
  %1 = const 0.0 : f32
  %2 = regs %1, 2 : f32
  %3 = const 2 : u32
  %4 = rem %0, %3 : u32
  %5 = load x[%0] : f32
  regs.store %2, %4, %5 : f32
  %6 = const 0 : u32
  %7 = regs.load %2, %6 : f32
  store out[%0], %7 : f32
)";
  expect_unchanged(promote_registers, kBody, 8);
  const ir::Kernel kernel = ir::parse_kernel(kernel_with(kBody, 8));
  std::string lowered;
  for (const std::string& p : ir::verify(kernel, ir::Stage::Lowered)) lowered += p + "\n";
  EXPECT_NE(lowered.find("regs.store: the index of register array %2 is not a constant after "
                         "unrolling"),
            std::string::npos)
      << lowered;
  EXPECT_EQ(problems_of(kernel), "") << "well formed before lowering";
}

TEST(PassPromoteRegisters, LoopsIndexingRegistersUnrollPastTheUsualTripLimit) {
  // 12 trips: more than a plain loop unrolls (8), within a register array's (256).
  constexpr std::string_view kBefore = R"(
  %0 = builtin thread_id.x : u32
  %1 = const 0.0 : f32
  %2 = regs %1, 12 : f32
  %3 = const 0 : u32
  %4 = const 12 : u32
  %5 = const 1 : u32
  for %6 = %3 to %4 step %5 : u32 {
    %7 = load x[%6] : f32
    regs.store %2, %6, %7 : f32
  }
  %8 = regs.load %2, %5 : f32
  store out[%0], %8 : f32
)";
  ir::Kernel kernel = pass_test::apply(unroll_loops, kernel_with(kBefore, 9));
  std::size_t loops = 0;
  std::size_t stores = 0;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    loops += op.kind == ir::OpKind::For ? 1 : 0;
    stores += op.kind == ir::OpKind::RegsStore ? 1 : 0;
  });
  EXPECT_EQ(loops, 0u) << text_of(kernel);
  EXPECT_EQ(stores, 12u) << text_of(kernel);
  promote_registers(kernel, {});
  EXPECT_EQ(problems_of(kernel), "");
  EXPECT_TRUE(ir::verify(kernel, ir::Stage::Lowered).empty()) << text_of(kernel);
}

TEST(PassPromoteRegisters, APlainLoopOfTwelveTripsStaysRolled) {
  constexpr std::string_view kBody = R"(
  %0 = builtin thread_id.x : u32
  %1 = const 0 : u32
  %2 = const 12 : u32
  %3 = const 1 : u32
  for %4 = %1 to %2 step %3 : u32 {
    %5 = load x[%4] : f32
    store out[%4], %5 : f32
  }
)";
  expect_unchanged(unroll_loops, kBody, 6);
}

}  // namespace
}  // namespace iron::pass_test
