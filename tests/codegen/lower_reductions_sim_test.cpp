/// lower_reductions on the simulator: same results before and after lowering, and no races.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "iron/codegen/passes/lower_reductions.hpp"
#include "iron/runtime/sim.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"
#include "pass_test_harness.hpp"
#include "test_target_profiles.hpp"

namespace iron::pass_test {
namespace {

using codegen::lower_reductions;

/// Tensors and constexprs by parameter name, and the grid.
struct SimLaunch {
  std::map<std::string, runtime::HostTensor> tensors;
  std::map<std::string, runtime::Scalar> constants;
  runtime::Grid grid;
};

using Outputs = std::map<std::string, std::vector<float>>;

/// Runs `kernel` on copies of the launch's tensors; returns every output by name.
Outputs simulate(const ir::Kernel& kernel, SimLaunch launch) {
  std::vector<runtime::Arg> args;
  for (const ir::Param& p : kernel.params) {
    if (p.kind == ir::ParamKind::Constexpr) {
      args.emplace_back(launch.constants.at(p.name));
    } else {
      args.emplace_back(&launch.tensors.at(p.name));
    }
  }
  runtime::sim_run({&kernel, std::move(args), launch.grid});
  Outputs outputs;
  for (const ir::Param& p : kernel.params) {
    if (ir::is_output(p.kind)) outputs[p.name] = testing::unpack(launch.tensors[p.name]);
  }
  return outputs;
}

/// Float sums change order when lowered: a few ulp of difference.
constexpr testing::Tolerance kSumTolerance{1e-6, 1e-5};
constexpr testing::Tolerance kExact{0.0, 0.0};

/// Runs `kernel` as given and lowered; each output must agree within its tolerance (exact when
/// not listed).
void expect_same_after_lowering(const ir::Kernel& kernel, const SimLaunch& launch,
                                const std::map<std::string, testing::Tolerance>& tolerances) {
  ir::Kernel lowered = kernel;
  lower_reductions(lowered, native_target());
  ASSERT_TRUE(ir::verify(lowered).empty()) << ir::verify(lowered).front();
  const Outputs want = simulate(kernel, launch);
  const Outputs got = simulate(lowered, launch);
  for (const auto& [name, values] : want) {
    const auto tol = tolerances.find(name);
    EXPECT_EQ(testing::compare_outputs(name, got.at(name), values,
                                       tol == tolerances.end() ? kExact : tol->second),
              "")
        << kernel.name << " with " << launch.grid.group_size.x << " threads per group";
  }
}

runtime::HostTensor zeros(DType dtype, std::size_t count) {
  return testing::pack(std::vector<float>(count), dtype);
}

runtime::Scalar scalar(DType dtype, double value) {
  runtime::Scalar s{dtype};
  if (is_float(dtype)) {
    s.f = value;
  } else {
    s.i = static_cast<std::int64_t>(value);
  }
  return s;
}

/// Rows alternately all negative and all positive, so a wrong identity (0 instead of -inf for
/// max, or instead of +inf for min) changes the result.
std::vector<float> signed_rows(std::uint32_t rows, std::uint32_t n, bool integers,
                               testing::Rng& rng) {
  std::vector<float> values;
  for (std::uint32_t r = 0; r < rows; ++r) {
    for (float v : rng.uniform(n, 1.0f, 1000.0f)) {
      values.push_back((r % 2 == 0 ? -1.0f : 1.0f) * (integers ? std::floor(v) : v));
    }
  }
  return values;
}

constexpr std::string_view kRowStats = R"(kernel row_stats dtype=f32 mode=reduction
  param in inp: TYPE
  param out sums: TYPE
  param out maxes: TYPE
  param out mins: TYPE
  rule multiple_of 32
  values 9
{
  %0 = builtin global_id.x : u32
  %1 = load inp[%0] : TYPE
  %2 = reduce.sum %1 : TYPE
  %3 = reduce.max %1 : TYPE
  %4 = reduce.min %1 : TYPE
  %5 = builtin group_id.x : u32
  %6 = builtin thread_id.x : u32
  %7 = const 0 : u32
  %8 = eq %6, %7 : bool
  if %8 {
    store sums[%5], %2 : TYPE
    store maxes[%5], %3 : TYPE
    store mins[%5], %4 : TYPE
  }
}
)";

ir::Kernel row_stats(DType dtype) {
  std::string text(kRowStats);
  for (std::size_t at = text.find("TYPE"); at != std::string::npos; at = text.find("TYPE", at)) {
    text.replace(at, 4, dtype_name(dtype));
  }
  return ir::parse_kernel(text);
}

class PassLowerReductionsSim : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(PassLowerReductionsSim, SumMaxAndMinOfFloatsAndIntegers) {
  const std::uint32_t tpg = GetParam();
  const std::uint32_t rows = 4;
  for (DType dtype : {DType::F32, DType::I32}) {
    testing::Rng rng(tpg);
    SimLaunch launch;
    launch.tensors["inp"] = testing::pack(signed_rows(rows, tpg, dtype == DType::I32, rng), dtype);
    for (const char* out : {"sums", "maxes", "mins"}) launch.tensors[out] = zeros(dtype, rows);
    launch.grid = runtime::Grid::per_row(rows, tpg);
    expect_same_after_lowering(row_stats(dtype), launch, {{"sums", kSumTolerance}});
  }
}

constexpr std::string_view kSoftmaxLike = R"(kernel softmax_like dtype=f32 mode=reduction
  param in inp: f32
  param out out: f32
  param constexpr n: u32
  rule multiple_of 32
  rule at_least 32
  rule at_most 1024
  values 37
{
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = const -inf : f32
  %6 = var %5 : f32
  for %7 = %3 to %0 step %4 : u32 {
    %8 = add %2, %7 : u32
    %9 = load inp[%8] : f32
    %10 = cast %9 : f32
    %11 = var.load %6 : f32
    %12 = max %11, %10 : f32
    var.store %6, %12 : f32
  }
  %13 = var.load %6 : f32
  %14 = reduce.max %13 : f32
  %15 = const 0 : f32
  %16 = var %15 : f32
  for %17 = %3 to %0 step %4 : u32 {
    %18 = add %2, %17 : u32
    %19 = load inp[%18] : f32
    %20 = cast %19 : f32
    %21 = sub %20, %14 : f32
    %22 = exp %21 : f32
    %23 = var.load %16 : f32
    %24 = add %23, %22 : f32
    var.store %16, %24 : f32
  }
  %25 = var.load %16 : f32
  %26 = reduce.sum %25 : f32
  %27 = recip %26 : f32
  for %28 = %3 to %0 step %4 : u32 {
    %29 = add %2, %28 : u32
    %30 = load inp[%29] : f32
    %31 = cast %30 : f32
    %32 = sub %31, %14 : f32
    %33 = exp %32 : f32
    %34 = mul %33, %27 : f32
    %35 = cast %34 : f32
    %36 = add %2, %28 : u32
    store out[%36], %35 : f32
  }
}
)";

