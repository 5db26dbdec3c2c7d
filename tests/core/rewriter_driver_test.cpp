/// The rewrite driver: the order it visits ops in, keep / erase / replace with a value / replace
/// with ops / expand, ops inserted before the one visited, the addresses of ops not reached yet,
/// and the removal of emptied loops and branches (IR in, IR out).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "iron/core/builder.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/rewriter.hpp"
#include "iron/core/verifier.hpp"

namespace iron::ir {
namespace {

/// A kernel of `values` values around `body`: input x, output out (f32); reduction mode.
std::string kernel_text(std::string_view body, int values) {
  return std::string(R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  rule multiple_of 32
  values )") +
         std::to_string(values) + "\n{\n" + std::string(body) + "}\n";
}

std::string text_of(const Kernel& kernel) { return print_kernel(kernel, {.locations = false}); }

/// `body` as the printer writes its kernel.
std::string canonical(std::string_view body, int values) {
  return text_of(parse_kernel(kernel_text(body, values)));
}

std::string problems_of(const Kernel& kernel) {
  std::string problems;
  for (const std::string& p : verify(kernel)) problems += p + "\n";
  return problems;
}

/// A loop holding a branch, between two stores.
constexpr std::string_view kNested = R"(  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 4 : u32
  %3 = const 1 : u32
  %4 = load x[%0] : f32
  store out[%0], %4 : f32
  for %5 = %1 to %2 step %3 : u32 {
    %6 = add %0, %5 : u32
    %7 = lt %6, %2 : bool
    if %7 {
      %8 = load x[%6] : f32
      store out[%6], %8 : f32
    } else {
      barrier
    }
  }
  %9 = add %4, %4 : f32
  store out[%0], %9 : f32
)";

/// The op names `rewrite` gives the pass, in order, with every op kept.
std::vector<std::string> visit_order(Order order) {
  Kernel kernel = parse_kernel(kernel_text(kNested, 10));
  std::vector<std::string> names;
  rewrite(kernel, order, [&](Op& op, RewriteSite&) {
    names.emplace_back(op_name(op.kind));
    return Rewrite::keep();
  });
  EXPECT_EQ(text_of(kernel), canonical(kNested, 10));
  return names;
}

TEST(Rewriter, KeepingEveryOpLeavesTheKernelAsItWas) {
  visit_order(Order::OuterFirst);
  visit_order(Order::InnerFirst);
}

TEST(Rewriter, OuterFirstGivesAnOpBeforeItsBlocks) {
  const std::vector<std::string> want = {"builtin", "const", "const",   "const", "load",
                                         "store",   "for",   "add",     "lt",    "if",
                                         "load",    "store", "barrier", "add",   "store"};
  EXPECT_EQ(visit_order(Order::OuterFirst), want);
}

TEST(Rewriter, InnerFirstGivesAnOpAfterItsBlocks) {
  const std::vector<std::string> want = {"builtin", "const", "const", "const", "load",
                                         "store",   "add",   "lt",    "load",  "store",
                                         "barrier", "if",    "for",   "add",   "store"};
  EXPECT_EQ(visit_order(Order::InnerFirst), want);
}

TEST(Rewriter, EraseRemovesTheOpNestedOnesIncluded) {
  Kernel kernel = parse_kernel(kernel_text(kNested, 10));
  rewrite(kernel, Order::InnerFirst, [](Op& op, RewriteSite&) {
    return op.kind == OpKind::Barrier ? Rewrite::erase() : Rewrite::keep();
  });
  EXPECT_EQ(text_of(kernel), canonical(R"(  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 4 : u32
  %3 = const 1 : u32
  %4 = load x[%0] : f32
  store out[%0], %4 : f32
  for %5 = %1 to %2 step %3 : u32 {
    %6 = add %0, %5 : u32
    %7 = lt %6, %2 : bool
    if %7 {
      %8 = load x[%6] : f32
      store out[%6], %8 : f32
    }
  }
  %9 = add %4, %4 : f32
  store out[%0], %9 : f32
)",
                                       10));
}

