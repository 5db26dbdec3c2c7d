/// The kernel-test registry, filled by IRON_TEST's static initialisers and read-only afterwards.
#include "iron/testing/registry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "iron/core/error.hpp"
#include "iron/dsl/tracer.hpp"

namespace iron::testing {
namespace {

std::vector<TestCase>& registry() {
  static std::vector<TestCase> tests;
  return tests;
}

}  // namespace

const std::vector<TestCase>& registered_tests() { return registry(); }

TestRegistrar::TestRegistrar(const char* kernel, const char* name,
                             std::vector<DTypeTolerance> dtypes, TestSetup (*make)(DType, Rng&),
                             SourceLocation where) {
  TestCase test{kernel, fmt::format("{}.{}", kernel, name), std::move(dtypes), make,
                dsl::detail::to_loc(where)};
  if (test.dtypes.empty()) {
    throw Error(
        fmt::format("{}: test {} lists no dtypes to run with", format_loc(test.loc), test.name));
  }
  for (auto d = test.dtypes.begin(); d != test.dtypes.end(); ++d) {
    if (std::any_of(test.dtypes.begin(), d,
                    [&](const DTypeTolerance& e) { return e.dtype == d->dtype; })) {
      throw Error(fmt::format("{}: test {} lists {} twice", format_loc(test.loc), test.name,
                              dtype_name(d->dtype)));
    }
  }
  auto& tests = registry();
  const auto at = std::lower_bound(
      tests.begin(), tests.end(), test.name,
      [](const TestCase& t, const std::string& test_name) { return t.name < test_name; });
  if (at != tests.end() && at->name == test.name) {
    throw Error(fmt::format("{}: test {} is registered twice (first at {})", format_loc(test.loc),
                            test.name, format_loc(at->loc)));
  }
  tests.insert(at, std::move(test));
}

}  // namespace iron::testing
