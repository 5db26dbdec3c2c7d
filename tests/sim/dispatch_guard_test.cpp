/// The dispatch guard refuses launches that break the contract or the device limits, and says
/// which rule with which values; the grid helpers count groups, never threads.
#include "iron/runtime/dispatch_guard.hpp"

#include <gtest/gtest.h>

#include <string>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using runtime::Arg;
using runtime::DeviceLimits;
using runtime::Grid;
using runtime::HostTensor;
using Rule = ir::SizeRule::Kind;

Grid grid(runtime::Dim3 groups, runtime::Dim3 size) { return Grid{groups, size}; }

// A reduction kernel taking (x: in f32, y: out f32, block: constexpr u32), requiring a multiple
// of 32 threads per group and exactly block / 4.
ir::Kernel softmax_like() {
  IrBuilder b("iron_softmax");
  const int x = b.input("x", DType::F32);
  const int y = b.output("y", DType::F32);
  b.constexpr_param("block", DType::U32);
  b.mode(ir::DispatchMode::Reduction);
  b.rule(Rule::MultipleOf, 32);
  b.rule(Rule::Exactly, "block", 4);
  b.store(y, b.tid(), b.load(x, b.tid()));
  return b.build();
}

std::string refusal(const ir::Kernel& k, const std::vector<Arg>& args, const Grid& g,
                    const DeviceLimits& limits = {}) {
  try {
    runtime::check_dispatch(k, args, g, limits);
  } catch (const DispatchError& e) {
    return e.what();
  }
  return "not refused";
}

class DispatchGuardTest : public ::testing::Test {
 protected:
  ir::Kernel k = softmax_like();
  HostTensor x = zeros(DType::F32, 1024);
  HostTensor y = zeros(DType::F32, 1024);
  std::vector<Arg> args = {&x, &y, scalar(DType::U32, 512)};
};

TEST_F(DispatchGuardTest, AcceptsAValidLaunch) {
  EXPECT_NO_THROW(runtime::check_dispatch(k, args, grid({4, 1, 1}, {128, 1, 1}), {}));
}

