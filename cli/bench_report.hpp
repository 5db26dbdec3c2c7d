/// What one `iron bench` run found, as a table for people and JSON for the peers script.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "iron/bench/runner.hpp"

namespace iron::cli {

struct BenchRun {
  std::string device;
  std::string date;    ///< UTC, ISO 8601
  std::string commit;  ///< $IRON_COMMIT, set by the bench scripts; empty when unknown
  int repeat = 0;
  std::optional<bench::Ceilings> ceilings;
  std::vector<bench::BenchResult> results;
};

/// One row per bench: median µs (min–max), GB/s, TFLOP/s, % of the copy ceiling, and the times
/// of the CUDA reference and the library call with Iron's speed-up over each.
void print_bench_table(const BenchRun& run);

nlohmann::json bench_json(const BenchRun& run);

}  // namespace iron::cli
