/// The empty-body scan: `{ }` after a for, if, else or kernel signature in emitted source.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string_view>

#include "support/checks.hpp"

namespace iron::checks {
namespace {

/// The source with comments, string and character literals and preprocessor lines turned into
/// spaces; newlines stay, so offsets and line numbers are those of the original.
std::string blank_out_non_code(const std::string& source) {
  std::string code = source;
  std::size_t i = 0;
  bool line_start = true;
  const auto blank_until = [&](std::size_t end) {
    for (; i < end && i < code.size(); ++i) {
      if (code[i] != '\n') code[i] = ' ';
    }
  };
  while (i < code.size()) {
    const char c = code[i];
    const char next = i + 1 < code.size() ? code[i + 1] : '\0';
    if (line_start && c == '#') {
      // A directive runs to the end of the line, continued by a trailing backslash.
      std::size_t end = i;
      while (end < code.size() && (code[end] != '\n' || (end > 0 && code[end - 1] == '\\'))) ++end;
      blank_until(end);
    } else if (c == '/' && next == '/') {
      blank_until(code.find('\n', i));
    } else if (c == '/' && next == '*') {
      const std::size_t close = code.find("*/", i + 2);
      blank_until(close == std::string::npos ? code.size() : close + 2);
    } else if (c == '"' || c == '\'') {
      std::size_t end = i + 1;
      while (end < code.size() && code[end] != c && code[end] != '\n') {
        end += code[end] == '\\' ? 2 : 1;
      }
      blank_until(std::min(end + 1, code.size()));
    } else {
      line_start = c == '\n' || (line_start && std::isspace(static_cast<unsigned char>(c)));
      ++i;
      continue;
    }
    line_start = false;
  }
  return code;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// The identifier ending just before `end` (after skipping whitespace), or "".
std::string_view word_before(std::string_view code, std::size_t end) {
  while (end > 0 && std::isspace(static_cast<unsigned char>(code[end - 1]))) --end;
  std::size_t start = end;
  while (start > 0 && is_word_char(code[start - 1])) --start;
  return code.substr(start, end - start);
}

/// Whether `word` occurs as a whole identifier in `text`.
bool has_word(std::string_view text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_word_char(text[at - 1]);
    const std::size_t after = at + word.size();
    if (starts && (after == text.size() || !is_word_char(text[after]))) return true;
  }
  return false;
}

/// What the empty block at `open` belongs to: "for-loop", "if", "else", "kernel" or "".
std::string_view owner_of_block(std::string_view code, std::size_t open) {
  std::size_t end = open;
  while (end > 0 && std::isspace(static_cast<unsigned char>(code[end - 1]))) --end;
  if (end == 0) return "";
  if (code[end - 1] != ')') return word_before(code, end) == "else" ? "else" : "";
  // Walk back to the matching '(' and look at the word in front of it.
  int depth = 0;
  std::size_t at = end;
  while (at > 0) {
    --at;
    if (code[at] == ')') ++depth;
    if (code[at] == '(' && --depth == 0) break;
  }
  if (depth != 0) return "";
  const std::string_view word = word_before(code, at);
  if (word == "for") return "for-loop";
  if (word == "if") return "if";
  if (word.empty()) return "";
  // A function: a kernel when its declaration, back to the previous statement or block, says so.
  const std::size_t boundary = code.find_last_of(";{}", at);
  const std::size_t start = boundary == std::string_view::npos ? 0 : boundary + 1;
  const std::string_view declaration = code.substr(start, at - start);
  return has_word(declaration, "__global__") || has_word(declaration, "kernel") ? "kernel" : "";
}

}  // namespace

std::vector<std::string> find_empty_bodies(const std::string& source, const std::string& file) {
  const std::string code = blank_out_non_code(source);
  std::vector<std::string> findings;
  for (std::size_t open = code.find('{'); open != std::string::npos;
       open = code.find('{', open + 1)) {
    const std::size_t inside = code.find_first_not_of(" \t\r\n\f\v", open + 1);
    if (inside == std::string::npos || code[inside] != '}') continue;
    const std::string_view owner = owner_of_block(code, open);
    if (owner.empty()) continue;
    const auto line = 1 + std::count(code.begin(), code.begin() + static_cast<long>(open), '\n');
    findings.push_back(fmt::format("{}:{}: empty {} body", file, line, owner));
  }
  return findings;
}

}  // namespace iron::checks
