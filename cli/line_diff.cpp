/// Unified line diff by longest common subsequence (snapshots are a few hundred lines).
#include "line_diff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <vector>

namespace iron::cli {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Edit {
  char mark;  // ' ', '-', '+'
  std::string line;
};

std::vector<Edit> edits(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::vector<std::uint32_t>> lcs(n + 1, std::vector<std::uint32_t>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::vector<Edit> out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out.push_back({' ', a[i++]});
      ++j;
    } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out.push_back({'+', b[j++]});
    } else {
      out.push_back({'-', a[i++]});
    }
  }
  return out;
}

}  // namespace

std::string unified_diff(const std::string& before, const std::string& after,
                         const std::string& before_name, const std::string& after_name) {
  if (before == after) return "";
  const auto all = edits(lines_of(before), lines_of(after));
  constexpr std::size_t kContext = 3;
  std::string out = fmt::format("--- {}\n+++ {}\n", before_name, after_name);
  std::size_t k = 0;
  while (k < all.size()) {
    if (all[k].mark == ' ') {
      ++k;
      continue;
    }
    // A hunk runs from kContext lines before this change to kContext lines after the last
    // change that follows the previous one within 2 * kContext lines.
    const std::size_t begin = k >= kContext ? k - kContext : 0;
    std::size_t last_change = k;
    for (std::size_t x = k; x < all.size() && x - last_change <= 2 * kContext; ++x) {
      if (all[x].mark != ' ') last_change = x;
    }
    const std::size_t end = std::min(all.size(), last_change + kContext + 1);
    std::size_t a_line = 1;
    std::size_t b_line = 1;
    for (std::size_t x = 0; x < begin; ++x) {
      a_line += all[x].mark != '+';
      b_line += all[x].mark != '-';
    }
    std::size_t a_count = 0;
    std::size_t b_count = 0;
    std::string body;
    for (std::size_t x = begin; x < end; ++x) {
      a_count += all[x].mark != '+';
      b_count += all[x].mark != '-';
      body += fmt::format("{}{}\n", all[x].mark, all[x].line);
    }
    out += fmt::format("@@ -{},{} +{},{} @@\n{}", a_line, a_count, b_line, b_count, body);
    k = end;
  }
  return out;
}

}  // namespace iron::cli
