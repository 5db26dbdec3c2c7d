/// Kernel-test registration: IRON_TEST(kernel, name, F32(atol[, rtol]), …) { return setup; }
/// The body sees `dt` (the dtype under test) and `rng` (seeded, printed by the runner).
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "iron/core/source_location.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/test_setup.hpp"

namespace iron::testing {

struct DTypeTolerance {
  DType dtype;
  Tolerance tolerance;
};

struct TestCase {
  std::string kernel;  ///< the kernel under test
  std::string name;    ///< "<kernel>.<case>"
  std::vector<DTypeTolerance> dtypes;
  std::function<TestSetup(DType, Rng&)> make;
  ir::SourceLoc loc;
};

/// All registered kernel tests, sorted by name.
const std::vector<TestCase>& registered_tests();

struct TestRegistrar {
  TestRegistrar(const char* kernel, const char* name, std::vector<DTypeTolerance> dtypes,
                TestSetup (*make)(DType, Rng&), SourceLocation where = SourceLocation::current());
};

/// The dtypes a test runs in, each with its tolerance: IRON_TEST(k, c, F32(1e-6), BF16(1e-2,
/// 1e-2)).
namespace tolerances {
constexpr DTypeTolerance F32(double atol, double rtol = 0.0) { return {DType::F32, {atol, rtol}}; }
constexpr DTypeTolerance F16(double atol, double rtol = 0.0) { return {DType::F16, {atol, rtol}}; }
constexpr DTypeTolerance BF16(double atol, double rtol = 0.0) {
  return {DType::BF16, {atol, rtol}};
}
}  // namespace tolerances

}  // namespace iron::testing

/// Registers test `NAME` of kernel `KERNEL` for each F32(…) / F16(…) / BF16(…) tolerance given.
#define IRON_TEST(KERNEL, NAME, ...)                                                        \
  static ::iron::testing::TestSetup KERNEL##_##NAME##_test(::iron::DType dt,                \
                                                           ::iron::testing::Rng& rng);      \
  [[maybe_unused]] static const ::iron::testing::TestRegistrar KERNEL##_##NAME##_registrar{ \
      #KERNEL, #NAME,                                                                       \
      [] {                                                                                  \
        using namespace ::iron::testing::tolerances;                                        \
        return ::std::vector<::iron::testing::DTypeTolerance>{__VA_ARGS__};                 \
      }(),                                                                                  \
      &KERNEL##_##NAME##_test};                                                             \
  static ::iron::testing::TestSetup KERNEL##_##NAME##_test(                                 \
      [[maybe_unused]] ::iron::DType dt, [[maybe_unused]] ::iron::testing::Rng& rng)
