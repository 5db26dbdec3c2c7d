/// Tests of compare_outputs: tolerances at their boundary, NaN and infinity, the message format.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "iron/testing/runner.hpp"

namespace iron::testing {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(CompareOutputs, EqualValuesPass) {
  EXPECT_EQ(compare_outputs("out", {1.0f, -2.0f, 0.0f}, {1.0f, -2.0f, 0.0f}, {}), "");
}

TEST(CompareOutputs, AbsoluteToleranceIsInclusive) {
  EXPECT_EQ(compare_outputs("out", {1.5f}, {1.0f}, {0.5}), "");
  EXPECT_NE(compare_outputs("out", {1.5001f}, {1.0f}, {0.5}), "");
}

TEST(CompareOutputs, RelativeToleranceScalesWithWant) {
  EXPECT_EQ(compare_outputs("out", {3.0f, -3.0f}, {2.0f, -2.0f}, {0.0, 0.5}), "");
  EXPECT_NE(compare_outputs("out", {3.0001f}, {2.0f}, {0.0, 0.5}), "");
  EXPECT_EQ(compare_outputs("out", {3.25f}, {2.0f}, {0.25, 0.5}), "");
}

TEST(CompareOutputs, NaNNeverPasses) {
  const Tolerance huge{1e30, 1e30};
  EXPECT_NE(compare_outputs("out", {kNaN}, {1.0f}, huge), "");
  EXPECT_NE(compare_outputs("out", {1.0f}, {kNaN}, huge), "");
  EXPECT_NE(compare_outputs("out", {kNaN}, {kNaN}, huge), "");
  EXPECT_NE(compare_outputs("out", {kNaN}, {1.0f}, huge).find("NaN never passes"),
            std::string::npos);
}

TEST(CompareOutputs, InfinityMatchesOnlyItself) {
  const Tolerance huge{1e30, 1e30};
  EXPECT_EQ(compare_outputs("out", {kInf, -kInf}, {kInf, -kInf}, {}), "");
  EXPECT_NE(compare_outputs("out", {kInf}, {-kInf}, huge), "");
  EXPECT_NE(compare_outputs("out", {kInf}, {3e38f}, huge), "");
  EXPECT_NE(compare_outputs("out", {1.0f}, {kInf}, huge), "");
}

TEST(CompareOutputs, MessageNamesEachMismatch) {
  EXPECT_EQ(compare_outputs("out", {0.0f, 0.5f, 2.0f}, {0.0f, 0.25f, 2.0f}, {0.001}),
            "output 'out': 1 of 3 values mismatch\n"
            "  out[1]: got 0.5, want 0.25, tolerance 0.001");
}

TEST(CompareOutputs, MessageShowsTheFirstEightAndCountsTheRest) {
  std::vector<float> got(20, 1.0f), want(20, 1.0f);
  for (std::size_t i = 5; i < 15; ++i) got[i] = 2.0f;
  const std::string m = compare_outputs("y", got, want, {});
  EXPECT_EQ(m.find("output 'y': 10 of 20 values mismatch"), 0u) << m;
  EXPECT_NE(m.find("y[5]: got 2, want 1, tolerance 0"), std::string::npos) << m;
  EXPECT_NE(m.find("y[12]:"), std::string::npos) << m;
  EXPECT_EQ(m.find("y[13]:"), std::string::npos) << m;
  EXPECT_NE(m.find("(and 2 more)"), std::string::npos) << m;
}

TEST(CompareOutputs, SizeMismatchFails) {
  EXPECT_EQ(compare_outputs("out", {1.0f}, {1.0f, 2.0f}, {}),
            "output 'out': sizes differ: got 1, want 2");
}

}  // namespace
}  // namespace iron::testing
