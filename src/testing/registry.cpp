/// The kernel-test registry, filled by IRON_TEST's static initialisers and read-only afterwards.
#include "iron/testing/registry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "iron/core/error.hpp"
#include "iron/dsl/registration.hpp"
#include "iron/dsl/tracer.hpp"

namespace iron::testing {
namespace {

std::vector<TestCase>& registry() {
  static std::vector<TestCase> tests;
  return tests;
}

}  // namespace

const std::vector<TestCase>& registered_tests() {
  dsl::check_registrations();
  return registry();
}

TestRegistrar::TestRegistrar(const char* kernel, const char* name,
                             std::vector<DTypeTolerance> dtypes, TestSetup (*make)(DType, Rng&),
                             SourceLocation where) {
  TestCase test{kernel, fmt::format("{}.{}", kernel, name), std::move(dtypes), make,
                dsl::detail::to_loc(where)};
  // A throw here would abort the program before main: record the problem instead.
  if (test.dtypes.empty()) {
    dsl::detail::record_registration_problem(
        fmt::format("{}: test {} lists no dtypes to run with", format_loc(test.loc), test.name));
    return;
  }
  for (auto d = test.dtypes.begin(); d != test.dtypes.end(); ++d) {
    if (std::any_of(test.dtypes.begin(), d,
                    [&](const DTypeTolerance& e) { return e.dtype == d->dtype; })) {
      dsl::detail::record_registration_problem(fmt::format(
          "{}: test {} lists {} twice", format_loc(test.loc), test.name, dtype_name(d->dtype)));
      return;
    }
  }
  if (auto problem = dsl::detail::insert_unique(registry(), std::move(test), "test")) {
    dsl::detail::record_registration_problem(std::move(*problem));
  }
}

}  // namespace iron::testing
