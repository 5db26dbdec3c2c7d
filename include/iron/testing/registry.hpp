/// Kernel-test registration: IRON_TEST(kernel, name, F32, F16, BF16) { return setup; }, the
/// setup stating its tolerance from the kernel's error bound (iron/testing/tolerance.hpp).
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
#include "iron/testing/tolerance.hpp"

namespace iron::testing {

/// A dtype a test runs in, with a fixed tolerance when `stated` (else the setup states it).
struct DTypeTolerance {
  DType dtype;
  Tolerance tolerance;
  bool stated = false;
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

/// A dtype in IRON_TEST's list: bare (`F32`), the setup states the tolerance from the kernel's
/// error bound (the library's form); called (`F32(atol, rtol)`), a fixed tolerance, for the
/// toolkit's own test fixtures.
struct DTypeTag {
  DType dtype;
  constexpr operator DTypeTolerance() const { return {dtype, {}, false}; }  // NOLINT: implicit
  constexpr DTypeTolerance operator()(double atol, double rtol = 0.0) const {
    return {dtype, {atol, rtol}, true};
  }
};

/// The dtypes a test runs in: IRON_TEST(k, c, F32, F16, BF16).
namespace tolerances {
inline constexpr DTypeTag F32{DType::F32};
inline constexpr DTypeTag F16{DType::F16};
inline constexpr DTypeTag BF16{DType::BF16};
}  // namespace tolerances

}  // namespace iron::testing

/// Registers test `NAME` of kernel `KERNEL` for each dtype listed (F32, F16, BF16).
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
