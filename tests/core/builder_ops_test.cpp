/// The IR builder: fresh value ids after the kernel's, the builder's location, the results and
/// nested blocks the op table gives each op, insertion at a point, and copies with renumbered
/// values (IR in, IR out).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <unordered_map>

#include "iron/core/builder.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"

namespace iron::ir {
namespace {

/// A kernel of `values` values around `body`: input x, outputs out (f32) and counts (u32), a
/// shared allocation s; reduction mode, so barriers verify.
std::string kernel_text(std::string_view body, int values) {
  return std::string(R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  param out counts: u32
  shared s: f32[32]
  rule multiple_of 32
  values )") +
         std::to_string(values) + "\n{\n" + std::string(body) + "}\n";
}

std::string text_of(const Kernel& kernel) { return print_kernel(kernel, {.locations = false}); }

std::string problems_of(const Kernel& kernel) {
  std::string problems;
  for (const std::string& p : verify(kernel)) problems += p + "\n";
  return problems;
}

constexpr std::string_view kLoadStore = R"(  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  store out[%0], %1 : f32
)";

TEST(BuilderMake, GivesFreshValuesAfterTheKernelsInOrderAtTheInsertionPoint) {
  Kernel kernel = parse_kernel(kernel_text(kLoadStore, 2));
  Builder b(kernel, kernel.body.ops, 2);
  b.at({"kernels/k.cpp", 7});
  const ValueId square = b.make(OpKind::Mul, DType::F32, {1, 1}).result;
  const ValueId two = b.constant(DType::F32, 2.0);
  b.make(OpKind::Add, DType::F32, {square, two});
  EXPECT_EQ(text_of(kernel), text_of(parse_kernel(kernel_text(R"(  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = mul %1, %1 : f32
  %3 = const 2 : f32
  %4 = add %2, %3 : f32
  store out[%0], %1 : f32
)",
                                                              5))));
  EXPECT_EQ(kernel.body.ops[4].loc, (SourceLoc{"kernels/k.cpp", 7}));
  EXPECT_EQ(problems_of(kernel), "");
}

TEST(BuilderMake, AppendsAtTheEndOfItsListByDefault) {
  Kernel kernel = parse_kernel(kernel_text(kLoadStore, 2));
  Builder b(kernel, kernel.body.ops);
  b.make(OpKind::Barrier, DType::U32);
  EXPECT_EQ(kernel.body.ops.back().kind, OpKind::Barrier);
  EXPECT_EQ(kernel.body.ops.size(), 4u);
}

TEST(BuilderMake, ResultsAndBlocksFollowTheOpTable) {
  Kernel kernel = parse_kernel(kernel_text(kLoadStore, 2));
  std::vector<Op> ops;
  Builder b(kernel, ops);
  EXPECT_EQ(b.make(OpKind::Store, DType::F32, {0, 1}).result, kNoValue);
  EXPECT_EQ(b.make(OpKind::Barrier, DType::U32).result, kNoValue);
  EXPECT_EQ(b.make(OpKind::AtomicAdd, DType::U32, {0, 0}).result, 2u);  // its previous value
  const Op& branch = b.branch(0);
  EXPECT_EQ(branch.result, kNoValue);
  EXPECT_EQ(branch.blocks.size(), 2u);
  const Op& loop = b.loop(0, 0, 0, DType::U32);
  EXPECT_EQ(loop.result, 3u);
  EXPECT_EQ(loop.blocks.size(), 1u);
  EXPECT_EQ(b.builtin(Builtin::ThreadId, 1), 4u);
  EXPECT_EQ(ops.back().builtin, Builtin::ThreadId);
  EXPECT_EQ(ops.back().axis, 1);
  EXPECT_EQ(kernel.num_values, 5u);
}

TEST(BuilderMake, IntegerConstantsHoldTheIntegerPart) {
  Kernel kernel = parse_kernel(kernel_text(kLoadStore, 2));
  std::vector<Op> ops;
  Builder b(kernel, ops);
  b.constant(DType::I32, -3.0);
  b.constant(DType::F16, 0.5);
  EXPECT_EQ(ops[0].ivalue, -3);
  EXPECT_EQ(ops[1].fvalue, 0.5);
}

TEST(BuilderCopy, RenumbersEveryValueNestedOnesIncludedAndRenamesTheirUses) {
  Kernel kernel = parse_kernel(kernel_text(R"(  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 4 : u32
  %3 = const 1 : u32
  for %4 = %1 to %2 step %3 : u32 {
    %5 = add %0, %4 : u32
    %6 = load x[%5] : f32
    %7 = lt %5, %2 : bool
    if %7 {
      store out[%5], %6 : f32
    }
  }
)",
                                           8));
  std::unordered_map<ValueId, ValueId> renamed = {{2, 3}};  // the copy runs to %3
  Builder b(kernel, kernel.body.ops);
  b.copy(kernel.body.ops[4], renamed);
  EXPECT_EQ(text_of(kernel), text_of(parse_kernel(kernel_text(R"(  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 4 : u32
  %3 = const 1 : u32
  for %4 = %1 to %2 step %3 : u32 {
    %5 = add %0, %4 : u32
    %6 = load x[%5] : f32
    %7 = lt %5, %2 : bool
    if %7 {
      store out[%5], %6 : f32
    }
  }
  for %8 = %1 to %3 step %3 : u32 {
    %9 = add %0, %8 : u32
    %10 = load x[%9] : f32
    %11 = lt %9, %3 : bool
    if %11 {
      store out[%9], %10 : f32
    }
  }
)",
                                                              12))));
  const std::unordered_map<ValueId, ValueId> learned = {{2, 3}, {4, 8}, {5, 9}, {6, 10}, {7, 11}};
  EXPECT_EQ(renamed, learned);
  EXPECT_EQ(problems_of(kernel), "");
}

TEST(BuilderInsert, KeepsTheOpsResultLocationAndAttributes) {
  Kernel kernel = parse_kernel(kernel_text(kLoadStore, 2));
  Op moved = kernel.body.ops[1];
  moved.loc = {"kernels/k.cpp", 3};
  std::vector<Op> ops;
  Builder b(kernel, ops);
  b.at({"elsewhere.cpp", 9});
  const Op& inserted = b.insert(moved);
  EXPECT_EQ(inserted.result, 1u);
  EXPECT_EQ(inserted.param, 0);
  EXPECT_EQ(inserted.loc, (SourceLoc{"kernels/k.cpp", 3}));
  EXPECT_EQ(kernel.num_values, 2u);
}

TEST(OpViews, NameTheOperandsOfTheOpsBuilt) {
  Kernel kernel = parse_kernel(kernel_text(kLoadStore, 2));
  std::vector<Op> ops;
  Builder b(kernel, ops);
  b.make(OpKind::Sub, DType::F32, {1, 2});
  b.make(OpKind::Sqrt, DType::F32, {1});
  b.make(OpKind::SimdSum, DType::F32, {1});
  EXPECT_EQ(BinaryOp(ops[0]).lhs(), 1u);
  EXPECT_EQ(BinaryOp(ops[0]).rhs(), 2u);
  EXPECT_EQ(UnaryOp(ops[1]).operand(), 1u);
  EXPECT_EQ(CollectiveOp(ops[2]).value(), 1u);
  BinaryOp(ops[0]).rhs() = 1;
  EXPECT_EQ(ops[0].args.back(), 1u);
}

}  // namespace
}  // namespace iron::ir
