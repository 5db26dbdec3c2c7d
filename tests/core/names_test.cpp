/// Names of dtypes, op kinds, builtins and contract terms; locations and internal errors.
#include <gtest/gtest.h>

#include <type_traits>

#include "iron/core/error.hpp"
#include "iron/core/ir.hpp"

namespace iron::ir {
namespace {

TEST(CoreNames, DTypeNamesRoundTrip) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U32, DType::U8, DType::I8,
                  DType::U16, DType::Bool}) {
    EXPECT_EQ(parse_dtype(dtype_name(t)), t) << dtype_name(t);
  }
  EXPECT_EQ(dtype_name(DType::BF16), "bf16");
  EXPECT_EQ(parse_dtype("f64"), std::nullopt);
  EXPECT_EQ(parse_dtype(""), std::nullopt);
}

TEST(CoreNames, DTypeSizes) {
  EXPECT_EQ(dtype_size(DType::F32), 4u);
  EXPECT_EQ(dtype_size(DType::F16), 2u);
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(dtype_size(DType::I32), 4u);
  EXPECT_EQ(dtype_size(DType::U32), 4u);
  EXPECT_EQ(dtype_size(DType::U8), 1u);
  EXPECT_EQ(dtype_size(DType::I8), 1u);
  EXPECT_EQ(dtype_size(DType::U16), 2u);
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
}

TEST(CoreNames, OpNamesRoundTripAndClasses) {
#define IRON_X(e, s, c, ...)                         \
  {                                                  \
    OpKind k = OpKind::Const;                        \
    EXPECT_EQ(op_name(OpKind::e), s);                \
    ASSERT_TRUE(parse_op_name(s, k)) << s;           \
    EXPECT_EQ(k, OpKind::e) << s;                    \
    EXPECT_EQ(op_class(OpKind::e), OpClass::c) << s; \
  }
  IRON_IR_OPS(IRON_X)
#undef IRON_X
  OpKind k = OpKind::Const;
  EXPECT_FALSE(parse_op_name("simd.sum2", k));
}

TEST(CoreNames, BuiltinNames) {
  const char* names[] = {"thread_id", "group_id", "group_size", "grid_groups",
                         "global_id", "lane",     "simdgroup",  "simdgroup_count"};
  for (int i = 0; i < 8; ++i) {
    const auto b = static_cast<Builtin>(i);
    EXPECT_EQ(builtin_name(b), names[i]);
    Builtin parsed = Builtin::Lane;
    ASSERT_TRUE(parse_builtin_name(names[i], parsed));
    EXPECT_EQ(parsed, b);
  }
  Builtin b = Builtin::Lane;
  EXPECT_FALSE(parse_builtin_name("warp", b));
}

TEST(CoreNames, ContractAndParamNames) {
  EXPECT_EQ(param_kind_name(ParamKind::Input), "in");
  EXPECT_EQ(param_kind_name(ParamKind::Output), "out");
  EXPECT_EQ(param_kind_name(ParamKind::Constexpr), "constexpr");
  EXPECT_EQ(param_kind_name(ParamKind::InOut), "inout");
  EXPECT_TRUE(is_output(ParamKind::Output) && is_output(ParamKind::InOut));
  EXPECT_FALSE(is_output(ParamKind::Input) || is_output(ParamKind::Constexpr));
  EXPECT_EQ(dispatch_mode_name(DispatchMode::Elementwise), "elementwise");
  EXPECT_EQ(dispatch_mode_name(DispatchMode::Reduction), "reduction");
  EXPECT_EQ(dispatch_mode_name(DispatchMode::Tiled), "tiled");
  const char* rules[] = {"multiple_of", "at_least", "at_most", "exactly", "power_of_two"};
  for (int i = 0; i < 5; ++i) {
    const auto r = static_cast<SizeRule::Kind>(i);
    EXPECT_EQ(size_rule_name(r), rules[i]);
    SizeRule::Kind parsed = SizeRule::Kind::MultipleOf;
    ASSERT_TRUE(parse_size_rule_name(rules[i], parsed));
    EXPECT_EQ(parsed, r);
  }
  ParamKind pk = ParamKind::Input;
  EXPECT_TRUE(parse_param_kind_name("constexpr", pk));
  EXPECT_EQ(pk, ParamKind::Constexpr);
  EXPECT_TRUE(parse_param_kind_name("inout", pk));
  EXPECT_EQ(pk, ParamKind::InOut);
  DispatchMode m = DispatchMode::Elementwise;
  EXPECT_TRUE(parse_dispatch_mode_name("tiled", m));
  EXPECT_EQ(m, DispatchMode::Tiled);
  EXPECT_FALSE(parse_dispatch_mode_name("grid", m));
}

TEST(CoreNames, FindParamAndCountOps) {
  Kernel k;
  k.params = {{"inp", ParamKind::Input, DType::F32}, {"out", ParamKind::Output, DType::F32}};
  EXPECT_EQ(k.find_param("out"), 1);
  EXPECT_EQ(k.find_param("missing"), -1);
  Op loop;
  loop.kind = OpKind::For;
  loop.blocks.resize(1);
  loop.blocks[0].ops.resize(3);
  k.body.ops = {Op{}, loop};
  EXPECT_EQ(count_ops(k), 5u);
}

TEST(CoreErrors, FormatLocAndInternalError) {
  EXPECT_EQ(format_loc({"kernels/ops/scale.cpp", 12}), "kernels/ops/scale.cpp:12");
  EXPECT_EQ(format_loc({}), "<unknown location>");
  try {
    IRON_INTERNAL_ASSERT(1 + 1 == 3, "arithmetic broke");
    FAIL() << "no throw";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("internal error: arithmetic broke (", 0), 0u) << what;
    EXPECT_NE(what.find("names_test.cpp:"), std::string::npos) << what;
  }
  EXPECT_THROW(IRON_INTERNAL_ERROR("unreachable"), InternalError);
}

/// The `iron` command tells the kinds apart by type: a usage mistake is a user error, an
/// internal error is none, so no handler of user errors catches Iron's own bugs.
TEST(CoreErrors, KindsAreTypes) {
  static_assert(std::is_base_of_v<Error, UsageError>);
  static_assert(std::is_base_of_v<Error, DispatchError>);
  static_assert(!std::is_base_of_v<Error, InternalError>);
  static_assert(std::is_base_of_v<std::logic_error, InternalError>);
  try {
    IRON_INTERNAL_ERROR("broken");
  } catch (const Error&) {
    ADD_FAILURE() << "an internal error caught as a user error";
  } catch (const InternalError&) {
    SUCCEED();
  }
}

}  // namespace
}  // namespace iron::ir