TEST_F(DispatchGuardTest, RefusesThreadsPerGroupNotAMultipleOf32) {
  EXPECT_EQ(refusal(k, args, grid({4, 1, 1}, {4, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: threads per group (4) must be a "
            "multiple of 32 (rule from the kernel's dispatch contract)");
}

TEST_F(DispatchGuardTest, RefusesAConstexprBasedRule) {
  EXPECT_EQ(refusal(k, args, grid({4, 1, 1}, {64, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: threads per group (64) must be "
            "exactly 128 (constexpr block = 512, / 4) (rule from the kernel's dispatch contract)");
}

TEST_F(DispatchGuardTest, RefusesArgumentsOfTheWrongKindOrType) {
  std::vector<Arg> scalar_for_tensor = {&x, scalar(DType::F32, 1), scalar(DType::U32, 512)};
  EXPECT_EQ(refusal(k, scalar_for_tensor, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: argument 1 'y' must be a f32 "
            "tensor (out parameter), got a scalar");

  std::vector<Arg> tensor_for_scalar = {&x, &y, &x};
  EXPECT_EQ(refusal(k, tensor_for_scalar, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: argument 2 'block' must be a u32 "
            "scalar (constexpr parameter), got a tensor");

  HostTensor half = zeros(DType::F16, 1024);
  std::vector<Arg> wrong_dtype = {&half, &y, scalar(DType::U32, 512)};
  EXPECT_EQ(refusal(k, wrong_dtype, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: argument 0 'x' must be a f32 "
            "tensor, got a f16 tensor");

  std::vector<Arg> wrong_scalar = {&x, &y, scalar(DType::I32, 512)};
  EXPECT_EQ(refusal(k, wrong_scalar, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: argument 2 'block' must be a u32 "
            "scalar, got a i32 scalar");

  std::vector<Arg> too_few = {&x, &y};
  EXPECT_EQ(refusal(k, too_few, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: the kernel takes 3 arguments "
            "(x, y, block), got 2");

  std::vector<Arg> null_tensor = {static_cast<HostTensor*>(nullptr), &y, scalar(DType::U32, 512)};
  EXPECT_EQ(refusal(k, null_tensor, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: argument 0 'x' is a null tensor");

  HostTensor ragged = x;
  ragged.bytes.resize(10);
  std::vector<Arg> partial_element = {&ragged, &y, scalar(DType::U32, 512)};
  EXPECT_EQ(refusal(k, partial_element, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: argument 0 'x' holds 10 bytes, "
            "not a whole number of f32 elements");
}

TEST_F(DispatchGuardTest, RefusesGroupCountsOutsideTheDeviceLimits) {
  EXPECT_EQ(refusal(k, args, grid({0, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: groups.x (0) must be at least 1");
  EXPECT_EQ(refusal(k, args, grid({1, 70000, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: groups.y (70000) exceeds the "
            "device limit of 65535");
}

TEST_F(DispatchGuardTest, RefusesThreadsPerGroupOutsideTheDeviceLimits) {
  EXPECT_EQ(refusal(k, args, grid({1, 1, 1}, {128, 0, 1})),
            "iron_softmax: dispatch refused, nothing launched: threads per group (0, group size "
            "128x0x1) must be at least 1");
  EXPECT_EQ(refusal(k, args, grid({1, 1, 1}, {2048, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: threads per group (2048x1x1) "
            "exceeds the device limit of 1024");
  EXPECT_EQ(refusal(k, args, grid({1, 1, 1}, {65536, 65536, 65536})),
            "iron_softmax: dispatch refused, nothing launched: threads per group "
            "(65536x65536x65536) exceeds the device limit of 1024");
}

TEST_F(DispatchGuardTest, ReductionKernelsNeedOneDimensionalGroups) {
  ir::Kernel flat = k;
  flat.dispatch.group_size_rules.clear();
  EXPECT_EQ(refusal(flat, args, grid({1, 1, 1}, {32, 2, 1})),
            "iron_softmax: dispatch refused, nothing launched: a reduction kernel needs "
            "one-dimensional groups, got group size 32x2x1 (y and z must be 1) (rule from the "
            "kernel's dispatch contract)");
}

TEST_F(DispatchGuardTest, EachKindOfSizeRule) {
  ir::Kernel r = k;
  auto with_rule = [&](ir::SizeRule rule) {
    r.dispatch.group_size_rules = {rule};
    return r;
  };
  const Grid g96 = grid({1, 1, 1}, {96, 1, 1});
  EXPECT_EQ(refusal(with_rule({Rule::PowerOfTwo, 0, "", 1}), args, g96),
            "iron_softmax: dispatch refused, nothing launched: threads per group (96) must be a "
            "power of two (rule from the kernel's dispatch contract)");
  EXPECT_EQ(refusal(with_rule({Rule::AtLeast, 128, "", 1}), args, g96),
            "iron_softmax: dispatch refused, nothing launched: threads per group (96) must be at "
            "least 128 (rule from the kernel's dispatch contract)");
  EXPECT_EQ(refusal(with_rule({Rule::AtMost, 64, "", 1}), args, g96),
            "iron_softmax: dispatch refused, nothing launched: threads per group (96) must be at "
            "most 64 (rule from the kernel's dispatch contract)");
  EXPECT_EQ(refusal(with_rule({Rule::AtMost, 0, "block", 0}), args, g96),
            "iron_softmax: dispatch refused, nothing launched: a group-size rule divides "
            "constexpr 'block' by 0");
  EXPECT_EQ(refusal(with_rule({Rule::AtMost, 0, "nope", 1}), args, g96),
            "iron_softmax: dispatch refused, nothing launched: a group-size rule names 'nope', "
            "which is not a constexpr parameter");
  EXPECT_NO_THROW(runtime::check_dispatch(with_rule({Rule::AtLeast, 0, "block", 8}), args, g96));
}

TEST_F(DispatchGuardTest, RefusesTooMuchThreadgroupMemory) {
  ir::Kernel big = k;
  big.dispatch.group_size_rules.clear();
  big.shared = {{"smem0", DType::F32, 8192}, {"smem1", DType::F16, 1}};
  EXPECT_EQ(runtime::shared_bytes(big), 32768u + 16u) << "each allocation rounds up to 16 bytes";
  DeviceLimits small;
  small.max_shared_bytes = 32768;
  EXPECT_EQ(refusal(big, args, grid({1, 1, 1}, {32, 1, 1}), small),
            "iron_softmax: dispatch refused, nothing launched: threadgroup memory (32784 bytes in "
            "2 buffers) exceeds the device limit of 32768 bytes");
  EXPECT_NO_THROW(runtime::check_dispatch(big, args, grid({1, 1, 1}, {32, 1, 1}), {}));
}

TEST_F(DispatchGuardTest, TheSimulatorChecksBeforeRunning) {
  y = make_tensor(DType::F32, std::vector<double>(1024, 7.0));
  EXPECT_THROW(run(k, args, grid({4, 1, 1}, {4, 1, 1})), DispatchError);
  EXPECT_EQ(read_tensor(y)[0], 7.0) << "nothing ran";
}

TEST(LaunchGrid, ElementwiseCountsGroupsNotThreads) {
  const Grid g = Grid::elementwise(1000, 256);
  EXPECT_EQ(g.groups.x, 4u);
  EXPECT_EQ(g.group_size.x, 256u);
  EXPECT_EQ(g.groups.volume() * g.group_size.volume(), 1024u);
  EXPECT_EQ(Grid::elementwise(1024, 256).groups.x, 4u);
  EXPECT_EQ(Grid::elementwise(0, 256).groups.x, 1u) << "at least one group";
  EXPECT_EQ(Grid::elementwise(~0ull, 1).groups.x, 0xFFFFFFFFu) << "saturates; the guard refuses";
  EXPECT_EQ(Grid::elementwise(10, 0).group_size.x, 0u) << "left for the guard to refuse";
}

TEST(LaunchGrid, PerRowIsOneGroupPerRow) {
  const Grid g = Grid::per_row(300, 128);
  EXPECT_EQ(g.groups.x, 300u);
  EXPECT_EQ(g.groups.y, 1u);
  EXPECT_EQ(g.group_size.x, 128u);
}

}  // namespace
}  // namespace iron::sim_test
