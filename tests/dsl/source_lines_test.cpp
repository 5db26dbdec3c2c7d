// Every op the DSL traces carries the line of the C++ expression that made it: operators,
// casts, intrinsics, loads and stores, Var declarations and assignments, index literals.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "iron/iron.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;

const std::string kFile = "tests/dsl/source_lines_test.cpp";

/// The lines of the ops of `kind` in kernel `name` (f32), in trace order.
std::vector<std::uint32_t> lines_of(const char* name, ir::OpKind kind) {
  std::vector<std::uint32_t> lines;
  ir::walk(kernel_ir_for(name, DType::F32).body, [&](const ir::Op& op) {
    if (op.kind != kind) return;
    EXPECT_EQ(op.loc.file, kFile) << ir::op_name(op.kind);
    lines.push_back(op.loc.line);
  });
  return lines;
}

using Lines = std::vector<std::uint32_t>;

// Each statement below is on its own line, after a DSL call on another line, so an op that took
// the previous call's line (as operators once did) fails the test.
std::map<std::string, std::uint32_t> g_line;
IRON_KERNEL(lines_operators, (Tensor<T> inp, Out<f32> out, Constexpr<u32> n)) {
  auto i = program_id<0>();
  auto x = cast<f32>(load(inp[i]));
  g_line["add"] = __LINE__ + 1;
  auto sum = x + 2.0f;
  g_line["div"] = __LINE__ + 1;
  auto quotient = sum / x;
  g_line["rem"] = __LINE__ + 1;
  auto rest = i % n;
  g_line["lt"] = __LINE__ + 1;
  auto below = rest < 7u;
  g_line["shl"] = __LINE__ + 1;
  auto shifted = 1u << rest;
  g_line["neg"] = __LINE__ + 1;
  auto negated = -quotient;
  g_line["and"] = __LINE__ + 1;
  auto both = below && (shifted != 0u);
  g_line["select"] = __LINE__ + 1;
  auto chosen = select(both, negated, 0.0f);
  g_line["sqrt"] = __LINE__ + 1;
  auto root = sqrt(chosen);
  g_line["store"] = __LINE__ + 1;
  store(out[i], root);
}

TEST(DslSourceLines, OperatorsAndIntrinsicsRecordTheirOwnLine) {
  kernel_ir_for("lines_operators", DType::F32);  // records g_line before it is read below
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::Add), Lines{g_line["add"]});
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::Div), Lines{g_line["div"]});
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::Rem), Lines{g_line["rem"]});
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::Lt), Lines{g_line["lt"]});
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::Shl), Lines{g_line["shl"]});
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::Neg), Lines{g_line["neg"]});
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::Ne), Lines{g_line["and"]});
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::And), Lines{g_line["and"]});
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::Select), Lines{g_line["select"]});
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::Sqrt), Lines{g_line["sqrt"]});
  EXPECT_EQ(lines_of("lines_operators", ir::OpKind::Store), Lines{g_line["store"]});
  // The literals' constants take the line of the operator they are an operand of.
  const Lines consts = lines_of("lines_operators", ir::OpKind::Const);
  for (const char* key : {"add", "lt", "shl", "and", "select"}) {
    EXPECT_NE(std::find(consts.begin(), consts.end(), g_line[key]), consts.end()) << key;
  }
}

IRON_KERNEL(lines_vars, (Tensor<T> inp, Out<f32> out, Constexpr<u32> n)) {
  auto i = program_id<0>();
  g_line["decl"] = __LINE__ + 1;
  Var<f32> acc = 0.0f;
  g_line["loop"] = __LINE__ + 1;
  for (auto j : range(0u, n)) {
    g_line["compound"] = __LINE__ + 1;
    acc += cast<f32>(load(inp[j]));
  }
  g_line["assign"] = __LINE__ + 1;
  acc = acc * 0.5f;
  g_line["copy"] = __LINE__ + 1;
  Var<f32> copy = acc;
  g_line["get"] = __LINE__ + 1;
  acc = copy.get();
  g_line["index"] = __LINE__ + 1;
  store(out[3u], acc);
  store(out[i], copy);
}

