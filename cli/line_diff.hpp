/// A unified line diff of two texts, for `iron diff`.
#pragma once

#include <string>

namespace iron::cli {

/// "" when equal; else unified-diff hunks (3 lines of context) labelled with the two names.
std::string unified_diff(const std::string& before, const std::string& after,
                         const std::string& before_name, const std::string& after_name);

}  // namespace iron::cli
