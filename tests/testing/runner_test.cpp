/// Tests of run_test: poisoned outputs, arguments in parameter order, every way a setup can be
/// incomplete, and real runs on the simulator (one of them with an output left unwritten).
#include "iron/testing/runner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>

#include "iron/core/error.hpp"

namespace iron::testing {
namespace {

/// A backend that runs `fn` instead of a kernel.
class FakeBackend final : public runtime::Backend {
 public:
  explicit FakeBackend(std::function<void(const runtime::Launch&)> fn) : fn_(std::move(fn)) {}
  std::string_view name() const override { return "fake"; }
  void run(const runtime::Launch& launch) override { fn_(launch); }

 private:
  std::function<void(const runtime::Launch&)> fn_;
};

runtime::HostTensor& tensor_arg(const runtime::Launch& launch, std::size_t i) {
  return *std::get<runtime::HostTensor*>(launch.args.at(i));
}

/// What testing_scale computes, done on the host.
void scale_on_host(const runtime::Launch& launch) {
  const auto in = unpack(tensor_arg(launch, 0));
  const double alpha = std::get<runtime::Scalar>(launch.args.at(2)).as_double();
  std::vector<float> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = static_cast<float>(in[i] * alpha);
  tensor_arg(launch, 1) = pack(out, tensor_arg(launch, 1).dtype);
}

/// A complete setup of testing_scale over 4 elements; `change` edits it before it is returned.
TestCase scale_case(const std::function<void(TestSetup&)>& change = {}) {
  auto make = [change](DType dt, Rng&) {
    TestSetup s("testing_scale", dt);
    s.input("inp", {1.0f, 2.0f, 3.0f, 4.0f})
        .output("out", 4)
        .constant("alpha", 0.5)
        .constant("n", 4)
        .expect("out", {0.5f, 1.0f, 1.5f, 2.0f})
        .grid_1d(4, 32);
    if (change) change(s);
    return s;
  };
  return {"testing_scale",
          "testing_scale.custom",
          {{DType::F32, {1e-6}, true}, {DType::F16, {1e-3}, true}},
          make,
          {}};
}

/// A setup of testing_scale built from scratch by `build`.
TestCase bare_case(const std::function<void(TestSetup&)>& build) {
  auto make = [build](DType dt, Rng&) {
    TestSetup s("testing_scale", dt);
    build(s);
    return s;
  };
  return {"testing_scale", "testing_scale.custom", {{DType::F32, {0.0}, true}}, make, {}};
}

const TestCase& registered(const std::string& name) {
  for (const auto& t : registered_tests()) {
    if (t.name == name) return t;
  }
  throw std::logic_error("no registered test " + name);
}

TEST(RunTest, PassesWhenOutputsMatch) {
  FakeBackend backend(scale_on_host);
  const auto r = run_test(scale_case(), DType::F32, backend, 5);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_EQ(r.message, "");
  EXPECT_EQ(r.name, "testing_scale.custom");
  EXPECT_EQ(r.backend, "fake");
  EXPECT_EQ(r.seed, case_seed(5, "testing_scale.custom", DType::F32));
  EXPECT_GT(r.seconds, 0.0);
}

TEST(RunTest, PassesArgumentsInParameterOrder) {
  FakeBackend backend([](const runtime::Launch& launch) {
    ASSERT_EQ(launch.args.size(), 4u);
    EXPECT_EQ(tensor_arg(launch, 0).dtype, DType::F16);
    EXPECT_EQ(tensor_arg(launch, 1).count(), 4u);
    EXPECT_EQ(std::get<runtime::Scalar>(launch.args[2]).f, 0.5);
    EXPECT_EQ(std::get<runtime::Scalar>(launch.args[3]).i, 4);
    EXPECT_EQ(launch.kernel->name, "testing_scale");
    EXPECT_EQ(launch.grid.group_size.x, 32u);
    scale_on_host(launch);
  });
  const auto r = run_test(scale_case(), DType::F16, backend, 1);
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(RunTest, FloatOutputsArePoisonedWithNaN) {
  for (const DType dt : {DType::F32, DType::F16}) {
    bool ran = false;
    FakeBackend backend([&](const runtime::Launch& launch) {
      for (const float v : unpack(tensor_arg(launch, 1))) EXPECT_TRUE(std::isnan(v));
      ran = true;
    });
    const auto r = run_test(scale_case(), dt, backend, 1);
    EXPECT_TRUE(ran);
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.message.find("output 'out': 4 of 4 values mismatch"), std::string::npos)
        << r.message;
    EXPECT_NE(r.message.find("out[0]: got nan, want 0.5"), std::string::npos) << r.message;
  }
}

TEST(RunTest, IntegerOutputsArePoisonedWithOnes) {
  auto make = [](DType dt, Rng&) {
    return TestSetup("testing_iota", dt)
        .output("idx", 2)
        .constant("n", 2)
        .expect("idx", {0.0f, 1.0f})
        .grid_1d(2, 32);
  };
  const TestCase test{"testing_iota", "testing_iota.custom", {{DType::F32, {0.0}, true}}, make, {}};
  FakeBackend backend([](const runtime::Launch& launch) {
    const auto& idx = tensor_arg(launch, 0);
    EXPECT_EQ(idx.dtype, DType::U32);
    for (const std::byte b : idx.bytes) EXPECT_EQ(b, std::byte{0xFF});
  });
  EXPECT_FALSE(run_test(test, DType::F32, backend, 1).passed);
}

/// A setup of testing_scale_in_place over 4 elements; `change` gives (or not) its initial values.
TestCase in_place_case(const std::function<void(TestSetup&)>& change) {
  auto make = [change](DType dt, Rng&) {
    TestSetup s("testing_scale_in_place", dt);
    s.output("x", 4)
        .constant("alpha", 0.5)
        .constant("n", 4)
        .expect("x", {0.5f, 1.0f, 1.5f, 2.0f})
        .grid_1d(4, 32);
    change(s);
    return s;
  };
  return {"testing_scale_in_place",
          "testing_scale_in_place.custom",
          {{DType::F32, {1e-6}, true}},
          make,
          {}};
}

TEST(RunTest, AnInOutTensorStartsWithItsInitialValuesNotThePoison) {
  FakeBackend backend([](const runtime::Launch& launch) {
    EXPECT_EQ(unpack(tensor_arg(launch, 0)), (std::vector<float>{7.0f, 8.0f, 9.0f, 10.0f}));
  });
  const auto r = run_test(in_place_case([](TestSetup& s) {
                            s.initial("x", {7, 8, 9, 10});
                          }),
                          DType::F32, backend, 1);
  EXPECT_NE(r.message.find("x[0]: got 7, want 0.5"), std::string::npos) << r.message;
}

TEST(RunTest, InitialValuesMustMatchTheOutputSize) {
  FakeBackend backend([](const runtime::Launch&) {});
  const auto r =
      run_test(in_place_case([](TestSetup& s) { s.initial("x", {1.0f}); }), DType::F32, backend, 1);
  EXPECT_NE(r.message.find("output 'x' has 4 elements but 1 initial values"), std::string::npos)
      << r.message;
}

TEST(RunTest, AnInOutTensorNeedsInitialValues) {
  FakeBackend backend([](const runtime::Launch&) {});
  const auto r = run_test(in_place_case([](TestSetup&) {}), DType::F32, backend, 1);
  EXPECT_NE(r.message.find("in-out tensor 'x' has no initial values: call initial()"),
            std::string::npos)
      << r.message;
}

TEST(RunTest, UsesTheSetupsToleranceOverTheRegisteredOne) {
  FakeBackend backend([](const runtime::Launch& launch) {
    tensor_arg(launch, 1) = pack({0.75f, 1.25f, 1.75f, 2.25f}, DType::F32);
  });
  EXPECT_FALSE(run_test(scale_case(), DType::F32, backend, 1).passed);
  const auto r =
      run_test(scale_case([](TestSetup& s) { s.tolerance({0.25}); }), DType::F32, backend, 1);
  EXPECT_TRUE(r.passed) << r.message;
}

TEST(RunTest, EveryOutputNeedsExpectedValues) {
  FakeBackend backend(scale_on_host);
  const auto r = run_test(bare_case([](TestSetup& s) {
                            s.input("inp", {1.0f}).output("out", 1).constant("alpha", 1);
                            s.constant("n", 1).grid_1d(1, 32);
                          }),
                          DType::F32, backend, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.message,
            "test testing_scale.custom: output 'out' has no expected values: a test must check "
            "every output");
}

TEST(RunTest, NamesEverythingTheSetupLacks) {
  FakeBackend backend(scale_on_host);
  const auto r =
      run_test(bare_case([](TestSetup& s) { s.expect("out", {1.0f}); }), DType::F32, backend, 1);
  EXPECT_FALSE(r.passed);
  for (const char* part :
       {"input 'inp' has no values", "output 'out' has no size", "constexpr 'alpha' has no value",
        "constexpr 'n' has no value", "no grid"}) {
    EXPECT_NE(r.message.find(part), std::string::npos) << part << " in: " << r.message;
  }
}

TEST(RunTest, ExpectedValuesMustMatchTheOutputSize) {
  FakeBackend backend(scale_on_host);
  const auto r = run_test(bare_case([](TestSetup& s) {
                            s.input("inp", {1.0f}).output("out", 2).expect("out", {1.0f});
                            s.constant("alpha", 1).constant("n", 1).grid_1d(1, 32);
                          }),
                          DType::F32, backend, 1);
  EXPECT_NE(r.message.find("output 'out' has 2 elements but 1 expected values"), std::string::npos)
      << r.message;
}

TEST(RunTest, ASetupErrorIsAFailureNamingTheTest) {
  FakeBackend backend(scale_on_host);
  const auto r =
      run_test(bare_case([](TestSetup& s) { s.input("y", {1.0f}); }), DType::F32, backend, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.message.find("test testing_scale.custom: kernel testing_scale has no input tensor "
                           "'y'; its parameters are: "),
            0u)
      << r.message;
}

TEST(RunTest, ABackendErrorIsAFailure) {
  FakeBackend backend([](const runtime::Launch&) { throw DispatchError("refused: too big"); });
  const auto r = run_test(scale_case(), DType::F32, backend, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.message, "refused: too big");
}

TEST(RunTest, RefusesADTypeTheTestIsNotRegisteredFor) {
  FakeBackend backend(scale_on_host);
  const auto r = run_test(scale_case(), DType::BF16, backend, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.message, "test testing_scale.custom is not registered for bf16");
}

TEST(RunTest, RefusesASetupOfAnotherDType) {
  auto make = [](DType, Rng& rng) { return scale_case().make(DType::F32, rng); };
  const TestCase test{
      "testing_scale", "testing_scale.custom", {{DType::F16, {0.0}, true}}, make, {}};
  FakeBackend backend(scale_on_host);
  const auto r = run_test(test, DType::F16, backend, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.message.find("set up kernel testing_scale with f32"), std::string::npos) << r.message;
}

TEST(CaseSeed, StablePerNameAndDType) {
  EXPECT_EQ(case_seed(1, "a.b", DType::F32), case_seed(1, "a.b", DType::F32));
  EXPECT_NE(case_seed(1, "a.b", DType::F32), case_seed(1, "a.b", DType::F16));
  EXPECT_NE(case_seed(1, "a.b", DType::F32), case_seed(1, "a.c", DType::F32));
  EXPECT_NE(case_seed(1, "a.b", DType::F32), case_seed(2, "a.b", DType::F32));
}

TEST(RunTestOnSim, CorrectKernelPasses) {
  auto backend = runtime::make_backend("sim");
  const TestCase& test = registered("testing_scale.doubles");
  for (const auto& d : test.dtypes) {
    const auto r = run_test(test, d.dtype, *backend, 11);
    EXPECT_TRUE(r.passed) << dtype_name(d.dtype) << ": " << r.message;
    EXPECT_EQ(r.backend, "sim");
  }
}

TEST(RunTestOnSim, DetectsAnUnwrittenOutput) {
  auto backend = runtime::make_backend("sim");
  const TestCase& test = registered("testing_half_copy.poison");
  for (const auto& d : test.dtypes) {
    const auto r = run_test(test, d.dtype, *backend, 11);
    EXPECT_FALSE(r.passed) << dtype_name(d.dtype);
    EXPECT_NE(r.message.find("output 'out': 32 of 64 values mismatch"), std::string::npos)
        << r.message;
    EXPECT_NE(r.message.find("out[32]: got nan"), std::string::npos) << r.message;
  }
}

}  // namespace
}  // namespace iron::testing
