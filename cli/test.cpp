/// `iron test`: runs the registered kernel tests on a backend, several cases at a time, under a
/// fixed base seed, or under N seeds with `--seeds N` (the soak).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/runtime/module_cache.hpp"
#include "iron/testing/backend_plan.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"
#include "iron/testing/soak.hpp"
#include "kernel_selection.hpp"
#include "target_options.hpp"
#include "test_report.hpp"

namespace iron::cli {
namespace {

/// The base seed of a run without --seed: fixed, so `iron test` and `make test` give the same
/// result every time; fresh seeds come from the soak (--seeds N).
constexpr std::uint64_t kDefaultSeed = 1;

/// How often a soak prints its progress line.
constexpr auto kSoakProgressEvery = std::chrono::seconds(10);

struct TestOptions {
  std::string backend = "auto";
  std::string filter;
  std::string dtype;
  std::uint64_t seed = kDefaultSeed;
  bool seed_given = false;
  std::size_t seeds = 0;  ///< 0: one run under `seed`; else a soak over this many seeds
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool verbose = false;
};

using Case = testing::CaseRef;

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
  std::size_t done = 0;
  testing::run_parallel(
      cases.size(), backends,
      [&](std::size_t i, runtime::Backend& backend) {
        return testing::run_test(*cases[i].test, cases[i].dtype, backend, seed, keep_outputs);
      },
      [&](std::size_t i, testing::TestResult r) {
        results[i] = std::move(r);
        print_progress(++done, cases.size(), results[i], verbose);
      });
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

/// A soak: every case under `o.seeds` base seeds from --seed (default: a fresh one) on each
/// backend of the plan, a progress line every few seconds and each failure as it happens.
int run_soak(const TestOptions& o, const std::vector<Case>& cases,
             const std::vector<std::string>& names) {
  const std::uint64_t first = o.seed_given ? o.seed : random_seed();
  const auto seeds = testing::soak_seeds(first, o.seeds);
  std::vector<testing::SoakBackendReport> reports;
  for (const auto& name : names) {
    auto backends = make_backends(name, std::min<std::size_t>(o.jobs, cases.size() * o.seeds));
    fmt::print("iron test: soak of {} cases x {} seeds on backend {}, {} threads\n", cases.size(),
               seeds.size(), backends.front()->name(), backends.size());
    fmt::print("--seed {} --seeds {} reproduces this soak\n\n", first, seeds.size());
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    auto last_print = start;
    std::size_t failed = 0;
    auto progress = [&](std::size_t done, std::size_t total, const testing::SoakFailure* failure) {
      if (failure != nullptr) {
        ++failed;
        print_soak_failure(*failure, o.verbose);
      }
      const auto now = std::chrono::steady_clock::now();
      if (done == total || now - last_print >= kSoakProgressEvery) {
        print_soak_progress(done, total, failed,
                            std::chrono::duration<double>(now - start).count());
        last_print = now;
      }
    };
    reports.push_back(
        {std::string(backends.front()->name()), testing::soak(cases, seeds, backends, progress)});
  }
  print_soak_report(reports, cases.size(), seeds.size(), testing::checks_label(names));
  print_cache_report(runtime::cache_events(), o.verbose);
  const bool all_passed = std::all_of(reports.begin(), reports.end(),
                                      [](const auto& r) { return r.report.failures.empty(); });
  return all_passed ? 0 : 1;
}

int run_tests(const TestOptions& o) {
  const std::vector<Case> cases = select_cases(o);
  const auto names = testing::test_backends(o.backend, runtime::backend_statuses());
  if (o.seeds > 0) return run_soak(o, cases, names);
  const std::uint64_t seed = o.seed;
  const bool compare = o.backend == "all" && names.size() > 1;
  std::vector<std::vector<testing::TestResult>> per_backend;
  for (const auto& name : names) {
    auto backends = make_backends(name, std::min<std::size_t>(o.jobs, cases.size()));
    fmt::print("iron test: {} cases on backend {}, {} threads, base seed {}{}\n", cases.size(),
               backends.front()->name(), backends.size(), seed,
               o.seed_given ? "" : " (the default)");
    fmt::print("--seed {} reproduces this run; --seeds N runs N fresh seeds\n\n", seed);
    per_backend.push_back(run_cases(cases, backends, seed, o.verbose, compare));
  }
  std::vector<testing::TestResult> results;
  for (auto& r : per_backend) results.insert(results.end(), r.begin(), r.end());
  if (compare) {
    const auto rows = cross_backend_rows(per_backend);
    results.insert(results.end(), rows.begin(), rows.end());
  }
  print_report(results, testing::checks_label(names));
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
  std::vector<std::string> backends = backend_names();
  std::vector<std::string> sanitizers;
  for (const runtime::BackendEntry& b : runtime::backends()) {
    if (b.sanitizer) sanitizers.emplace_back(b.name);
  }
  cmd->add_option("--backend", o->backend,
                  fmt::format("Where to run: auto ({}, whose sanitizer checks every access, then "
                              "the first GPU backend present), {}, or all (every backend "
                              "present, each case's outputs also compared across backends); see "
                              "`iron device`",
                              or_list(sanitizers), fmt::join(backends, ", ")))
      ->check(CLI::IsMember([&] {
        backends.insert(backends.begin(), "auto");
        backends.emplace_back("all");
        return backends;
      }()));
  cmd->add_option("--filter", o->filter,
                  "Run only tests whose name (kernel.case) or kernel name contains a match of "
                  "this ECMAScript regular expression");
  cmd->add_option("--dtype", o->dtype, "Run only the cases of this dtype")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  auto* seed = cmd->add_option("--seed", o->seed,
                               "Base seed of the random inputs (default: 1, so every run is the "
                               "same); with --seeds, the first seed of the soak (default: a new "
                               "one, printed so the soak can be repeated)");
  cmd->add_option("--seeds", o->seeds,
                  "Soak: run every selected case under N base seeds (--seed, --seed + 1, …), "
                  "print progress and each failure with the --seed that reproduces it; exits "
                  "with status 1 if any run fails")
      ->check(CLI::Range(std::size_t{1}, std::numeric_limits<std::size_t>::max()));
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