TEST(Rewriter, ReplacingWithAValueRenamesEveryLaterUseThroughChains) {
  // %2 -> %1 and then %3 -> %2: every use of either reads %1, in nested blocks too.
  constexpr std::string_view kBefore = R"(  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = add %1, %1 : f32
  %3 = mul %2, %2 : f32
  %4 = const 0 : u32
  %5 = const 2 : u32
  %6 = const 1 : u32
  for %7 = %4 to %5 step %6 : u32 {
    %8 = sub %3, %2 : f32
    store out[%7], %8 : f32
  }
)";
  Kernel kernel = parse_kernel(kernel_text(kBefore, 9));
  rewrite(kernel, Order::OuterFirst, [](Op& op, RewriteSite&) {
    if (op.kind == OpKind::Add || op.kind == OpKind::Mul) {
      return Rewrite::replace_with_value(BinaryOp(op).lhs());
    }
    return Rewrite::keep();
  });
  EXPECT_EQ(text_of(kernel), canonical(R"(  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %4 = const 0 : u32
  %5 = const 2 : u32
  %6 = const 1 : u32
  for %7 = %4 to %5 step %6 : u32 {
    %8 = sub %1, %1 : f32
    store out[%7], %8 : f32
  }
)",
                                       9));
  EXPECT_EQ(problems_of(kernel), "");
}

TEST(Rewriter, ReplacingWithOpsPutsThemInPlaceUnvisited) {
  Kernel kernel = parse_kernel(kernel_text(kNested, 10));
  int visited = 0;
  rewrite(kernel, Order::OuterFirst, [&](Op& op, RewriteSite&) {
    ++visited;
    if (op.kind != OpKind::Add || op.type != DType::F32) return Rewrite::keep();
    // x + x becomes x * 2, defining the same value.
    std::vector<Op> ops;
    Builder b(kernel, ops);
    b.at(op.loc);
    const ValueId two = b.constant(DType::F32, 2.0);
    op.kind = OpKind::Mul;
    BinaryOp(op).rhs() = two;
    b.insert(std::move(op));
    return Rewrite::replace_with_ops(std::move(ops));
  });
  EXPECT_EQ(visited, 15);
  EXPECT_EQ(text_of(kernel), canonical(R"(  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 4 : u32
  %3 = const 1 : u32
  %4 = load x[%0] : f32
  store out[%0], %4 : f32
  for %5 = %1 to %2 step %3 : u32 {
    %6 = add %0, %5 : u32
    %7 = lt %6, %2 : bool
    if %7 {
      %8 = load x[%6] : f32
      store out[%6], %8 : f32
    } else {
      barrier
    }
  }
  %10 = const 2 : f32
  %9 = mul %4, %10 : f32
  store out[%0], %9 : f32
)",
                                       11));
}

TEST(Rewriter, ExpandedOpsAreVisitedNextWithTheirBlocks) {
  // The branch gives way to its then-block, whose ops the pass then sees (and erases the load's
  // duplicate by replacing it with the first load).
  constexpr std::string_view kBefore = R"(  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 1 : u32
  %3 = lt %0, %2 : bool
  if %3 {
    %4 = load x[%0] : f32
    store out[%0], %4 : f32
  } else {
    store out[%0], %1 : f32
  }
)";
  Kernel kernel = parse_kernel(kernel_text(kBefore, 5));
  std::vector<std::string> visited;
  rewrite(kernel, Order::OuterFirst, [&](Op& op, RewriteSite&) {
    visited.emplace_back(op_name(op.kind));
    if (op.kind == OpKind::If) return Rewrite::expand(std::move(IfOp(op).then_block().ops));
    if (op.kind == OpKind::Load && op.result == 4) return Rewrite::replace_with_value(1);
    return Rewrite::keep();
  });
  EXPECT_EQ(text_of(kernel), canonical(R"(  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = const 1 : u32
  %3 = lt %0, %2 : bool
  store out[%0], %1 : f32
)",
                                       5));
  const std::vector<std::string> want = {"builtin", "load", "const", "lt", "if", "load", "store"};
  EXPECT_EQ(visited, want);
}

