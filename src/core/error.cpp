/// Formatting of source locations and the report of Iron's own bugs.
#include "iron/core/error.hpp"

#include <fmt/format.h>

namespace iron {

std::string format_loc(const ir::SourceLoc& loc) {
  if (!loc.known()) return "<unknown location>";
  return fmt::format("{}:{}", loc.file, loc.line);
}

void internal_error(const std::string& what, const char* file, int line) {
  throw InternalError(fmt::format("internal error: {} ({}:{})", what, file, line));
}

}  // namespace iron
