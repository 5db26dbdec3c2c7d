/// Runs registered kernel tests on a backend and compares outputs with the oracle's values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "iron/runtime/backend.hpp"
#include "iron/testing/registry.hpp"

namespace iron::testing {

struct TestResult {
  std::string name;  ///< "<kernel>.<case>"
  DType dtype = DType::F32;
  std::string backend;
  bool passed = false;
  std::uint64_t seed = 0;
  double seconds = 0.0;
  /// Empty when passed; else what went wrong (first mismatches, sanitizer report, trace error).
  std::string message;
  /// Each output's values after the run, in parameter order (only when asked for).
  std::vector<std::pair<std::string, std::vector<float>>> outputs;
  Tolerance tolerance;  ///< the largest tolerance an output was checked with
};

/// The seed a test case uses under a run's base seed (stable per name and dtype).
std::uint64_t case_seed(std::uint64_t base_seed, const std::string& name, DType dtype);

/// The tolerance output `output` of `test` in `dtype` is checked with: the setup's for that
/// output, else the setup's, else the one registered with the dtype; Error when none states one.
Tolerance output_tolerance(const TestCase& test, DType dtype, const TestSetup& setup,
                           const std::string& output);

/// Runs one case: builds the setup, poisons outputs, launches, compares. Never throws. With
/// `keep_outputs`, the result also carries every output's values.
TestResult run_test(const TestCase& test, DType dtype, runtime::Backend& backend,
                    std::uint64_t base_seed, bool keep_outputs = false);

/// The same case run on two backends: "" when every output agrees within twice the case's
/// tolerance (each backend is within one tolerance of the oracle), else the first mismatches.
std::string compare_backends(const TestResult& a, const TestResult& b);

/// Compares `got` with `want` element by element; returns "" or the first mismatches. `explain`,
/// when given, says more about the first wrong element by its index (e.g. which store wrote it);
/// its "" adds nothing.
std::string compare_outputs(const std::string& output, const std::vector<float>& got,
                            const std::vector<float>& want, Tolerance tol,
                            const std::function<std::string(std::size_t)>& explain = {});

}  // namespace iron::testing
