/// Parsing `--shape NAME=VALUE,…` (shape_option.hpp).
#include "shape_option.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "commands.hpp"

namespace iron::cli {

std::map<std::string, double, std::less<>> parse_shape(const std::string& text) {
  std::map<std::string, double, std::less<>> shape;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    double value = 0.0;
    const char* first = item.data() + (eq == std::string::npos ? item.size() : eq + 1);
    const auto [end, ec] = std::from_chars(first, item.data() + item.size(), value);
    if (eq == std::string::npos || eq == 0 || ec != std::errc() ||
        end != item.data() + item.size() || !std::isfinite(value)) {
      throw UsageError(
          fmt::format("--shape takes NAME=VALUE pairs separated by commas, not '{}'", text));
    }
    if (!shape.emplace(item.substr(0, eq), value).second) {
      throw UsageError(fmt::format("--shape '{}' names '{}' twice", text, item.substr(0, eq)));
    }
    start = comma + 1;
  }
  return shape;
}

}  // namespace iron::cli
