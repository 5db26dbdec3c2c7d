/// Tests of TestSetup: names checked against the kernel's parameters, values converted to them.
#include "iron/testing/test_setup.hpp"

#include <gtest/gtest.h>

#include "iron/core/error.hpp"
#include "iron/core/half.hpp"

namespace iron::testing {
namespace {

/// The message of the Error `fn` throws, or "" when it throws none.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TestSetup, TracesTheKernelWithTheDType) {
  const TestSetup s("testing_scale", DType::F16);
  EXPECT_EQ(s.kernel().name, "testing_scale");
  EXPECT_EQ(s.kernel().dtype, DType::F16);
  EXPECT_FALSE(s.has_grid());
  EXPECT_FALSE(s.has_tolerance());
}

TEST(TestSetup, UnknownKernelIsAnError) {
  EXPECT_EQ(error_of([] { TestSetup("testing_no_such_kernel", DType::F32); }),
            "no kernel named 'testing_no_such_kernel' (see `iron list`)");
}

TEST(TestSetup, RejectsUnknownNamesListingTheParameters) {
  TestSetup s("testing_scale", DType::F32);
  EXPECT_EQ(error_of([&] { s.input("y", {1.0f}); }),
            "kernel testing_scale has no input tensor 'y'; its parameters are: Tensor<f32> inp, "
            "Out<f32> out, Constexpr<f32> alpha, Constexpr<u32> n");
  EXPECT_NE(error_of([&] { s.output("y", 1); }).find("has no output tensor 'y'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { s.expect("y", {}); }).find("has no output tensor 'y'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { s.constant("m", 1); }).find("has no constexpr 'm'"), std::string::npos);
}

TEST(TestSetup, RejectsANameOfTheWrongKind) {
  TestSetup s("testing_scale", DType::F32);
  EXPECT_NE(error_of([&] {
              s.input("out", {1.0f});
            }).find("has no input tensor 'out' ('out' is its output tensor)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { s.output("inp", 4); }).find("('inp' is its input tensor)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { s.constant("inp", 4); }).find("('inp' is its input tensor)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { s.expect("n", {}); }).find("('n' is its constexpr)"), std::string::npos);
}

TEST(TestSetup, RejectsAValueGivenTwice) {
  TestSetup s("testing_scale", DType::F32);
  s.input("inp", {1.0f}).constant("n", 1);
  EXPECT_NE(error_of([&] { s.input("inp", {2.0f}); }), "");
  EXPECT_NE(error_of([&] { s.constant("n", 2); }), "");
}

TEST(TestSetup, InputsArePackedInTheParameterDType) {
  TestSetup s("testing_scale", DType::BF16);
  s.input("inp", {0.1f, 1.0f});
  const auto& t = s.inputs().at("inp");
  EXPECT_EQ(t.dtype, DType::BF16);
  EXPECT_EQ(t.bytes.size(), 4u);
  s.output("out", 2);
  EXPECT_EQ(s.outputs().at("out"), 2u);
}

TEST(TestSetup, InitialValuesArePackedInTheOutputDType) {
  TestSetup s("testing_scale_in_place", DType::F16);
  s.initial("x", {0.1f, 1.0f});
  const auto& t = s.initial_values().at("x");
  EXPECT_EQ(t.dtype, DType::F16);
  EXPECT_EQ(t.bytes.size(), 4u);
  EXPECT_NE(error_of([&] { s.initial("x", {1.0f}); }), "");  // given twice
  TestSetup out_of_place("testing_scale", DType::F16);
  EXPECT_NE(error_of([&] { out_of_place.initial("out", {1.0f}); })
                .find("'out' is an Out<f16>, whose contents are undefined at kernel entry; "
                      "declare it InOut<f16>"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { out_of_place.initial("inp", {1.0f}); }).find("('inp' is its input tensor)"),
      std::string::npos);
}

TEST(TestSetup, ConstantsTakeTheParameterDType) {
  TestSetup s("testing_scale", DType::F16);
  s.constant("alpha", 0.1).constant("n", 7);
  const auto& alpha = s.constants().at("alpha");
  EXPECT_EQ(alpha.dtype, DType::F16);
  EXPECT_EQ(alpha.f, round_to_f16(0.1f));
  const auto& n = s.constants().at("n");
  EXPECT_EQ(n.dtype, DType::U32);
  EXPECT_EQ(n.i, 7);
}

TEST(TestSetup, IntegerConstantsMustBeExact) {
  TestSetup s("testing_scale", DType::F32);
  EXPECT_EQ(error_of([&] { s.constant("n", 2.5); }),
            "kernel testing_scale: constexpr 'n' is u32, which cannot hold 2.5");
  EXPECT_NE(error_of([&] { s.constant("n", -1); }), "");
  EXPECT_NE(error_of([&] { s.constant("n", 4294967296.0); }), "");
}

TEST(TestSetup, GridHelpersSetTheGrid) {
  TestSetup s("testing_scale", DType::F32);
  s.grid_1d(100, 32);
  EXPECT_TRUE(s.has_grid());
  EXPECT_EQ(s.launch_grid().groups.x, 4u);
  EXPECT_EQ(s.launch_grid().group_size.x, 32u);
  s.grid_rows(6, 64);
  EXPECT_EQ(s.launch_grid().groups.x, 6u);
  EXPECT_EQ(s.launch_grid().group_size.x, 64u);
  s.grid({{4, 5, 6}, {128, 1, 1}});
  s.groups(3);
  EXPECT_EQ(s.launch_grid().groups.x, 3u);
  EXPECT_EQ(s.launch_grid().groups.y, 1u);
  EXPECT_EQ(s.launch_grid().groups.z, 1u);
  EXPECT_EQ(s.launch_grid().group_size.x, 128u);
  TestSetup unset("testing_scale", DType::F32);
  EXPECT_THROW(unset.groups(3), Error);
}

TEST(TestSetup, ToleranceOverride) {
  TestSetup s("testing_scale", DType::F32);
  s.tolerance({0.5, 0.25});
  EXPECT_TRUE(s.has_tolerance());
  EXPECT_EQ(s.tolerance_override().atol, 0.5);
  EXPECT_EQ(s.tolerance_override().rtol, 0.25);
}

}  // namespace
}  // namespace iron::testing
