/// The seed soak and the worker pool that runs test cases on several backends at once.
#include "iron/testing/soak.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace iron::testing {

std::string indented(const std::string& text) {
  std::string out = "  ";
  for (const char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

void run_parallel(std::size_t count, std::vector<std::unique_ptr<runtime::Backend>>& backends,
                  const std::function<TestResult(std::size_t, runtime::Backend&)>& run,
                  const std::function<void(std::size_t, TestResult)>& done) {
  std::atomic<std::size_t> next{0};
  std::mutex done_mutex;
  auto work = [&](runtime::Backend& backend) {
    for (std::size_t i = next++; i < count; i = next++) {
      TestResult r = run(i, backend);
      const std::lock_guard lock(done_mutex);
      done(i, std::move(r));
    }
  };
  std::vector<std::jthread> workers;
  workers.reserve(backends.size());
  for (auto& backend : backends) workers.emplace_back(work, std::ref(*backend));
}

std::vector<std::uint64_t> soak_seeds(std::uint64_t first, std::size_t count) {
  std::vector<std::uint64_t> seeds(count);
  for (std::size_t i = 0; i < count; ++i) seeds[i] = first + i;
  return seeds;
}

SoakReport soak(const std::vector<CaseRef>& cases, const std::vector<std::uint64_t>& seeds,
                std::vector<std::unique_ptr<runtime::Backend>>& backends,
                const SoakProgress& progress) {
  SoakReport report;
  const std::size_t total = cases.size() * seeds.size();
  std::vector<std::size_t> failed_at;  // each failure's run index, to order the report
  run_parallel(
      total, backends,
      [&](std::size_t i, runtime::Backend& backend) {
        const CaseRef& c = cases[i % cases.size()];
        return run_test(*c.test, c.dtype, backend, seeds[i / cases.size()]);
      },
      [&](std::size_t i, TestResult r) {
        ++report.runs;
        const SoakFailure* failure = nullptr;
        if (!r.passed) {
          report.failures.push_back({seeds[i / cases.size()], std::move(r)});
          failed_at.push_back(i);
          failure = &report.failures.back();
        }
        if (progress) progress(report.runs, total, failure);
      });
  // Case by case (registry order), each case's seeds in soak order.
  std::vector<std::size_t> order(report.failures.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const std::size_t ia = failed_at[a];
    const std::size_t ib = failed_at[b];
    const std::size_t ca = ia % cases.size();
    const std::size_t cb = ib % cases.size();
    return ca != cb ? ca < cb : ia < ib;
  });
  std::vector<SoakFailure> sorted;
  sorted.reserve(order.size());
  for (const std::size_t k : order) sorted.push_back(std::move(report.failures[k]));
  report.failures = std::move(sorted);
  return report;
}

std::string soak_report_text(const std::vector<SoakBackendReport>& reports, std::size_t cases,
                             std::size_t seeds, const std::string& checks) {
  std::string out;
  std::size_t runs = 0;
  std::size_t failed = 0;
  for (const auto& [backend, report] : reports) {
    runs += report.runs;
    failed += report.failures.size();
    const auto& f = report.failures;
    for (std::size_t first = 0, last = 0; first < f.size(); first = last) {
      const TestResult& r = f[first].result;
      std::string seed_list;
      for (last = first;
           last < f.size() && f[last].result.name == r.name && f[last].result.dtype == r.dtype;
           ++last) {
        seed_list += fmt::format("{}{}", seed_list.empty() ? "" : ", ", f[last].base_seed);
      }
      out += fmt::format("\nFAIL {} [{}] on {}: {} of {} seeds failed: {}\n", r.name,
                         dtype_name(r.dtype), backend, last - first, seeds, seed_list);
      out += fmt::format(
          "  iron test --backend {} --filter '{}' --dtype {} --seed {} reproduces "
          "it:\n{}\n",
          backend, r.name, dtype_name(r.dtype), f[first].base_seed, indented(r.message));
    }
  }
  out += fmt::format("\n{} runs ({} cases x {} seeds{}): {} passed, {} failed ({})\n", runs, cases,
                     seeds, reports.size() > 1 ? fmt::format(" x {} backends", reports.size()) : "",
                     runs - failed, failed, checks);
  return out;
}

}  // namespace iron::testing
