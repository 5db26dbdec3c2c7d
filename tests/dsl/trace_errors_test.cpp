// DSL misuse that compiles but must fail tracing, naming the kernel and the file:line.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;

std::string trace_error(const char* kernel) {
  try {
    iron::dsl::kernel_ir_for(kernel, DType::F32);
  } catch (const iron::TraceError& e) {
    return e.what();
  }
  return "(traced without error)";
}

const std::string kFile = "tests/dsl/trace_errors_test.cpp:";

int g_break_line = 0;
IRON_KERNEL(trace_break_in_loop, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  auto i = program_id<0>();
  g_break_line = __LINE__ + 1;
  for (auto j : range(0u, n)) {
    store(out[i], load(inp[j]));
    break;
  }
}

TEST(DslTraceErrors, BreakLeavingSymbolicLoop) {
  const std::string msg = trace_error("trace_break_in_loop");
  EXPECT_NE(msg.find("kernel trace_break_in_loop"), std::string::npos) << msg;
  EXPECT_NE(msg.find(kFile + std::to_string(g_break_line)), std::string::npos) << msg;
  EXPECT_NE(msg.find("`break` or `return`"), std::string::npos) << msg;
}

IRON_KERNEL(trace_return_in_loop, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  auto i = program_id<0>();
  store(out[i], load(inp[i]));
  for (auto j : range(0u, n)) {
    store(out[j], load(inp[j]));
    return;
  }
}

TEST(DslTraceErrors, ReturnLeavingSymbolicLoop) {
  const std::string msg = trace_error("trace_return_in_loop");
  EXPECT_NE(msg.find("symbolic loop"), std::string::npos) << msg;
  EXPECT_NE(msg.find(kFile), std::string::npos) << msg;
}

IRON_KERNEL(trace_break_in_branch, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  for (auto j : range(0u, n)) {
    IRON_IF(j > 3u) { break; }
    store(out[j], load(inp[j]));
  }
}

TEST(DslTraceErrors, BreakLeavingSymbolicBranch) {
  const std::string msg = trace_error("trace_break_in_branch");
  EXPECT_NE(msg.find("IRON_IF branch"), std::string::npos) << msg;
}

IRON_KERNEL(trace_return_in_branch, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  auto i = program_id<0>();
  IRON_IF(i < n) {
    store(out[i], load(inp[i]));
    return;
  }
}

TEST(DslTraceErrors, ReturnLeavingSymbolicBranch) {
  const std::string msg = trace_error("trace_return_in_branch");
  EXPECT_NE(msg.find("IRON_IF branch"), std::string::npos) << msg;
}

int g_overlay_line = 0;
IRON_KERNEL(trace_overlay_of_overlay, (Tensor<T> inp, Out<T> out)) {
  dispatch(reduction, {multiple_of(32)});
  auto ring = shared<f32>(64);
  auto staged = overlay<f32>(ring, 32);
  g_overlay_line = __LINE__ + 1;
  auto again = overlay<u32>(staged, 8);
  auto i = thread_id<0>();
  store(ring[i], cast<f32>(load(inp[i])));
  barrier();
  store(staged[i], load(ring[i]));
  barrier();
  store(again[i], 0u);
  store(out[i], cast<T>(load(staged[i])));
}

TEST(DslTraceErrors, OverlayOfAnOverlay) {
  const std::string msg = trace_error("trace_overlay_of_overlay");
  EXPECT_NE(msg.find("base is itself an overlay; overlay its own base instead"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find(kFile + std::to_string(g_overlay_line)), std::string::npos) << msg;
}

IRON_KERNEL(trace_throw_in_loop, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  for (auto j : range(0u, n)) {
    store(out[j], load(inp[j]));
    throw std::runtime_error("helper gave up");
  }
}

TEST(DslTraceErrors, ExceptionLeavingSymbolicLoop) {
  const std::string msg = trace_error("trace_throw_in_loop");
  EXPECT_NE(msg.find("an exception left the traced body: helper gave up"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find(kFile), std::string::npos) << msg;
}

int g_escape_line = 0;
IRON_KERNEL(trace_value_escapes_loop, (Tensor<T> inp, Out<f32> out, Constexpr<u32> n)) {
  Expr<f32> acc = 0.0f;
  for (auto j : range(0u, n)) acc = acc + cast<f32>(load(inp[j]));
  g_escape_line = __LINE__ + 1;
  store(out[0u], acc);
}

TEST(DslTraceErrors, ValueUsedOutsideItsScope) {
  const std::string msg = trace_error("trace_value_escapes_loop");
  EXPECT_NE(msg.find("outside the loop or branch that defined it"), std::string::npos) << msg;
  EXPECT_NE(msg.find(kFile + std::to_string(g_escape_line)), std::string::npos) << msg;
}

IRON_KERNEL(trace_no_output, (Tensor<T> inp, Tensor<T> other)) {
  auto i = program_id<0>();
  auto unused = load(inp[i]) + load(other[i]);
  (void)unused;
}

TEST(DslTraceErrors, KernelWritingNoOutput) {
  EXPECT_NE(trace_error("trace_no_output").find("writes no output"), std::string::npos);
}

IRON_KERNEL(trace_output_unwritten,
            (Tensor<T> inp, Out<T> out, [[maybe_unused]] Out<T> forgotten)) {
  auto i = program_id<0>();
  store(out[i], load(inp[i]));
}

TEST(DslTraceErrors, OutputNeverWritten) {
  EXPECT_NE(trace_error("trace_output_unwritten").find("output 'forgotten' is never written"),
            std::string::npos);
}

IRON_KERNEL(trace_else_alone, (Tensor<T> inp, Out<T> out)) {
  auto i = program_id<0>();
  store(out[i], load(inp[i]));
  IRON_ELSE { store(out[i], load(inp[i])); }
}

TEST(DslTraceErrors, ElseWithoutIf) {
  EXPECT_NE(trace_error("trace_else_alone").find("IRON_ELSE must directly follow"),
            std::string::npos);
}

IRON_KERNEL(trace_late_dispatch, (Tensor<T> inp, Out<T> out)) {
  auto i = program_id<0>();
  dispatch(reduction, {multiple_of(32)});
  store(out[i], reduce_sum(load(inp[i])));
}

TEST(DslTraceErrors, DispatchAfterProgramId) {
  EXPECT_NE(trace_error("trace_late_dispatch").find("must come before program_id()"),
            std::string::npos);
}

IRON_KERNEL(trace_unassigned_value, (Tensor<T> inp, Out<T> out)) {
  Expr<u32> never_set;
  store(out[never_set], load(inp[0u]));
}

TEST(DslTraceErrors, DefaultConstructedValue) {
  EXPECT_NE(trace_error("trace_unassigned_value").find("never assigned"), std::string::npos);
}

IRON_KERNEL(trace_collective_without_contract, (Tensor<T> inp, Out<T> out)) {
  auto i = program_id<0>();
  store(out[i], simd_sum(load(inp[i])));
}

TEST(DslTraceErrors, SimdgroupOpsNeedAMultipleOf32Contract) {
  EXPECT_NE(trace_error("trace_collective_without_contract").find("multiple of 32"),
            std::string::npos);
}

}  // namespace