TEST(Rewriter, TheSitesBuilderInsertsBeforeTheOpAtItsLocation) {
  Kernel kernel = parse_kernel(kernel_text(R"(  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  store out[%0], %1 : f32
)",
                                           2));
  kernel.body.ops[2].loc = {"kernels/k.cpp", 12};
  int visited = 0;
  rewrite(kernel, Order::InnerFirst, [&](Op& op, RewriteSite& site) {
    ++visited;
    if (op.kind != OpKind::Store) return Rewrite::keep();
    Builder before = site.before();
    const ValueId neg = before.make(OpKind::Neg, DType::F32, {AccessOp(op).value()}).result;
    AccessOp(op).value() = neg;
    return Rewrite::keep();
  });
  EXPECT_EQ(visited, 3);
  EXPECT_EQ(text_of(kernel), canonical(R"(  %0 = builtin global_id.x : u32
  %1 = load x[%0] : f32
  %2 = neg %1 : f32
  store out[%0], %2 : f32
)",
                                       3));
  EXPECT_EQ(kernel.body.ops[2].loc, (SourceLoc{"kernels/k.cpp", 12}));
}

TEST(Rewriter, AnOpNotReachedYetKeepsItsAddress) {
  Kernel kernel = parse_kernel(kernel_text(kNested, 10));
  std::vector<const Op*> before;
  walk(kernel.body, [&](const Op& op) { before.push_back(&op); });
  std::vector<const Op*> given;
  rewrite(kernel, Order::InnerFirst, [&](Op& op, RewriteSite&) {
    given.push_back(&op);
    return Rewrite::keep();
  });
  // Inner first: the walk's order with each loop or branch moved after its blocks.
  const std::vector<std::size_t> walk_index = {0, 1, 2, 3, 4, 5, 7, 8, 10, 11, 12, 9, 6, 13, 14};
  ASSERT_EQ(given.size(), walk_index.size());
  for (std::size_t i = 0; i < given.size(); ++i) EXPECT_EQ(given[i], before[walk_index[i]]) << i;
}

TEST(RemoveEmptyControlFlow, RemovesEmptiedLoopsAndBranchesInnermostFirst) {
  Kernel kernel = parse_kernel(kernel_text(kNested, 10));
  rewrite(kernel, Order::InnerFirst, [](Op& op, RewriteSite&) {
    const bool in_branch =
        op.kind == OpKind::Store && op.result == kNoValue && AccessOp(op).index() == 6;
    const bool dead =
        op.kind == OpKind::Barrier || in_branch || (op.kind == OpKind::Load && op.result == 8);
    return dead ? Rewrite::erase() : Rewrite::keep();
  });
  remove_empty_control_flow(kernel);
  EXPECT_EQ(text_of(kernel), canonical(R"(  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 4 : u32
  %3 = const 1 : u32
  %4 = load x[%0] : f32
  store out[%0], %4 : f32
  for %5 = %1 to %2 step %3 : u32 {
    %6 = add %0, %5 : u32
    %7 = lt %6, %2 : bool
  }
  %9 = add %4, %4 : f32
  store out[%0], %9 : f32
)",
                                       10));
  rewrite(kernel, Order::InnerFirst, [](Op& op, RewriteSite&) {
    const bool index_math =
        (op.kind == OpKind::Add && op.type == DType::U32) || op.kind == OpKind::Lt;
    return index_math ? Rewrite::erase() : Rewrite::keep();
  });
  remove_empty_control_flow(kernel);
  EXPECT_EQ(text_of(kernel), canonical(R"(  %0 = builtin global_id.x : u32
  %1 = const 0 : u32
  %2 = const 4 : u32
  %3 = const 1 : u32
  %4 = load x[%0] : f32
  store out[%0], %4 : f32
  %9 = add %4, %4 : f32
  store out[%0], %9 : f32
)",
                                       10));
}

}  // namespace
}  // namespace iron::ir
