/// The bench registry, filled by IRON_BENCH's static initialisers and read-only afterwards.
#include "iron/bench/registry.hpp"

#include <fmt/format.h>

#include "iron/core/error.hpp"
#include "iron/dsl/registration.hpp"
#include "iron/dsl/tracer.hpp"

namespace iron::bench {
namespace {

std::vector<BenchCase>& registry() {
  static std::vector<BenchCase> benches;
  return benches;
}

}  // namespace

const std::vector<BenchCase>& registered_benches() {
  dsl::check_registrations();
  return registry();
}

BenchRegistrar::BenchRegistrar(const char* kernel, const char* name, std::vector<DType> dtypes,
                               BenchSetup (*make)(DType), SourceLocation where) {
  BenchCase bench{kernel, fmt::format("{}.{}", kernel, name), std::move(dtypes), make,
                  dsl::detail::to_loc(where)};
  // A throw here would abort the program before main: record the problem instead.
  if (bench.dtypes.empty()) {
    dsl::detail::record_registration_problem(
        fmt::format("{}: bench {} lists no dtypes", format_loc(bench.loc), bench.name));
    return;
  }
  if (auto problem = dsl::detail::insert_unique(registry(), std::move(bench), "bench")) {
    dsl::detail::record_registration_problem(std::move(*problem));
  }
}

}  // namespace iron::bench
