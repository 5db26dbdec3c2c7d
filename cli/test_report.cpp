/// The output of `iron test`: progress lines, the results table, failures and the summary.
#include "test_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace iron::cli {
namespace {

std::string_view status(const testing::TestResult& r) { return r.passed ? "PASS" : "FAIL"; }

double millis(const testing::TestResult& r) { return r.seconds * 1000.0; }

/// `text` with every line indented by two spaces.
std::string indented(const std::string& text) {
  std::string out = "  ";
  for (const char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

void print_progress(std::size_t done, std::size_t total, const testing::TestResult& r,
                    bool verbose) {
  const int width = static_cast<int>(std::to_string(total).size());
  fmt::print("[{:>{}}/{}] {} {} [{}] {:.2f} ms", done, width, total, status(r), r.name,
             dtype_name(r.dtype), millis(r));
  if (verbose) fmt::print(", case seed {}", r.seed);
  fmt::print("\n");
  if (verbose && !r.passed) fmt::print("{}\n", indented(r.message));
  std::fflush(stdout);
}

void print_report(const std::vector<testing::TestResult>& results) {
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
               indented(r.message));
  }
  fmt::print("\n{} passed, {} failed\n", results.size() - failed, failed);
}

}  // namespace iron::cli