constexpr std::string_view kRmsNormLike = R"(kernel rms_norm_like dtype=f32 mode=reduction
  param in inp: f32
  param in weight: f32
  param out out: f32
  param constexpr n: u32
  param constexpr eps: f32
  rule multiple_of 32
  rule at_least 32
  rule at_most 1024
  values 31
{
  %0 = constexpr n : u32
  %1 = constexpr eps : f32
  %2 = builtin group_id.x : u32
  %3 = mul %2, %0 : u32
  %4 = builtin thread_id.x : u32
  %5 = builtin group_size.x : u32
  %6 = const 0 : f32
  %7 = var %6 : f32
  for %8 = %4 to %0 step %5 : u32 {
    %9 = add %3, %8 : u32
    %10 = load inp[%9] : f32
    %11 = cast %10 : f32
    %12 = mul %11, %11 : f32
    %13 = var.load %7 : f32
    %14 = add %13, %12 : f32
    var.store %7, %14 : f32
  }
  %15 = cast %0 : f32
  %16 = var.load %7 : f32
  %17 = reduce.sum %16 : f32
  %18 = div %17, %15 : f32
  %19 = add %18, %1 : f32
  %20 = rsqrt %19 : f32
  for %21 = %4 to %0 step %5 : u32 {
    %22 = load weight[%21] : f32
    %23 = cast %22 : f32
    %24 = add %3, %21 : u32
    %25 = load inp[%24] : f32
    %26 = cast %25 : f32
    %27 = mul %26, %20 : f32
    %28 = mul %27, %23 : f32
    %29 = cast %28 : f32
    %30 = add %3, %21 : u32
    store out[%30], %29 : f32
  }
}
)";

TEST_P(PassLowerReductionsSim, SoftmaxAndRmsNormLikeKernels) {
  const std::uint32_t tpg = GetParam();
  const std::uint32_t rows = 3;
  const std::uint32_t n = 1000;
  testing::Rng rng(tpg);
  SimLaunch launch;
  launch.tensors["inp"] = testing::pack(rng.uniform(rows * n, -4.0f, 4.0f), DType::F32);
  launch.tensors["weight"] = testing::pack(rng.uniform(n, 0.5f, 1.5f), DType::F32);
  launch.tensors["out"] = zeros(DType::F32, rows * n);
  launch.constants["n"] = scalar(DType::U32, n);
  launch.constants["eps"] = scalar(DType::F32, 1e-5);
  launch.grid = runtime::Grid::per_row(rows, tpg);
  expect_same_after_lowering(ir::parse_kernel(kSoftmaxLike), launch, {{"out", kSumTolerance}});
  expect_same_after_lowering(ir::parse_kernel(kRmsNormLike), launch, {{"out", kSumTolerance}});
}

// One simdgroup, three (lanes 3..31 read the identity), and the most a group can have.
INSTANTIATE_TEST_SUITE_P(PassLowerReductions, PassLowerReductionsSim,
                         ::testing::Values(32u, 96u, 1024u),
                         [](const auto& info) { return "threads" + std::to_string(info.param); });

