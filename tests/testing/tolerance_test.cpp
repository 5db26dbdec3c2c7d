/// Tests of the error-bound helpers against bounds computed by hand, and of the runner's
/// refusal of a case that states no tolerance.
#include "iron/testing/tolerance.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "iron/core/error.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"

namespace iron::testing::tolerance {
namespace {

TEST(Tolerance, UnitRoundoffAndUnderflowPerDType) {
  EXPECT_EQ(unit_roundoff(DType::F32), std::ldexp(1.0, -24));
  EXPECT_EQ(unit_roundoff(DType::F16), std::ldexp(1.0, -11));
  EXPECT_EQ(unit_roundoff(DType::BF16), 1.0 / 256);
  EXPECT_EQ(underflow(DType::F16), std::ldexp(1.0, -25));  // half of f16's 2^-24 subnormal
  EXPECT_THROW(unit_roundoff(DType::U32), Error);
}

TEST(Tolerance, GammaAndSumErrorMatchHandComputedBounds) {
  const double u = std::ldexp(1.0, -24);
  EXPECT_EQ(gamma(0), 0.0);
  EXPECT_DOUBLE_EQ(gamma(10), 10 * u / (1 - 10 * u));
  // 4096 terms in [-1, 1] summed sequentially (depth 4095) with Σ|x| = 2048:
  // 4095 · 2^-24 / (1 − 4095 · 2^-24) · 2048 = 0.49998...
  EXPECT_NEAR(sum_error(4095, 2048.0), 0.4999, 1e-4);
  EXPECT_THROW(gamma(std::size_t{1} << 24), Error);  // k·u = 1: no bound
}

TEST(Tolerance, GroupSumDepth) {
  EXPECT_EQ(group_sum_depth(4096, 256), 15u + 255u);  // 16 terms a thread, then 256 partials
  EXPECT_EQ(group_sum_depth(1000, 128), 7u + 127u);   // ⌈1000/128⌉ = 8
  EXPECT_EQ(group_sum_depth(70, 1024), 69u);          // idle threads add exact zeros
  EXPECT_EQ(group_sum_depth(1, 32), 0u);              // one term: exact
}

TEST(Tolerance, CorrectlyRoundedIsExactInF32) {
  EXPECT_EQ(correctly_rounded(DType::F32).atol, 0.0);
  EXPECT_EQ(correctly_rounded(DType::F32).rtol, 0.0);
  EXPECT_EQ(correctly_rounded(DType::BF16).rtol, 1.0 / 256);
  EXPECT_EQ(correctly_rounded(DType::F16).atol, std::ldexp(1.0, -25));
}

TEST(Tolerance, RowAbsSumsAndMaxAbs) {
  const std::vector<float> x = {1, -2, 3, -4, 0.5f, 0.25f};
  EXPECT_EQ(max_row_abs_sum(x, 2, 3), 6.0);  // rows {1,-2,3} = 6 and {-4,0.5,0.25} = 4.75
  EXPECT_EQ(max_row_abs_sum(x, 3, 2), 7.0);  // rows {1,-2}, {3,-4}, {0.5,0.25}
  EXPECT_EQ(max_abs(x), 4.0);
  EXPECT_EQ(max_row_range(x, 2, 3), 5.0);  // {1,-2,3}: 3 − (−2); {-4,0.5,0.25}: 4.5
  EXPECT_THROW(max_row_abs_sum(x, 4, 2), Error);
}

TEST(Tolerance, StoredAddsTheOutputAndOracleRoundings) {
  const double u32 = std::ldexp(1.0, -24);
  // An f32 result within 1e-3 + 3u relative, stored as f32: rtol (3u + u) / (1 − u).
  const Tolerance f32 = stored(DType::F32, 1e-3, 3 * u32);
  EXPECT_DOUBLE_EQ(f32.rtol, 4 * u32 / (1 - u32));
  EXPECT_NEAR(f32.atol, 1e-3, 1e-30);
  // Stored as bf16: one more rounding of 2^-8 on the value and on the absolute error.
  const Tolerance bf16 = stored(DType::BF16, 1e-3, 3 * u32);
  EXPECT_DOUBLE_EQ(bf16.rtol, (3 * u32 + u32 + (1.0 / 256) * (1 + 3 * u32)) / (1 - u32));
  EXPECT_NEAR(bf16.atol, 1e-3 * (1 + 1.0 / 256), 1e-30);
  // f16 outputs may round to a subnormal: at least half f16's subnormal spacing absolute.
  EXPECT_GE(stored(DType::F16, 0, 0).atol, std::ldexp(1.0, -25));
  EXPECT_DOUBLE_EQ(relative(DType::F32, 5).rtol, (gamma(5) + u32) / (1 - u32));
  EXPECT_EQ(exact().atol, 0.0);
  EXPECT_EQ(exact().rtol, 0.0);
}

/// The bound must hold for the worst case it is stated for: a sequential f32 sum of terms that
/// each lose half an ulp of the running total stays within sum_error.
TEST(Tolerance, SumErrorHoldsForASequentialF32Sum) {
  const std::size_t n = 100000;
  float s = 0.0f;
  double exact = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = 0.1f + static_cast<float>(i % 7) * 1e-3f;
    s += x;
    exact += x;
  }
  const double err = std::fabs(static_cast<double>(s) - exact);
  EXPECT_GT(err, 0.0);
  EXPECT_LE(err, sum_error(n - 1, exact));
}

TEST(Tolerance, RunnerRefusesACaseThatStatesNone) {
  auto backend = runtime::make_backend("sim");
  for (const auto& test : registered_tests()) {
    if (test.name != "testing_scale.states_no_tolerance") continue;
    const TestResult r = run_test(test, DType::F32, *backend, 1);
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.message.find("test testing_scale.states_no_tolerance (f32) states no tolerance"),
              std::string::npos)
        << r.message;
    return;
  }
  FAIL() << "the fixture testing_scale.states_no_tolerance is not registered";
}

}  // namespace
}  // namespace iron::testing::tolerance
