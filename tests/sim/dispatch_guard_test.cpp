/// The dispatch guard refuses launches that break the contract or the device limits, and says
/// which rule with which values; the grid helpers count groups, never threads.
#include "iron/runtime/dispatch_guard.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

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
            "tensor (out parameter), got a scalar (kernel defined at tests/sim/kernels.cpp:1)");

  std::vector<Arg> tensor_for_scalar = {&x, &y, &x};
  EXPECT_EQ(
      refusal(k, tensor_for_scalar, grid({1, 1, 1}, {128, 1, 1})),
      "iron_softmax: dispatch refused, nothing launched: argument 2 'block' must be a u32 "
      "scalar (constexpr parameter), got a tensor (kernel defined at tests/sim/kernels.cpp:1)");

  HostTensor half = zeros(DType::F16, 1024);
  std::vector<Arg> wrong_dtype = {&half, &y, scalar(DType::U32, 512)};
  EXPECT_EQ(refusal(k, wrong_dtype, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: argument 0 'x' must be a f32 "
            "tensor, got a f16 tensor (kernel defined at tests/sim/kernels.cpp:1)");

  std::vector<Arg> wrong_scalar = {&x, &y, scalar(DType::I32, 512)};
  EXPECT_EQ(refusal(k, wrong_scalar, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: argument 2 'block' must be a u32 "
            "scalar, got a i32 scalar (kernel defined at tests/sim/kernels.cpp:1)");

  std::vector<Arg> too_few = {&x, &y};
  EXPECT_EQ(refusal(k, too_few, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: the kernel takes 3 arguments "
            "(x, y, block), got 2 (kernel defined at tests/sim/kernels.cpp:1)");

  std::vector<Arg> null_tensor = {static_cast<HostTensor*>(nullptr), &y, scalar(DType::U32, 512)};
  EXPECT_EQ(refusal(k, null_tensor, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: argument 0 'x' is a null tensor"
            " (kernel defined at tests/sim/kernels.cpp:1)");

  HostTensor ragged = x;
  ragged.bytes.resize(10);
  std::vector<Arg> partial_element = {&ragged, &y, scalar(DType::U32, 512)};
  EXPECT_EQ(refusal(k, partial_element, grid({1, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: argument 0 'x' holds 10 bytes, "
            "not a whole number of f32 elements (kernel defined at tests/sim/kernels.cpp:1)");
}

TEST_F(DispatchGuardTest, RefusesGroupCountsOutsideTheDeviceLimits) {
  EXPECT_EQ(refusal(k, args, grid({0, 1, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: groups.x (0) must be at least 1"
            " (kernel defined at tests/sim/kernels.cpp:1)");
  EXPECT_EQ(refusal(k, args, grid({1, 70000, 1}, {128, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: groups.y (70000) exceeds the "
            "device limit of 65535 (kernel defined at tests/sim/kernels.cpp:1)");
}

TEST_F(DispatchGuardTest, RefusesThreadsPerGroupOutsideTheDeviceLimits) {
  EXPECT_EQ(refusal(k, args, grid({1, 1, 1}, {128, 0, 1})),
            "iron_softmax: dispatch refused, nothing launched: threads per group (0, group size "
            "128x0x1) must be at least 1 (kernel defined at tests/sim/kernels.cpp:1)");
  EXPECT_EQ(refusal(k, args, grid({1, 1, 1}, {2048, 1, 1})),
            "iron_softmax: dispatch refused, nothing launched: threads per group (2048x1x1) "
            "exceeds the device limit of 1024 (kernel defined at tests/sim/kernels.cpp:1)");
  EXPECT_EQ(refusal(k, args, grid({1, 1, 1}, {65536, 65536, 65536})),
            "iron_softmax: dispatch refused, nothing launched: threads per group "
            "(65536x65536x65536) exceeds the device limit of 1024 (kernel defined at "
            "tests/sim/kernels.cpp:1)");
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
            "constexpr 'block' by 0 (kernel defined at tests/sim/kernels.cpp:1)");
  EXPECT_EQ(refusal(with_rule({Rule::AtMost, 0, "nope", 1}), args, g96),
            "iron_softmax: dispatch refused, nothing launched: a group-size rule names 'nope', "
            "which is not a constexpr parameter (kernel defined at tests/sim/kernels.cpp:1)");
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
            "2 buffers) exceeds the device limit of 32768 bytes (kernel defined at "
            "tests/sim/kernels.cpp:1)");
  EXPECT_NO_THROW(runtime::check_dispatch(big, args, grid({1, 1, 1}, {32, 1, 1}), {}));
}

TEST_F(DispatchGuardTest, TheSimulatorChecksBeforeRunning) {
  y = make_tensor(DType::F32, std::vector<double>(1024, 7.0));
  EXPECT_THROW(run(k, args, grid({4, 1, 1}, {4, 1, 1})), DispatchError);
  EXPECT_EQ(read_tensor(y)[0], 7.0) << "nothing ran";
}

// ── Grid rules and layouts ──────────────────────────────────────────────────────────────────

using Relation = ir::GridRule::Relation;
using runtime::GuardArg;
using runtime::TensorExtent;

ir::GridRule grid_rule(std::uint8_t axis, Relation r, std::string_view bound, std::uint32_t line) {
  return {axis, r, ir::parse_size_expr(bound), {"kernels/rows.cpp", line}};
}

ir::TensorLayout layout(std::string name, bool exact, std::string_view dims, std::uint32_t line) {
  return {std::move(name), exact, ir::parse_size_dims(dims), {"kernels/rows.cpp", line}};
}

// A row kernel: x [groups.x, n] in, y [groups.x] out, one group per row, groups along y and z 1;
// its contract is declared on lines 10 to 13 of kernels/rows.cpp.
ir::Kernel rows_kernel(DType index = DType::U32) {
  IrBuilder b("iron_rows");
  const int x = b.input("x", DType::F32);
  const int y = b.output("y", DType::F32);
  b.constexpr_param("n", DType::U32);
  b.mode(ir::DispatchMode::Reduction);
  const auto i = index == DType::U32 ? b.tid() : b.op(ir::OpKind::Cast, {b.tid()});
  b.store(y, i, b.load(x, i));
  ir::Kernel k = b.build();
  if (index != DType::U32) {
    k.body.ops[1].type = index;  // the cast: the accesses index with `index`
  }
  k.dispatch.loc = {"kernels/rows.cpp", 10};
  k.dispatch.grid_rules = {grid_rule(1, Relation::Equal, "1", 11),
                           grid_rule(2, Relation::Equal, "1", 11)};
  k.dispatch.layouts = {layout("x", true, "[groups.x, n]", 12),
                        layout("y", true, "[groups.x]", 13)};
  return k;
}

std::string refusal(const ir::Kernel& k, const std::vector<GuardArg>& args, const Grid& g) {
  try {
    runtime::check_dispatch(k, args, g);
  } catch (const DispatchError& e) {
    return e.what();
  }
  return "not refused";
}

/// The guard's view of a tensor of `count` f32 elements, without allocating it.
GuardArg f32s(std::uint64_t count) { return TensorExtent{DType::F32, count * 4}; }

constexpr std::string_view kRows = "iron_rows: dispatch refused, nothing launched: ";
constexpr std::string_view kAtLine = ", dispatch(...) at kernels/rows.cpp:10)";

TEST(DispatchGuardLayouts, AcceptsTensorsOfTheirLayoutsSizes) {
  EXPECT_NO_THROW(runtime::check_dispatch(
      rows_kernel(), {f32s(8000), f32s(8), scalar(DType::U32, 1000)}, grid({8, 1, 1}, {32, 1, 1})));
}

TEST(DispatchGuardLayouts, RefusesAnInputSmallerThanItsLayout) {
  EXPECT_EQ(refusal(rows_kernel(), {f32s(4000), f32s(8), scalar(DType::U32, 1000)},
                    grid({8, 1, 1}, {32, 1, 1})),
            std::string(kRows) +
                "x holds 4000 elements; the layout [groups.x, n] needs groups.x * n = 8 * 1000 = "
                "8000 (layout(...) at kernels/rows.cpp:12" +
                std::string(kAtLine));
}

TEST(DispatchGuardLayouts, AnExactLayoutRefusesAGridSmallerThanTheRows) {
  // Four groups for eight rows would leave four rows of y unwritten: y must hold exactly 4.
  EXPECT_EQ(refusal(rows_kernel(), {f32s(4000), f32s(8), scalar(DType::U32, 1000)},
                    grid({4, 1, 1}, {32, 1, 1})),
            std::string(kRows) +
                "y holds 8 elements; the layout [groups.x] needs groups.x = 4 (layout(...) at "
                "kernels/rows.cpp:13" +
                std::string(kAtLine));
}

TEST(DispatchGuardLayouts, AnAtLeastLayoutAcceptsALargerTensorOnly) {
  ir::Kernel k = rows_kernel();
  k.dispatch.layouts[0] = layout("x", false, "[n + 2, 3]", 12);
  const Grid g = grid({8, 1, 1}, {32, 1, 1});
  EXPECT_NO_THROW(runtime::check_dispatch(k, {f32s(30), f32s(8), scalar(DType::U32, 8)}, g));
  EXPECT_NO_THROW(runtime::check_dispatch(k, {f32s(31), f32s(8), scalar(DType::U32, 8)}, g));
  EXPECT_EQ(refusal(k, {f32s(29), f32s(8), scalar(DType::U32, 8)}, g),
            std::string(kRows) +
                "x holds 29 elements; the layout [n + 2, 3] needs at least (n + 2) * 3 = (8 + 2) * "
                "3 = 30 (layout_at_least(...) at kernels/rows.cpp:12" +
                std::string(kAtLine));
}

TEST(DispatchGuardLayouts, ArithmeticIsWideAndChecked) {
  ir::Kernel k = rows_kernel();
  // 65536 rows of 65536: 2^32 elements, which u32 arithmetic would wrap to 0.
  EXPECT_EQ(refusal(k, {f32s(0), f32s(65536), scalar(DType::U32, 65536)},
                    grid({65536, 1, 1}, {32, 1, 1})),
            std::string(kRows) +
                "x holds 0 elements; the layout [groups.x, n] needs groups.x * n = 65536 * 65536 = "
                "4294967296 (layout(...) at kernels/rows.cpp:12" +
                std::string(kAtLine));
  // A product past 64 bits is refused, never wrapped.
  k.dispatch.layouts[0] = layout("x", true, "[n, n, n]", 12);
  EXPECT_EQ(
      refusal(k, {f32s(0), f32s(8), scalar(DType::U32, 4294967295.0)}, grid({8, 1, 1}, {32, 1, 1})),
      std::string(kRows) +
          "the layout [n, n, n] of x cannot be evaluated: n * n overflows 64 bits "
          "(layout(...) at kernels/rows.cpp:12" +
          std::string(kAtLine));
}

TEST(DispatchGuardLayouts, RefusesNegativeCountsAndDivisionByZero) {
  ir::Kernel k = rows_kernel();
  k.dispatch.layouts[0] = layout("x", true, "[n - 10]", 12);
  const Grid g = grid({8, 1, 1}, {32, 1, 1});
  EXPECT_EQ(refusal(k, {f32s(0), f32s(8), scalar(DType::U32, 4)}, g),
            std::string(kRows) +
                "the layout [n - 10] of x needs n - 10 = 4 - 10 = -6, a negative element count "
                "(layout(...) at kernels/rows.cpp:12" +
                std::string(kAtLine));
  k.dispatch.layouts[0] = layout("x", true, "[groups.x / (n - 4)]", 12);
  EXPECT_EQ(refusal(k, {f32s(0), f32s(8), scalar(DType::U32, 4)}, g),
            std::string(kRows) +
                "the layout [groups.x / (n - 4)] of x cannot be evaluated: groups.x / (n - 4) "
                "divides by zero (layout(...) at kernels/rows.cpp:12" +
                std::string(kAtLine));
}

TEST(DispatchGuardLayouts, RefusesMoreElementsThanTheIndexTypeAddresses) {
  // 2^32 elements satisfy the layout, but a u32 index reaches 2^32 - 1 elements at most.
  EXPECT_EQ(refusal(rows_kernel(), {f32s(4294967296), f32s(65536), scalar(DType::U32, 65536)},
                    grid({65536, 1, 1}, {32, 1, 1})),
            std::string(kRows) +
                "the layout [groups.x, n] of x needs 4294967296 elements, more than its indices "
                "can address (at most 4294967295 elements) (layout(...) at kernels/rows.cpp:12" +
                std::string(kAtLine));
  EXPECT_NO_THROW(runtime::check_dispatch(
      rows_kernel(), {f32s(4294967295), f32s(1), scalar(DType::U32, 4294967295.0)},
      grid({1, 1, 1}, {32, 1, 1})));
  // With i32 indices the limit is 2^31 - 1.
  EXPECT_EQ(
      refusal(rows_kernel(DType::I32), {f32s(2147483648), f32s(32768), scalar(DType::U32, 65536)},
              grid({32768, 1, 1}, {32, 1, 1})),
      std::string(kRows) +
          "the layout [groups.x, n] of x needs 2147483648 elements, more than its indices "
          "can address (at most 2147483647 elements) (layout(...) at kernels/rows.cpp:12" +
          std::string(kAtLine));
}

TEST(DispatchGuardLayouts, IndexLimitComesFromTheAccessesIndexType) {
  const auto limit = [](const ir::Kernel& k, std::size_t param) {
    return runtime::kernel_facts(k).index_limits.at(param);
  };
  EXPECT_EQ(limit(rows_kernel(), 0), 4294967295u);
  EXPECT_EQ(limit(rows_kernel(DType::I32), 0), 2147483647u);
  EXPECT_EQ(limit(rows_kernel(DType::U16), 1), 65535u);
  EXPECT_EQ(limit(rows_kernel(), 2), ~std::uint64_t{0}) << "n is never indexed";
}

// Facts derived once (as DeviceKernel keeps them) give every launch the same checks.
TEST(DispatchGuardLayouts, FactsDerivedOnceGiveTheSameChecks) {
  const ir::Kernel k = rows_kernel(DType::I32);
  const runtime::KernelFacts facts = runtime::kernel_facts(k);
  EXPECT_EQ(facts.shared_bytes, runtime::shared_bytes(k));
  const auto extent = [](std::uint64_t elements) {
    return runtime::GuardArg{runtime::TensorExtent{DType::F32, elements * 4, false}};
  };
  const Grid g = grid({32768, 1, 1}, {32, 1, 1});
  const std::vector<runtime::GuardArg> too_big = {extent(2147483648), extent(32768),
                                                  scalar(DType::U32, 65536)};
  const std::vector<runtime::GuardArg> fits = {extent(65536), extent(32768), scalar(DType::U32, 2)};
  std::string with_facts;
  try {
    runtime::check_dispatch(k, too_big, g, {}, facts);
  } catch (const DispatchError& e) {
    with_facts = e.what();
  }
  EXPECT_NE(with_facts.find("more than its indices can address"), std::string::npos) << with_facts;
  EXPECT_THROW(runtime::check_dispatch(k, too_big, g), DispatchError);
  EXPECT_NO_THROW(runtime::check_dispatch(k, fits, g, {}, facts));
}

TEST(DispatchGuardLayouts, AnUndeclaredTensorMustFitItsIndexType) {
  ir::Kernel k = rows_kernel(DType::I32);
  k.dispatch.layouts.clear();
  EXPECT_EQ(
      refusal(k, {f32s(2147483648), f32s(8), scalar(DType::U32, 1)}, grid({8, 1, 1}, {32, 1, 1})),
      std::string(kRows) +
          "x holds 2147483648 elements, more than its indices can address (at most "
          "2147483647 elements) (dispatch(...) at kernels/rows.cpp:10)");
}

TEST(DispatchGuardGrid, RefusesAGroupCountThatBreaksARule) {
  EXPECT_EQ(refusal(rows_kernel(), {f32s(8000), f32s(8), scalar(DType::U32, 1000)},
                    grid({8, 2, 1}, {32, 1, 1})),
            std::string(kRows) + "groups.y (2) must be 1 (grid(...) at kernels/rows.cpp:11" +
                std::string(kAtLine));
}

TEST(DispatchGuardGrid, RefusesAGridCountedInThreads) {
  ir::Kernel k = rows_kernel();
  k.dispatch.grid_rules.push_back(grid_rule(0, Relation::AtMost, "ceil_div(n, tpg)", 11));
  k.dispatch.layouts = {layout("x", true, "[n]", 12), layout("y", true, "[n]", 13)};
  const std::vector<GuardArg> args = {f32s(1000), f32s(1000), scalar(DType::U32, 1000)};
  EXPECT_NO_THROW(runtime::check_dispatch(k, args, grid({4, 1, 1}, {256, 1, 1})));
  EXPECT_NO_THROW(runtime::check_dispatch(k, args, grid({1, 1, 1}, {256, 1, 1})));
  EXPECT_EQ(refusal(k, args, grid({1000, 1, 1}, {256, 1, 1})),
            std::string(kRows) +
                "groups.x (1000) must be at most ceil_div(n, tpg) = ceil_div(1000, 256) = 4: a "
                "grid counted in threads, not in groups of 256? (grid(...) at kernels/rows.cpp:11" +
                std::string(kAtLine));
  // Five groups are one too many, but not a grid in threads.
  EXPECT_EQ(refusal(k, args, grid({5, 1, 1}, {256, 1, 1})),
            std::string(kRows) +
                "groups.x (5) must be at most ceil_div(n, tpg) = ceil_div(1000, 256) = 4 "
                "(grid(...) at kernels/rows.cpp:11" +
                std::string(kAtLine));
}

TEST(DispatchGuardGrid, ExactAndAtLeastRules) {
  ir::Kernel k = rows_kernel();
  k.dispatch.layouts.clear();
  k.dispatch.grid_rules = {grid_rule(0, Relation::Equal, "ceil_div(n, 32)", 11),
                           grid_rule(1, Relation::AtLeast, "min(n, 2)", 11)};
  const std::vector<GuardArg> args = {f32s(1), f32s(1), scalar(DType::U32, 100)};
  EXPECT_NO_THROW(runtime::check_dispatch(k, args, grid({4, 2, 1}, {32, 1, 1})));
  EXPECT_EQ(refusal(k, args, grid({3, 2, 1}, {32, 1, 1})),
            std::string(kRows) +
                "groups.x (3) must be ceil_div(n, 32) = ceil_div(100, 32) = 4 (grid(...) at "
                "kernels/rows.cpp:11" +
                std::string(kAtLine));
  EXPECT_EQ(refusal(k, args, grid({4, 1, 1}, {32, 1, 1})),
            std::string(kRows) +
                "groups.y (1) must be at least min(n, 2) = min(100, 2) = 2 (grid(...) at "
                "kernels/rows.cpp:11" +
                std::string(kAtLine));
}

TEST(DispatchGuardLayouts, TheSimulatorChecksLayoutsBeforeRunning) {
  const ir::Kernel k = rows_kernel();
  HostTensor x = zeros(DType::F32, 64);
  HostTensor y = make_tensor(DType::F32, std::vector<double>(4, 7.0));
  try {
    run(k, {&x, &y, scalar(DType::U32, 16)}, grid({2, 1, 1}, {32, 1, 1}));
    FAIL() << "a y of 4 elements for 2 rows was not refused";
  } catch (const DispatchError& e) {
    EXPECT_EQ(std::string(e.what()),
              std::string(kRows) +
                  "x holds 64 elements; the layout [groups.x, n] needs groups.x * n = 2 * 16 = 32 "
                  "(layout(...) at kernels/rows.cpp:12" +
                  std::string(kAtLine));
  }
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
