/// The output of `iron test`: progress lines, the results table, failures and the summary, and
/// the soak's progress and per-case failure summary.
#include "test_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace iron::cli {
namespace {

std::string_view status(const testing::TestResult& r) { return r.passed ? "PASS" : "FAIL"; }

double millis(const testing::TestResult& r) { return r.seconds * 1000.0; }

/// "45 s", "7 min", "2.5 h": a time left, rounded for reading.
std::string duration(double seconds) {
  if (seconds < 90) return fmt::format("{:.0f} s left", seconds);
  if (seconds < 5400) return fmt::format("{:.0f} min left", seconds / 60);
  return fmt::format("{:.1f} h left", seconds / 3600);
}

}  // namespace

void print_progress(std::size_t done, std::size_t total, const testing::TestResult& r,
                    bool verbose) {
  const int width = static_cast<int>(std::to_string(total).size());
  fmt::print("[{:>{}}/{}] {} {} [{}] {:.2f} ms", done, width, total, status(r), r.name,
             dtype_name(r.dtype), millis(r));
  if (verbose) fmt::print(", case seed {}", r.seed);
  fmt::print("\n");
  if (verbose && !r.passed) fmt::print("{}\n", testing::indented(r.message));
  std::fflush(stdout);
}

void print_report(const std::vector<testing::TestResult>& results, const std::string& checks) {
  std::size_t name_width = 4;  // the widths of the column titles
  std::size_t backend_width = 7;
  for (const auto& r : results) {
    name_width = std::max(name_width, r.name.size());
    backend_width = std::max(backend_width, r.backend.size());
  }
  fmt::print("\n{:<{}}  {:<5}  {:<{}}  {:<6}  {:>9}\n", "name", name_width, "dtype", "backend",
             backend_width, "status", "ms");
  std::size_t failed = 0;
  for (const auto& r : results) {
    fmt::print("{:<{}}  {:<5}  {:<{}}  {:<6}  {:>9.2f}\n", r.name, name_width, dtype_name(r.dtype),
               r.backend, backend_width, status(r), millis(r));
    failed += r.passed ? 0 : 1;
  }
  for (const auto& r : results) {
    if (r.passed) continue;
    fmt::print("\nFAIL {} [{}] on {}\n{}\n", r.name, dtype_name(r.dtype), r.backend,
               testing::indented(r.message));
  }
  fmt::print("\n{} passed, {} failed ({})\n", results.size() - failed, failed, checks);
}

void print_soak_progress(std::size_t done, std::size_t total, std::size_t failed, double seconds) {
  const double left =
      done == 0 ? 0.0 : seconds * static_cast<double>(total - done) / static_cast<double>(done);
  fmt::print("soak: {}/{} runs ({:.0f}%), {} failed, {:.0f} s{}\n", done, total,
             100.0 * static_cast<double>(done) / static_cast<double>(total), failed, seconds,
             done == total ? "" : fmt::format(", about {}", duration(left)));
  std::fflush(stdout);
}

void print_soak_failure(const testing::SoakFailure& failure, bool verbose) {
  const testing::TestResult& r = failure.result;
  fmt::print("FAIL {} [{}] on {} with --seed {}\n", r.name, dtype_name(r.dtype), r.backend,
             failure.base_seed);
  if (verbose) fmt::print("{}\n", testing::indented(r.message));
  std::fflush(stdout);
}

void print_soak_report(const std::vector<testing::SoakBackendReport>& reports, std::size_t cases,
                       std::size_t seeds, const std::string& checks) {
  fmt::print("{}", testing::soak_report_text(reports, cases, seeds, checks));
}

}  // namespace iron::cli
