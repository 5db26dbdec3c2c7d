/// The dispatch contract's grid rules and layouts: size expressions (printing, parsing, checked
/// evaluation), their IR text form with source lines, the verifier's checks and the hash.
#include <gtest/gtest.h>

#include <string>

#include "iron/core/error.hpp"
#include "iron/core/hash.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/size_expr.hpp"
#include "iron/core/verifier.hpp"

namespace iron::ir {
namespace {

constexpr std::string_view kKernel =
    R"(kernel iron_rows dtype=f32 mode=reduction  ; kernels/ops/rows.cpp:20
  param in inp: f32
  param in table: f32
  param out out: f32
  param constexpr n: u32
  param constexpr vocab: u32
  dispatch  ; kernels/ops/rows.cpp:22
  rule multiple_of 32
  grid groups.x <= ceil_div(n, tpg)  ; kernels/ops/rows.cpp:23
  grid groups.y == 1  ; kernels/ops/rows.cpp:23
  layout inp == [groups.x, n]  ; kernels/ops/rows.cpp:24
  layout table >= [vocab, max(n, 2) - 1]  ; kernels/ops/rows.cpp:25
  layout out == [groups.x * (n + 1) / 2]  ; kernels/ops/rows.cpp:26
  values 3
{
  %0 = builtin thread_id.x : u32  ; kernels/ops/rows.cpp:27
  %1 = load inp[%0] : f32
  %2 = load table[%0] : f32
  store out[%0], %1 : f32
}
)";

SourceLoc at(std::uint32_t line) { return {"kernels/ops/rows.cpp", line}; }

TEST(SizeExpr, PrintsWithOnlyTheParenthesesItNeeds) {
  for (const std::string_view text :
       {"groups.x * n", "(a + b) * c", "a - (b - c)", "a - b - c", "a / b * c", "a / (b * c)",
        "ceil_div(n, tpg) + min(groups.y, 3) * max(groups.z, 1)", "n", "42"}) {
    EXPECT_EQ(print_size_expr(parse_size_expr(text)), text);
  }
  EXPECT_EQ(print_size_expr(parse_size_expr("((a)*(b + c))")), "a * (b + c)");
  EXPECT_EQ(print_size_dims(parse_size_dims("[ groups.x,n ]")), "[groups.x, n]");
}

TEST(SizeExpr, ParseErrorsSayWhat) {
  auto error = [](std::string_view text) {
    try {
      parse_size_dims(text);
    } catch (const IrError& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  EXPECT_EQ(error("[n +]"),
            "in '[n +]': expected a number, a constexpr name, groups.x|y|z, tpg "
            "or a call at column 5, found ']'");
  EXPECT_EQ(error("[groups.w]"),
            "in '[groups.w]': expected groups.x, groups.y or groups.z at "
            "column 2, found 'groups.w]'");
  EXPECT_EQ(error("n"), "in 'n': expected '[' at column 1, found 'n'");
  EXPECT_EQ(error("[99999999999999999999]"),
            "in '[99999999999999999999]': expected an integer below 2^63 at column 2, found "
            "'99999999999999999999]'");
}

TEST(SizeExpr, DeepOrLongInputIsRefusedNotRecursedInto) {
  const std::string deep = std::string(100000, '(') + "n" + std::string(100000, ')');
  EXPECT_THROW(parse_size_expr(deep), IrError);
  std::string chain = "n";
  for (int i = 0; i < 100000; ++i) chain += " + n";
  EXPECT_THROW(parse_size_expr(chain), IrError);
  const std::string nested = std::string(60, '(') + "n" + std::string(60, ')');
  EXPECT_EQ(print_size_expr(parse_size_expr(nested)), "n") << "60 levels are fine";
}

TEST(SizeExpr, EvaluatesInCheckedSixtyFourBitArithmetic) {
  const auto values = [](const SizeExpr& leaf) -> std::optional<std::int64_t> {
    if (leaf.kind == SizeExpr::Kind::ThreadsPerGroup) return 256;
    if (leaf.kind == SizeExpr::Kind::Groups) return 1 + leaf.axis;
    if (leaf.name == "big") return 4294967295;
    if (leaf.name == "neg") return -7;
    if (leaf.name == "zero") return 0;
    return std::nullopt;
  };
  auto eval = [&](std::string_view text) {
    return evaluate_size_expr(parse_size_expr(text), values);
  };
  EXPECT_EQ(eval("ceil_div(1000, tpg)").value, 4);
  EXPECT_EQ(eval("ceil_div(1024, tpg)").value, 4);
  EXPECT_EQ(eval("ceil_div(neg, 2)").value, -3) << "rounds up, towards zero for negatives";
  EXPECT_EQ(eval("neg / 2").value, -3);
  EXPECT_EQ(eval("groups.x + groups.y * groups.z").value, 7);
  EXPECT_EQ(eval("min(big, 3) - max(neg, 1)").value, 2);
  EXPECT_EQ(eval("big * big").error, "big * big overflows 64 bits");
  EXPECT_EQ(eval("big * 2147483648").value, 9223372034707292160) << "fits in 64 bits";
  EXPECT_EQ(eval("9223372036854775807 + 1").error, "9223372036854775807 + 1 overflows 64 bits");
  EXPECT_EQ(eval("0 - 9223372036854775807 - 2").error,
            "0 - 9223372036854775807 - 2 overflows 64 bits");
  EXPECT_EQ(eval("n / zero").error, "'n' has no value");
  EXPECT_EQ(eval("big / zero").error, "big / zero divides by zero");
  EXPECT_EQ(eval("ceil_div(big, zero)").error, "ceil_div(big, zero) divides by zero");
}

TEST(ContractText, RoundTripsWithLocations) {
  const Kernel k = parse_kernel(kKernel);
  EXPECT_EQ(print_kernel(k), kKernel);
  EXPECT_EQ(k.dispatch.loc, at(22));
  ASSERT_EQ(k.dispatch.grid_rules.size(), 2u);
  const GridRule& x = k.dispatch.grid_rules[0];
  EXPECT_EQ(x.axis, 0);
  EXPECT_EQ(x.relation, GridRule::Relation::AtMost);
  EXPECT_EQ(x.bound, parse_size_expr("ceil_div(n, tpg)"));
  EXPECT_EQ(x.loc, at(23));
  EXPECT_EQ(k.dispatch.grid_rules[1].axis, 1);
  EXPECT_EQ(k.dispatch.grid_rules[1].relation, GridRule::Relation::Equal);
  ASSERT_EQ(k.dispatch.layouts.size(), 3u);
  const TensorLayout* table = k.dispatch.layout_of("table");
  ASSERT_NE(table, nullptr);
  EXPECT_FALSE(table->exact);
  EXPECT_EQ(table->dims, parse_size_dims("[vocab, max(n, 2) - 1]"));
  EXPECT_EQ(table->loc, at(25));
  EXPECT_TRUE(k.dispatch.layout_of("inp")->exact);
  EXPECT_EQ(k.dispatch.layout_of("n"), nullptr);
  EXPECT_TRUE(verify(k).empty());
}

TEST(ContractText, LocationsCanBeLeftOut) {
  const std::string text = print_kernel(parse_kernel(kKernel), {.locations = false});
  EXPECT_EQ(text.find("dispatch"), std::string::npos)
      << "the dispatch line only carries a location";
  const Kernel k = parse_kernel(text);
  EXPECT_FALSE(k.dispatch.loc.known());
  EXPECT_FALSE(k.dispatch.layouts[0].loc.known());
  EXPECT_EQ(k.dispatch.layouts, [] {
    auto layouts = parse_kernel(kKernel).dispatch.layouts;
    for (auto& l : layouts) l.loc = {};
    return layouts;
  }());
  EXPECT_EQ(print_kernel(k, {.locations = false}), text);
}

std::string parse_error(std::string text) {
  try {
    parse_kernel(text);
  } catch (const IrError& e) {
    return e.what();
  }
  return "parsed";
}

/// kKernel with line `from` replaced by `to`.
std::string with_line(std::string_view from, std::string_view to) {
  std::string text(kKernel);
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(ContractText, ParseErrorsNameTheLine) {
  EXPECT_EQ(parse_error(with_line("grid groups.y == 1", "grid groups.w == 1")),
            "line 10: expected 'groups.x', 'groups.y' or 'groups.z' after 'grid'");
  EXPECT_EQ(parse_error(with_line("grid groups.y == 1", "grid groups.y < 1")),
            "line 10: expected '==', '<=' or '>=' after the grid axis, the tensor or the "
            "constexpr's name");
  EXPECT_EQ(parse_error(with_line("grid groups.y == 1", "grid groups.y == 1 +")),
            "line 10: in '1 +': expected a number, a constexpr name, groups.x|y|z, tpg or a call "
            "at column 4, found the end");
  EXPECT_EQ(parse_error(with_line("layout inp == [groups.x, n]", "layout inp <= [n]")),
            "line 11: a layout is '==' or '>=', not '<='");
  EXPECT_EQ(parse_error(with_line("layout inp == [groups.x, n]", "layout inp == n")),
            "line 11: in 'n': expected '[' at column 1, found 'n'");
  EXPECT_EQ(parse_error(with_line("  rule multiple_of 32\n", "  rule multiple_of 32  ; a.cpp:3\n")),
            "line 8: this line takes no location");
}

TEST(ContractText, TheVerifierChecksNamesAndTensors) {
  auto problems = [](std::string_view from, std::string_view to) {
    std::string all;
    for (const auto& p : verify(parse_kernel(with_line(from, to)))) all += p + "\n";
    return all;
  };
  EXPECT_EQ(problems("layout out == [groups.x * (n + 1) / 2]", "layout n == [groups.x]"),
            "kernel iron_rows: kernels/ops/rows.cpp:26: layout of 'n', which is not a tensor "
            "parameter\n");
  EXPECT_EQ(problems("layout out == [groups.x * (n + 1) / 2]", "layout inp == [groups.x]"),
            "kernel iron_rows: kernels/ops/rows.cpp:26: layout of 'inp' declared twice\n");
  EXPECT_EQ(problems("grid groups.y == 1", "grid groups.y == rows"),
            "kernel iron_rows: kernels/ops/rows.cpp:23: grid rule on groups.y: 'rows' is not an "
            "integer constexpr parameter\n");
  EXPECT_EQ(problems("layout inp == [groups.x, n]", "layout inp == [groups.x, inp]"),
            "kernel iron_rows: kernels/ops/rows.cpp:24: layout of 'inp': 'inp' is not an integer "
            "constexpr parameter\n");
}

TEST(ContractText, TheHashSeesRulesAndLayoutsButNotTheirLines) {
  const std::uint64_t h = structural_hash(parse_kernel(kKernel));
  for (const auto& [from, to] : std::vector<std::pair<std::string_view, std::string_view>>{
           {"grid groups.y == 1", "grid groups.y >= 1"},
           {"grid groups.y == 1", "grid groups.z == 1"},
           {"grid groups.y == 1", "grid groups.y == 2"},
           {"layout inp == [groups.x, n]", "layout inp >= [groups.x, n]"},
           {"layout inp == [groups.x, n]", "layout inp == [groups.x * n]"},
           {"layout inp == [groups.x, n]", "layout inp == [groups.y, n]"},
           {"layout inp == [groups.x, n]", "layout inp == [groups.x, vocab]"}}) {
    EXPECT_NE(structural_hash(parse_kernel(with_line(from, to))), h) << to;
  }
  EXPECT_EQ(structural_hash(parse_kernel(with_line("rows.cpp:24", "rows.cpp:99"))), h);
}

}  // namespace
}  // namespace iron::ir
