/// `iron test`: runs the registered kernel tests on a backend, several cases at a time.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/runtime/module_cache.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"
#include "kernel_selection.hpp"
#include "test_report.hpp"

namespace iron::cli {
namespace {

struct TestOptions {
  std::string backend = "auto";
  std::string filter;
  std::string dtype;
  std::uint64_t seed = 0;
  bool seed_given = false;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool verbose = false;
};

struct Case {
  const testing::TestCase* test;
  DType dtype;
};

/// Every registered test × dtype that the filter and dtype select, in registry order.
std::vector<Case> select_cases(const TestOptions& o) {
  const std::regex filter = filter_regex(o.filter);
  std::vector<Case> cases;
  for (const auto& test : testing::registered_tests()) {
    if (!std::regex_search(test.name, filter) && !std::regex_search(test.kernel, filter)) continue;
    for (const auto& d : test.dtypes) {
      if (o.dtype.empty() || dtype_name(d.dtype) == o.dtype) cases.push_back({&test, d.dtype});
    }
  }
  if (cases.empty()) {
    const std::string which = fmt::format(
        "{}{}", o.filter.empty() ? "" : fmt::format(" matching --filter '{}'", o.filter),
        o.dtype.empty() ? "" : fmt::format(" with --dtype {}", o.dtype));
    throw UsageError(fmt::format("no kernel test{} is registered (see `iron list tests`)", which));
  }
  return cases;
}

std::uint64_t random_seed() {
  std::random_device device;
  return (std::uint64_t{device()} << 32) | device();
}

/// One backend per worker, so that no backend is shared between threads.
std::vector<std::unique_ptr<runtime::Backend>> make_backends(const std::string& name,
                                                             std::size_t count) {
  std::vector<std::unique_ptr<runtime::Backend>> backends;
  try {
    for (std::size_t i = 0; i < count; ++i) backends.push_back(runtime::make_backend(name));
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  return backends;
}

/// Runs the cases on one thread per backend; prints a progress line as each case finishes.
std::vector<testing::TestResult> run_cases(const std::vector<Case>& cases,
                                           std::vector<std::unique_ptr<runtime::Backend>>& backends,
                                           std::uint64_t seed, bool verbose, bool keep_outputs) {
  std::vector<testing::TestResult> results(cases.size());
  std::atomic<std::size_t> next{0};
  std::mutex print_mutex;
  std::size_t done = 0;
  auto work = [&](runtime::Backend& backend) {
    for (std::size_t i = next++; i < cases.size(); i = next++) {
      results[i] = testing::run_test(*cases[i].test, cases[i].dtype, backend, seed, keep_outputs);
      const std::lock_guard lock(print_mutex);
      print_progress(++done, cases.size(), results[i], verbose);
    }
  };
  {
    std::vector<std::jthread> workers;
    workers.reserve(backends.size());
    for (auto& backend : backends) workers.emplace_back(work, std::ref(*backend));
  }
  return results;
}

/// The module-cache summary line; with `verbose`, first each kernel's cold compile or warm load.
void print_cache_report(const std::vector<runtime::CacheEvent>& events, bool verbose) {
  if (events.empty()) return;
  if (verbose) {
    for (const auto& e : events) {
      if (e.kind == runtime::CacheEventKind::Compiled) {
        fmt::print("module {}: compiled by NVRTC in {:.1f} ms (cold)\n", e.symbol, e.ms);
      } else if (e.kind == runtime::CacheEventKind::DiskHit) {
        fmt::print("module {}: loaded from the disk cache in {:.2f} ms (warm)\n", e.symbol, e.ms);
      } else if (e.kind == runtime::CacheEventKind::Rejected) {
        fmt::print("module {}: damaged cache entry removed: {}\n", e.symbol, e.detail);
      }
    }
  }
  fmt::print("{}\n", runtime::cache_summary(events));
}

/// The backends a run uses: every available one for "all", else the one named.
std::vector<std::string> backend_names(const std::string& name) {
  if (name != "all") return {name};
  std::vector<std::string> names;
  for (const auto& s : runtime::backend_statuses()) {
    if (s.available) names.push_back(s.name);
  }
  return names;
}

/// For each case run on several backends, a row comparing each backend's outputs with the
/// first backend's.
std::vector<testing::TestResult> cross_backend_rows(
    const std::vector<std::vector<testing::TestResult>>& per_backend) {
  std::vector<testing::TestResult> rows;
  for (std::size_t b = 1; b < per_backend.size(); ++b) {
    for (std::size_t i = 0; i < per_backend[b].size(); ++i) {
      const auto& first = per_backend[0][i];
      testing::TestResult row = per_backend[b][i];
      row.backend = first.backend + "=" + row.backend;
      row.message = testing::compare_backends(first, row);
      row.passed = row.message.empty();
      row.outputs.clear();
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

int run_tests(const TestOptions& o) {
  const std::vector<Case> cases = select_cases(o);
  const std::uint64_t seed = o.seed_given ? o.seed : random_seed();
  const auto names = backend_names(o.backend);
  const bool compare = names.size() > 1;
  std::vector<std::vector<testing::TestResult>> per_backend;
  for (const auto& name : names) {
    auto backends = make_backends(name, std::min<std::size_t>(o.jobs, cases.size()));
    fmt::print("iron test: {} cases on backend {}, {} threads, base seed {}\n", cases.size(),
               backends.front()->name(), backends.size(), seed);
    fmt::print("--seed {} reproduces this run\n\n", seed);
    per_backend.push_back(run_cases(cases, backends, seed, o.verbose, compare));
  }
  std::vector<testing::TestResult> results;
  for (auto& r : per_backend) results.insert(results.end(), r.begin(), r.end());
  if (compare) {
    const auto rows = cross_backend_rows(per_backend);
    results.insert(results.end(), rows.begin(), rows.end());
  }
  print_report(results);
  print_cache_report(runtime::cache_events(), o.verbose);
  const bool all_passed =
      std::all_of(results.begin(), results.end(), [](const auto& r) { return r.passed; });
  return all_passed ? 0 : 1;
}

}  // namespace

Command add_test_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "test",
      "Run the registered kernel tests (each test once per dtype) and compare every "
      "output with its expected values; exits with status 1 if any case fails");
  auto o = std::make_shared<TestOptions>();
  cmd->add_option("--backend", o->backend,
                  "Where to run: auto (cuda when present, else sim), sim, cuda, metal, or all "
                  "(every backend present, each case's outputs also compared across backends); "
                  "see `iron device`")
      ->check(CLI::IsMember({"auto", "sim", "cuda", "metal", "all"}));
  cmd->add_option("--filter", o->filter,
                  "Run only tests whose name (kernel.case) or kernel name contains a match of "
                  "this ECMAScript regular expression");
  cmd->add_option("--dtype", o->dtype, "Run only the cases of this dtype")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  auto* seed = cmd->add_option("--seed", o->seed,
                               "Base seed of the random inputs (default: a new one each run, "
                               "printed so the run can be repeated)");
  cmd->add_option("--jobs,-j", o->jobs, "Cases run at once (default: one per hardware thread)")
      ->check(CLI::Range(1u, std::numeric_limits<unsigned>::max()));
  cmd->add_flag("--verbose,-v", o->verbose,
                "Also print each case's seed, and each failure's message as soon as it happens");
  return {cmd, [o, seed] {
            o->seed_given = seed->count() > 0;
            return run_tests(*o);
          }};
}

}  // namespace iron::cli