TEST(DslSourceLines, VarsRecordTheirOwnLine) {
  kernel_ir_for("lines_vars", DType::F32);  // records g_line before it is read below
  EXPECT_EQ(lines_of("lines_vars", ir::OpKind::VarDecl), (Lines{g_line["decl"], g_line["copy"]}));
  EXPECT_EQ(lines_of("lines_vars", ir::OpKind::For), Lines{g_line["loop"]});
  EXPECT_EQ(lines_of("lines_vars", ir::OpKind::VarStore),
            (Lines{g_line["compound"], g_line["assign"], g_line["get"]}));
  EXPECT_EQ(lines_of("lines_vars", ir::OpKind::Mul), Lines{g_line["assign"]});
  // acc += …, acc * 0.5f, the copy's initial value, copy.get(), and the two stores' values.
  EXPECT_EQ(lines_of("lines_vars", ir::OpKind::VarLoad),
            (Lines{g_line["compound"], g_line["assign"], g_line["copy"], g_line["get"],
                   g_line["index"], g_line["index"] + 1}));
  // The constant index 3u is made where the index is written.
  const Lines consts = lines_of("lines_vars", ir::OpKind::Const);
  EXPECT_NE(std::find(consts.begin(), consts.end(), g_line["index"]), consts.end());
}

// No op of any kernel linked into the tests takes its line from inside Iron's headers (which
// happens when a header calls a located function without passing the user's location on).
TEST(DslSourceLines, NoOpIsLocatedInIronsHeaders) {
  std::size_t traced = 0;
  for (const KernelInfo& info : registered_kernels()) {
    ir::Kernel k;
    try {
      k = info.trace(info.dtypes.front());
    } catch (const iron::Error&) {
      continue;  // the deliberately broken kernels of the trace-error tests
    }
    ++traced;
    ir::walk(k.body, [&](const ir::Op& op) {
      EXPECT_TRUE(op.loc.known()) << info.name << ": " << ir::op_name(op.kind);
      EXPECT_NE(op.loc.file.rfind("include/", 0), 0u)
          << info.name << ": " << ir::op_name(op.kind) << " at " << iron::format_loc(op.loc);
    });
  }
  EXPECT_GT(traced, 20u);
}

// The simulator's division-by-zero report names the line of the `/`, not of the DSL call
// before it.
int g_div_line = 0;
IRON_KERNEL(lines_divide_by_zero, (Tensor<u32> inp, Out<u32> out, Constexpr<u32> parts)) {
  auto i = program_id<0>();
  auto v = load(inp[i]);
  g_div_line = __LINE__ + 1;
  auto share = v / parts;
  store(out[i], share);
}
IRON_TEST(lines_divide_by_zero, zero_parts, F32(0.0)) {
  return iron::testing::TestSetup("lines_divide_by_zero", dt)
      .input("inp", std::vector<float>(32, 6.0f))
      .output("out", 32)
      .constant("parts", 0)
      .expect("out", std::vector<float>(32, 0.0f))
      .grid_1d(32, 32);
}

TEST(DslSourceLines, DivisionByZeroReportNamesTheOperatorsLine) {
  const iron::testing::TestCase* test = nullptr;
  for (const auto& t : iron::testing::registered_tests()) {
    if (t.name == "lines_divide_by_zero.zero_parts") test = &t;
  }
  ASSERT_NE(test, nullptr);
  auto sim = iron::runtime::make_backend("sim");
  const auto result = iron::testing::run_test(*test, DType::F32, *sim, 1);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.message.find("division by zero"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("lines_divide_by_zero"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find(kFile + ":" + std::to_string(g_div_line)), std::string::npos)
      << result.message;
}

}  // namespace
