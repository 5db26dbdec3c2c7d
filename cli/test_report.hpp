/// What `iron test` prints: a line per case as results arrive, then the table and failures.
#pragma once

#include <cstddef>
#include <vector>

#include "iron/testing/runner.hpp"

namespace iron::cli {

/// "[ 3/40] PASS iron_scale.basic [f32] 0.42 ms"; with `verbose`, the case seed and any
/// failure's message too.
void print_progress(std::size_t done, std::size_t total, const testing::TestResult& r,
                    bool verbose);

/// The table in the order given, each failure's message below it, then "N passed, N failed".
void print_report(const std::vector<testing::TestResult>& results);

}  // namespace iron::cli
