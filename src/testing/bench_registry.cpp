/// The bench registry, filled by IRON_BENCH's static initialisers and read-only afterwards.
#include "iron/testing/bench_registry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "iron/core/error.hpp"
#include "iron/dsl/tracer.hpp"

namespace iron::testing {
namespace {

std::vector<BenchCase>& registry() {
  static std::vector<BenchCase> benches;
  return benches;
}

}  // namespace

const std::vector<BenchCase>& registered_benches() { return registry(); }

BenchRegistrar::BenchRegistrar(const char* kernel, const char* name, std::vector<DType> dtypes,
                               BenchSetup (*make)(DType), SourceLocation where) {
  BenchCase bench{kernel, fmt::format("{}.{}", kernel, name), std::move(dtypes), make,
                  dsl::detail::to_loc(where)};
  if (bench.dtypes.empty()) {
    throw Error(fmt::format("{}: bench {} lists no dtypes", format_loc(bench.loc), bench.name));
  }
  auto& benches = registry();
  const auto at = std::lower_bound(
      benches.begin(), benches.end(), bench.name,
      [](const BenchCase& b, const std::string& bench_name) { return b.name < bench_name; });
  if (at != benches.end() && at->name == bench.name) {
    throw Error(fmt::format("{}: bench {} is registered twice (first at {})", format_loc(bench.loc),
                            bench.name, format_loc(at->loc)));
  }
  benches.insert(at, std::move(bench));
}

}  // namespace iron::testing
