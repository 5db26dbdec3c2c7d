/// The seed soak of `iron test --seeds N`: every selected case run under N base seeds, each
/// failure kept with the seed that reproduces it (`iron test --seed S` runs it again).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "iron/runtime/backend.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"

namespace iron::testing {

/// One registered test in one of its dtypes.
struct CaseRef {
  const TestCase* test;
  DType dtype;
};

/// Runs jobs 0 … count − 1 on one worker thread per backend (no backend is shared between
/// threads): `run(i, backend)` makes job i's result, then `done(i, result)` is called under one
/// lock as each job finishes.
void run_parallel(std::size_t count, std::vector<std::unique_ptr<runtime::Backend>>& backends,
                  const std::function<TestResult(std::size_t, runtime::Backend&)>& run,
                  const std::function<void(std::size_t, TestResult)>& done);

/// The base seeds of a soak: first, first + 1, …, first + count − 1 (wrapping at 2^64), so
/// `--seed first --seeds count` repeats a whole soak.
std::vector<std::uint64_t> soak_seeds(std::uint64_t first, std::size_t count);

/// A case that failed under one base seed.
struct SoakFailure {
  std::uint64_t base_seed;  ///< the --seed that reproduces it
  TestResult result;
};

/// What a soak found: the runs it made (cases × seeds) and every failure, ordered by case
/// (name, dtype) and then by the seed's position in the soak.
struct SoakReport {
  std::size_t runs = 0;
  std::vector<SoakFailure> failures;
};

/// Called under one lock after each run: runs done, runs in all, and the failure when this run
/// failed (else null).
using SoakProgress =
    std::function<void(std::size_t done, std::size_t total, const SoakFailure* failure)>;

/// Runs every case under every seed, seed by seed, on one worker thread per backend.
SoakReport soak(const std::vector<CaseRef>& cases, const std::vector<std::uint64_t>& seeds,
                std::vector<std::unique_ptr<runtime::Backend>>& backends,
                const SoakProgress& progress = {});

/// One backend's soak.
struct SoakBackendReport {
  std::string backend;
  SoakReport report;
};

/// `text` with every line indented by two spaces (a failure's message under its case).
std::string indented(const std::string& text);

/// The end of a soak's output: each failing case with how many seeds failed, the seeds, the
/// command that reproduces the first and its message; then "N runs (C cases x S seeds): P
/// passed, F failed (CHECKS)", CHECKS naming what ran (checks_label).
std::string soak_report_text(const std::vector<SoakBackendReport>& reports, std::size_t cases,
                             std::size_t seeds, const std::string& checks);

}  // namespace iron::testing
