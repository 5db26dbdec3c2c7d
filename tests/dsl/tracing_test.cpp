// What the DSL traces: parameters, variants, locals across iterations, branches, shared memory.
#include <gtest/gtest.h>

#include <algorithm>

#include "iron/core/printer.hpp"
#include "iron/iron.hpp"
#include "iron/runtime/sim.hpp"
#include "iron/testing/data.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;

std::size_t count_kind(const ir::Kernel& k, ir::OpKind kind) {
  std::size_t n = 0;
  ir::walk(k.body, [&](const ir::Op& op) { n += op.kind == kind; });
  return n;
}

TEST(DslTracing, ParameterNamesComeFromTheSource) {
  const auto names = detail::parameter_names(
      "(Tensor<T> inp, Tensor<Pair<a, b>> weights, Out<T> out, Constexpr<f32> eps)");
  EXPECT_EQ(names, (std::vector<std::string>{"inp", "weights", "out", "eps"}));
}

IRON_KERNEL(tracing_scale, (Tensor<T> inp, Out<T> out, Constexpr<f32> alpha)) {
  auto i = program_id<0>();
  store(out[i], cast<T>(cast<f32>(load(inp[i])) * alpha));
}

TEST(DslTracing, GenericDTypeAndParams) {
  const ir::Kernel k = kernel_ir_for("tracing_scale", DType::BF16);
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[0].name, "inp");
  EXPECT_EQ(k.params[0].kind, ir::ParamKind::Input);
  EXPECT_EQ(k.params[0].dtype, DType::BF16);
  EXPECT_EQ(k.params[1].kind, ir::ParamKind::Output);
  EXPECT_EQ(k.params[2].kind, ir::ParamKind::Constexpr);
  EXPECT_EQ(k.params[2].dtype, DType::F32);
  EXPECT_EQ(k.dtype, DType::BF16);
  EXPECT_EQ(k.loc.file, "tests/dsl/tracing_test.cpp");
}

IRON_KERNEL_TEMPLATE(tracing_repeat, (u32 TIMES), (Tensor<T> inp, Out<T> out)) {
  auto i = program_id<0>();
  Var<f32> acc = 0.0f;
  for (u32 k = 0; k < TIMES; ++k) acc += cast<f32>(load(inp[i * TIMES + k]));
  store(out[i], cast<T>(acc));
}
IRON_KERNEL_VARIANT(tracing_repeat, x2, 2);
IRON_KERNEL_VARIANT(tracing_repeat, x3, 3);

TEST(DslTracing, VariantsRegisterWithSuffixAndUnrollCppLoops) {
  ASSERT_NE(find_kernel("tracing_repeat_x2"), nullptr);
  ASSERT_NE(find_kernel("tracing_repeat_x3"), nullptr);
  EXPECT_EQ(count_kind(kernel_ir_for("tracing_repeat_x2", DType::F32), ir::OpKind::Load), 2u);
  EXPECT_EQ(count_kind(kernel_ir_for("tracing_repeat_x3", DType::F32), ir::OpKind::Load), 3u);
}

IRON_KERNEL(tracing_loop_var, (Tensor<T> inp, Out<f32> out, Constexpr<u32> n)) {
  Var<f32> acc = 0.0f;
  for (auto j : range(0u, n, 2u)) {
    IRON_IF(j > 4u) { acc += cast<f32>(load(inp[j])); }
    IRON_ELSE { acc -= 1.0f; }
  }
  store(out[program_id<0>()], acc);
}

TEST(DslTracing, LoopsBranchesAndVars) {
  const ir::Kernel k = kernel_ir_for("tracing_loop_var", DType::F16);
  ASSERT_EQ(count_kind(k, ir::OpKind::For), 1u);
  ASSERT_EQ(count_kind(k, ir::OpKind::If), 1u);
  EXPECT_EQ(count_kind(k, ir::OpKind::VarDecl), 1u);
  EXPECT_EQ(count_kind(k, ir::OpKind::VarStore), 2u);
  const ir::Op* branch = nullptr;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::If) branch = &op;
  });
  ASSERT_NE(branch, nullptr);
  EXPECT_FALSE(branch->blocks[0].ops.empty());
  EXPECT_FALSE(branch->blocks[1].ops.empty());
}

// `a = b` between two Vars stores b's current value into a (a load of b, a store into a); it
// does not rebind a's handle, so a later store into b leaves a alone.
IRON_KERNEL(tracing_var_copy, (Out<f32> out)) {
  Var<f32> a = 1.0f;
  Var<f32> b = 2.0f;
  a = b;
  b = 3.0f;
  store(out[0u], a.get());
}

TEST(DslTracing, AssigningAVarToAVarStoresItsValue) {
  const ir::Kernel k = kernel_ir_for("tracing_var_copy", DType::F32);
  EXPECT_EQ(count_kind(k, ir::OpKind::VarDecl), 2u);
  EXPECT_EQ(count_kind(k, ir::OpKind::VarStore), 2u);
  const std::string text = ir::print_kernel(k);
  EXPECT_EQ(text.find("include/"), std::string::npos) << text;
  iron::runtime::HostTensor out = iron::testing::pack({0.0f}, DType::F32);
  iron::runtime::sim_run({&k, {&out}, iron::runtime::Grid::per_row(1, 1)});
  EXPECT_EQ(iron::testing::unpack(out), std::vector<float>{2.0f});
}