/// The same reduction `reps` times per row: the partials are reused every iteration.
constexpr std::string_view kRepeatedSum = R"(kernel repeated_sum dtype=f32 mode=reduction
  param in inp: f32
  param out out: f32
  param constexpr reps: u32
  rule multiple_of 32
  values 14
{
  %0 = builtin group_id.x : u32
  %1 = builtin thread_id.x : u32
  %2 = builtin group_size.x : u32
  %3 = constexpr reps : u32
  %4 = const 0 : u32
  %5 = const 1 : u32
  %6 = eq %1, %4 : bool
  %7 = mul %0, %3 : u32
  for %8 = %4 to %3 step %5 : u32 {
    %9 = add %7, %8 : u32
    %10 = mul %9, %2 : u32
    %11 = add %10, %1 : u32
    %12 = load inp[%11] : f32
    %13 = reduce.sum %12 : f32
    if %6 {
      store out[%9], %13 : f32
    }
  }
}
)";

SimLaunch repeated_sum_launch() {
  const std::uint32_t rows = 2;
  const std::uint32_t reps = 5;
  const std::uint32_t tpg = 128;
  testing::Rng rng(3);
  SimLaunch launch;
  launch.tensors["inp"] = testing::pack(rng.uniform(rows * reps * tpg, -1.0f, 1.0f), DType::F32);
  launch.tensors["out"] = zeros(DType::F32, rows * reps);
  launch.constants["reps"] = scalar(DType::U32, reps);
  launch.grid = runtime::Grid::per_row(rows, tpg);
  return launch;
}

TEST(PassLowerReductions, ReductionRepeatedInALoopOnTheSimulator) {
  expect_same_after_lowering(ir::parse_kernel(kRepeatedSum), repeated_sum_launch(),
                             {{"out", kSumTolerance}});
}

TEST(PassLowerReductions, WithoutTheSecondBarrierTheSimulatorFindsTheRace) {
  ir::Kernel k = ir::parse_kernel(kRepeatedSum);
  lower_reductions(k, native_target());
  std::vector<ir::Op>& body = k.body.ops.back().blocks[0].ops;
  ASSERT_EQ(body[body.size() - 2].kind, ir::OpKind::Barrier);
  body.erase(body.end() - 2);
  try {
    simulate(k, repeated_sum_launch());
    FAIL() << "expected a shared-memory race";
  } catch (const runtime::SimError& e) {
    EXPECT_EQ(e.kind(), runtime::SimError::Kind::SharedRace) << e.what();
  }
}

/// The library's own test cases of `kernel`, each dtype: the lowered kernel agrees with the
/// traced one within twice the case's tolerance, and with the oracle within one.
void expect_library_cases_unchanged(std::string_view kernel) {
  int cases = 0;
  for (const testing::TestCase& test : testing::registered_tests()) {
    if (test.kernel != kernel) continue;
    for (const testing::DTypeTolerance& d : test.dtypes) {
      testing::Rng rng(testing::case_seed(1, test.name, d.dtype));
      const testing::TestSetup setup = test.make(d.dtype, rng);
      SimLaunch launch{setup.inputs(), setup.constants(), setup.launch_grid()};
      for (const auto& [name, count] : setup.outputs()) {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        launch.tensors[name] = testing::pack(std::vector<float>(count, nan), d.dtype);
      }
      ir::Kernel lowered = setup.kernel();
      lower_reductions(lowered, native_target());
      ASSERT_TRUE(ir::verify(lowered).empty()) << ir::verify(lowered).front();
      ir::walk(lowered.body, [&](const ir::Op& op) {
        ASSERT_NE(ir::op_class(op.kind), ir::OpClass::Group) << test.name;
      });
      const Outputs want = simulate(setup.kernel(), launch);
      const Outputs got = simulate(lowered, launch);
      for (const auto& [name, values] : want) {
        const std::string where = test.name + " " + std::string(dtype_name(d.dtype));
        const testing::Tolerance tol = testing::output_tolerance(test, d.dtype, setup, name);
        // Each kernel is within one tolerance of the oracle, so within two of the other.
        const testing::Tolerance twice{2 * tol.atol, 2 * tol.rtol};
        EXPECT_EQ(testing::compare_outputs(name, got.at(name), values, twice), "") << where;
        EXPECT_EQ(testing::compare_outputs(name, got.at(name), setup.expected().at(name), tol), "")
            << where;
      }
      ++cases;
    }
  }
  EXPECT_GT(cases, 0) << "no registered cases of " << kernel;
}

TEST(PassLowerReductions, LibrarySoftmaxCasesGiveTheSameResults) {
  expect_library_cases_unchanged("iron_softmax");
}

TEST(PassLowerReductions, LibraryRmsNormCasesGiveTheSameResults) {
  expect_library_cases_unchanged("iron_rms_norm");
}

}  // namespace
}  // namespace iron::pass_test
