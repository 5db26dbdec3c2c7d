/// Tests of BenchSetup and of the bench checks that need no GPU: names checked against the
/// kernel's parameters, fills validated, setups checked by `iron bench --dry-run`, and the
/// median/min/max the runner reports.
#include <gtest/gtest.h>

#include "iron/bench/device.hpp"
#include "iron/bench/runner.hpp"
#include "iron/bench/setup.hpp"
#include "iron/core/error.hpp"

namespace iron::bench {
namespace {

template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A complete, valid bench of testing_scale; tests remove one piece at a time.
BenchSetup valid(DType dt) {
  return BenchSetup("testing_scale", dt)
      .random("inp", 1024)
      .output("out", 1024)
      .constant("alpha", 2.0)
      .constant("n", 1024)
      .grid_1d(1024, 256)
      .bytes_moved(8192)
      .peer("scale", {{"n", 1024}, {"alpha", 2.0}});
}

BenchCase bench_case(BenchSetup (*make)(DType)) {
  return {"testing_scale", "testing_scale.case", {DType::F32}, make, {}};
}

TEST(BenchSetup, RecordsWhatTheBenchGives) {
  const BenchSetup s = valid(DType::BF16);
  EXPECT_EQ(s.kernel().name, "testing_scale");
  EXPECT_EQ(s.dtype(), DType::BF16);
  EXPECT_EQ(s.inputs().at("inp").count, 1024u);
  EXPECT_EQ(s.outputs().at("out"), 1024u);
  EXPECT_EQ(s.bytes(), 8192u);
  EXPECT_EQ(s.peer_op(), "scale");
  EXPECT_TRUE(s.checks_every_output());
  EXPECT_FALSE(s.cuda_reference().has_value());
}

TEST(BenchSetup, RejectsUnknownNamesEmptyBuffersAndBadRanges) {
  BenchSetup s("testing_scale", DType::F32);
  EXPECT_TRUE(contains(error_of([&] { s.random("x", 4); }), "has no input tensor 'x'"));
  EXPECT_TRUE(contains(error_of([&] { s.random("out", 4); }), "('out' is its output tensor)"));
  EXPECT_TRUE(contains(error_of([&] { s.random("inp", 0); }), "input 'inp' is empty"));
  EXPECT_TRUE(contains(error_of([&] { s.random("inp", 4, 1.0f, 1.0f); }), "needs lo < hi"));
  EXPECT_TRUE(contains(error_of([&] { s.output("out", 0); }), "output 'out' is empty"));
  EXPECT_TRUE(contains(error_of([&] { s.constant("n", -1); }), "cannot hold -1"));
  s.random("inp", 4);
  EXPECT_TRUE(contains(error_of([&] { s.random("inp", 4); }), "input 'inp' is given twice"));
}

TEST(BenchSetup, AReferenceMayNameOnlyParameters) {
  CudaReference ref{"hand-written", "", "f", {"inp", "nope"}, {}, {}};
  EXPECT_TRUE(contains(error_of([&] { valid(DType::F32).reference(ref); }),
                       "names 'nope', which is not a parameter"));
  ref.args = {"inp", "out", u32_arg(7)};
  EXPECT_EQ(error_of([&] { valid(DType::F32).reference(ref); }), "");
}

TEST(BenchChecks, AValidSetupPasses) {
  EXPECT_EQ(check_bench_setup(bench_case([](DType dt) { return valid(dt); }), DType::F32), "");
}

TEST(BenchChecks, EachMissingPieceIsNamed) {
  EXPECT_EQ(check_bench_setup(bench_case([](DType dt) {
                                return BenchSetup("testing_scale", dt).random("inp", 4);
                              }),
                              DType::F32),
            "the bench sets no grid");
  EXPECT_EQ(
      check_bench_setup(bench_case([](DType dt) { return valid(dt).bytes_moved(0); }), DType::F32),
      "the bench gives neither bytes_moved nor flops");
  EXPECT_TRUE(contains(check_bench_setup(bench_case([](DType dt) {
                                           return BenchSetup("testing_scale", dt)
                                               .random("inp", 4)
                                               .output("out", 4)
                                               .constant("alpha", 1.0)
                                               .grid_1d(4, 32)
                                               .bytes_moved(32)
                                               .peer("scale", {});
                                         }),
                                         DType::F32),
                       "constexpr 'n' is not given"));
  EXPECT_TRUE(contains(
      check_bench_setup(bench_case([](DType dt) { return valid(dt).peer("", {}); }), DType::F32),
      "names no peer case"));
}

TEST(BenchChecks, TheDispatchGuardRunsOnTheSetup) {
  const std::string problem = check_bench_setup(
      bench_case([](DType dt) { return valid(dt).grid_1d(1024, 2048); }), DType::F32);
  EXPECT_TRUE(contains(problem, "dispatch refused")) << problem;
}

TEST(BenchChecks, ABenchThatThrowsIsReportedNotFatal) {
  EXPECT_TRUE(contains(check_bench_setup(bench_case([](DType dt) {
                                           return BenchSetup("testing_no_such_kernel", dt);
                                         }),
                                         DType::F32),
                       "no kernel named 'testing_no_such_kernel'"));
}

TEST(Spread, MedianMinAndMax) {
  const auto odd = spread_of({3.0, 1.0, 2.0});
  EXPECT_EQ(odd.median, 2.0);
  EXPECT_EQ(odd.min, 1.0);
  EXPECT_EQ(odd.max, 3.0);
  EXPECT_EQ(spread_of({4.0, 1.0, 2.0, 3.0}).median, 2.5);
  EXPECT_EQ(spread_of({5.0}).median, 5.0);
}

}  // namespace
}  // namespace iron::bench