IRON_KERNEL(tracing_shared, (Tensor<T> inp, Out<T> out)) {
  dispatch(reduction, {multiple_of(32), at_least(32)});
  auto a = shared<f32>(64);
  auto b = shared<u32>(64);
  auto t = thread_id<0>();
  store(a[t], cast<f32>(load(inp[t])));
  store(b[t], t);
  barrier();
  store(out[t], cast<T>(load(a[63u - t]) + cast<f32>(load(b[t]))));
}

TEST(DslTracing, SharedAllocationsAreDistinctHandles) {
  const ir::Kernel k = kernel_ir_for("tracing_shared", DType::F32);
  ASSERT_EQ(k.shared.size(), 2u);
  EXPECT_NE(k.shared[0].name, k.shared[1].name);
  EXPECT_EQ(k.shared[0].dtype, DType::F32);
  EXPECT_EQ(k.shared[1].dtype, DType::U32);
  EXPECT_EQ(k.dispatch.mode, ir::DispatchMode::Reduction);
  ASSERT_EQ(k.dispatch.group_size_rules.size(), 2u);
  EXPECT_EQ(k.dispatch.group_size_rules[0].kind, ir::SizeRule::Kind::MultipleOf);
}

TEST(DslTracing, ProgramIdFollowsTheDeclaredMode) {
  const auto uses_builtin = [](const char* name, ir::Builtin b) {
    bool found = false;
    ir::walk(kernel_ir_for(name, DType::F32).body,
             [&](const ir::Op& op) { found |= op.kind == ir::OpKind::Builtin && op.builtin == b; });
    return found;
  };
  EXPECT_TRUE(uses_builtin("tracing_scale", ir::Builtin::GlobalId));
  EXPECT_FALSE(uses_builtin("tracing_scale", ir::Builtin::GroupId));
}

// `continue` in a plain C++ loop runs at trace time, outside a branch or inside one: it leaves
// out unrolled iterations (style guide §5).
IRON_KERNEL(tracing_continue_in_cpp_loops, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  auto i = program_id<0>();
  for (u32 k = 0; k < 3; ++k) {
    if (k == 1) continue;
    store(out[i * 8u + k], load(inp[i]));
  }
  IRON_IF(i < n) {
    for (u32 k = 3; k < 8; ++k) {
      if (k % 2 == 0) continue;
      store(out[i * 8u + k], load(inp[i]));
    }
  }
}

TEST(DslTracing, ContinueInCppLoopsLeavesOutUnrolledIterations) {
  const ir::Kernel k = kernel_ir_for("tracing_continue_in_cpp_loops", DType::F32);
  EXPECT_EQ(count_kind(k, ir::OpKind::Store), 5u);  // k = 0, 2 and, in the branch, 3, 5, 7
  const ir::Op* branch = nullptr;
  for (const ir::Op& op : k.body.ops) {
    if (op.kind == ir::OpKind::If) branch = &op;
  }
  ASSERT_NE(branch, nullptr);
  std::size_t in_branch = 0;
  ir::walk(branch->blocks[0], [&](const ir::Op& op) { in_branch += op.kind == ir::OpKind::Store; });
  EXPECT_EQ(in_branch, 3u);
}

// `continue` directly in a symbolic loop's body ends the traced body (what follows it is
// unreachable in C++ too); the trace goes on after the loop.
IRON_KERNEL_TEMPLATE(tracing_continue_in_range, (bool SKIP_SECOND),
                     (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  for (auto j : range(0u, n)) {
    store(out[j], load(inp[j]));
    if (SKIP_SECOND) continue;
    store(out[j + n], load(inp[j]));
  }
  store(out[0u], load(inp[0u]));
}
IRON_KERNEL_VARIANT(tracing_continue_in_range, skip, true);
IRON_KERNEL_VARIANT(tracing_continue_in_range, keep, false);

TEST(DslTracing, ContinueInASymbolicLoopEndsItsBody) {
  for (const auto& [name, in_loop] : {std::pair{"tracing_continue_in_range_skip", 1u},
                                      std::pair{"tracing_continue_in_range_keep", 2u}}) {
    const ir::Kernel k = kernel_ir_for(name, DType::F32);
    const ir::Op* loop = nullptr;
    for (const ir::Op& op : k.body.ops) {
      if (op.kind == ir::OpKind::For) loop = &op;
    }
    ASSERT_NE(loop, nullptr) << name;
    std::size_t stores = 0;
    ir::walk(loop->blocks[0], [&](const ir::Op& op) { stores += op.kind == ir::OpKind::Store; });
    EXPECT_EQ(stores, in_loop) << name;
    EXPECT_EQ(count_kind(k, ir::OpKind::Store), in_loop + 1) << name;  // and the one after
  }
}

// The DSL's operator templates must not break ordinary operators: with compilers that check
// constraints after substituting the return type (Clang 14), a non-SFINAE-friendly element type
// made `std::string + std::string` a hard error in any file including iron.hpp.
TEST(DslTracing, OtherTypesOperatorsStillWork) {
  const std::string a = "ab";
  EXPECT_EQ(a + a, "abab");
  EXPECT_TRUE(a == "ab");
}

TEST(DslTracing, UnknownKernelAndDtype) {
  EXPECT_THROW(kernel_ir_for("no_such_kernel", DType::F32), iron::Error);
  EXPECT_THROW(kernel_ir_for("tracing_scale", DType::U32), iron::Error);
}

TEST(DslTracing, LocationsAreRelativeToTheProject) {
  const std::string text = ir::print_kernel(kernel_ir_for("tracing_scale", DType::F32));
  EXPECT_NE(text.find("; tests/dsl/tracing_test.cpp:"), std::string::npos) << text;
  EXPECT_EQ(text.find("; /"), std::string::npos) << text;
}

}  // namespace
