/// What `iron test` prints: a line per case as results arrive, then the table and failures; for
/// a soak, progress lines, each failure with its seed, then a summary per case.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "iron/testing/runner.hpp"
#include "iron/testing/soak.hpp"

namespace iron::cli {

/// "[ 3/40] PASS iron_scale.basic [f32] 0.42 ms"; with `verbose`, the case seed and any
/// failure's message too.
void print_progress(std::size_t done, std::size_t total, const testing::TestResult& r,
                    bool verbose);

/// The table in the order given, each failure's message below it, then "N passed, N failed
/// (CHECKS)", CHECKS naming what ran (testing::checks_label).
void print_report(const std::vector<testing::TestResult>& results, const std::string& checks);

/// A soak's progress: "soak: 1200/43500 runs (2%), 0 failed, 12 s, about 7 min left".
void print_soak_progress(std::size_t done, std::size_t total, std::size_t failed, double seconds);

/// A soak failure as it happens: "FAIL iron_x.case [f32] on sim with --seed 17"; with `verbose`,
/// its message too.
void print_soak_failure(const testing::SoakFailure& failure, bool verbose);

/// The soak's failures by case and its summary line (testing::soak_report_text).
void print_soak_report(const std::vector<testing::SoakBackendReport>& reports, std::size_t cases,
                       std::size_t seeds, const std::string& checks);

}  // namespace iron::cli
