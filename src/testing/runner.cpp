/// Runs one kernel test case on a backend: setup, poisoned (or initial) outputs, launch,
/// comparison.
#include "iron/testing/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "iron/core/error.hpp"
#include "iron/testing/data.hpp"

namespace iron::testing {
namespace {

constexpr std::size_t kMismatchesShown = 8;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

bool within(double got, double want, double allowed) {
  if (std::isnan(got) || std::isnan(want)) return false;
  if (std::isinf(got) || std::isinf(want)) return got == want;
  return std::fabs(got - want) <= allowed;
}

}  // namespace

Tolerance output_tolerance(const TestCase& test, DType dtype, const TestSetup& setup,
                           const std::string& output) {
  const auto own = setup.output_tolerances().find(output);
  if (own != setup.output_tolerances().end()) return own->second;
  if (setup.has_tolerance()) return setup.tolerance_override();
  const auto entry = std::find_if(test.dtypes.begin(), test.dtypes.end(),
                                  [&](const DTypeTolerance& d) { return d.dtype == dtype; });
  if (!entry->stated) {
    throw Error(fmt::format(
        "test {} ({}) states no tolerance: call .tolerance(...) with the kernel's error bound "
        "for this shape (iron/testing/tolerance.hpp; tolerance::exact() for exact kernels)",
        test.name, dtype_name(dtype)));
  }
  return entry->tolerance;
}

namespace {

template <class Map>
const typename Map::mapped_type* lookup(const Map& map, const std::string& name) {
  const auto it = map.find(name);
  return it == map.end() ? nullptr : &it->second;
}

/// Arguments in parameter order; `tensors` holds the buffers they point to (one per param).
/// Returns what the setup lacks, one item per problem.
std::vector<std::string> build_args(const TestSetup& setup,
                                    std::vector<runtime::HostTensor>& tensors,
                                    std::vector<runtime::Arg>& args) {
  std::vector<std::string> problems;
  const auto& params = setup.kernel().params;
  tensors.resize(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ir::Param& p = params[i];
    if (p.kind == ir::ParamKind::Input) {
      const auto* given = lookup(setup.inputs(), p.name);
      if (given != nullptr) {
        tensors[i] = *given;
      } else {
        problems.push_back(fmt::format("input '{}' has no values", p.name));
      }
      args.emplace_back(&tensors[i]);
    } else if (ir::is_output(p.kind)) {
      const auto* count = lookup(setup.outputs(), p.name);
      const auto* want = lookup(setup.expected(), p.name);
      if (count == nullptr) {
        problems.push_back(fmt::format("output '{}' has no size: call output()", p.name));
      }
      if (want == nullptr) {
        problems.push_back(fmt::format(
            "output '{}' has no expected values: a test must check every output", p.name));
      }
      if (count != nullptr && want != nullptr && want->size() != *count) {
        problems.push_back(fmt::format("output '{}' has {} elements but {} expected values", p.name,
                                       *count, want->size()));
      }
      const auto* initial = lookup(setup.initial_values(), p.name);
      if (p.kind == ir::ParamKind::InOut && initial == nullptr) {
        problems.push_back(fmt::format(
            "in-out tensor '{}' has no initial values: call initial() (its contents at entry are "
            "part of the test)",
            p.name));
      }
      if (count != nullptr && initial != nullptr && initial->count() != *count) {
        problems.push_back(fmt::format("output '{}' has {} elements but {} initial values", p.name,
                                       *count, initial->count()));
      }
      if (count != nullptr) tensors[i] = initial != nullptr ? *initial : poisoned(p.dtype, *count);
      args.emplace_back(&tensors[i]);
    } else {
      const auto* value = lookup(setup.constants(), p.name);
      if (value == nullptr) problems.push_back(fmt::format("constexpr '{}' has no value", p.name));
      args.emplace_back(value != nullptr ? *value : runtime::Scalar{p.dtype});
    }
  }
  if (!setup.has_grid()) problems.emplace_back("no grid: call grid(), grid_1d() or grid_rows()");
  return problems;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(sep)) + item;
  return out;
}

/// What the backend knows of the store that wrote element `index` of tensor `param`.
std::string writer_note(const runtime::Backend& backend, std::size_t param, const std::string& name,
                        std::size_t index) {
  const std::optional<std::string> where = backend.element_writer(param, index);
  if (!where) return "";
  if (where->empty()) return fmt::format("no thread wrote {}[{}]", name, index);
  return fmt::format("{}[{}] was last written by the store at {}", name, index, *where);
}

/// Runs the case into `result`: message "" when it passed, else what went wrong.
std::string run_case(const TestCase& test, DType dtype, runtime::Backend& backend,
                     bool keep_outputs, TestResult& result) {
  const auto registered = std::find_if(test.dtypes.begin(), test.dtypes.end(),
                                       [&](const DTypeTolerance& d) { return d.dtype == dtype; });
  if (registered == test.dtypes.end()) {
    return fmt::format("test {} is not registered for {}", test.name, dtype_name(dtype));
  }
  Rng rng(result.seed);
  TestSetup setup = [&] {
    try {
      return test.make(dtype, rng);
    } catch (const std::exception& e) {
      throw Error(fmt::format("test {}: {}", test.name, e.what()));
    }
  }();
  const ir::Kernel& kernel = setup.kernel();
  if (kernel.name != test.kernel || kernel.dtype != dtype) {
    return fmt::format("test {} ({}) set up kernel {} with {}: use TestSetup(\"{}\", dt)",
                       test.name, dtype_name(dtype), kernel.name, dtype_name(kernel.dtype),
                       test.kernel);
  }
  std::vector<runtime::HostTensor> tensors;
  runtime::Launch launch{&kernel, {}, setup.launch_grid()};
  const auto problems = build_args(setup, tensors, launch.args);
  if (!problems.empty()) return fmt::format("test {}: {}", test.name, join(problems, "; "));

  backend.run(launch);

  std::vector<std::string> mismatches;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (!ir::is_output(p.kind)) continue;
    std::vector<float> got = unpack(tensors[i]);
    const Tolerance tol = output_tolerance(test, dtype, setup, p.name);
    result.tolerance.atol = std::max(result.tolerance.atol, tol.atol);
    result.tolerance.rtol = std::max(result.tolerance.rtol, tol.rtol);
    auto m = compare_outputs(p.name, got, setup.expected().at(p.name), tol,
                             [&](std::size_t e) { return writer_note(backend, i, p.name, e); });
    if (keep_outputs) result.outputs.emplace_back(p.name, std::move(got));
    if (!m.empty()) mismatches.push_back(std::move(m));
  }
  return join(mismatches, "\n");
}

}  // namespace

std::uint64_t case_seed(std::uint64_t base_seed, const std::string& name, DType dtype) {
  return splitmix64(base_seed ^ fnv1a(fmt::format("{}/{}", name, dtype_name(dtype))));
}

TestResult run_test(const TestCase& test, DType dtype, runtime::Backend& backend,
                    std::uint64_t base_seed, bool keep_outputs) {
  TestResult result;
  result.name = test.name;
  result.dtype = dtype;
  result.backend = std::string(backend.name());
  result.seed = case_seed(base_seed, test.name, dtype);
  const auto start = std::chrono::steady_clock::now();
  try {
    result.message = run_case(test, dtype, backend, keep_outputs, result);
  } catch (const std::exception& e) {
    result.message = e.what();
  } catch (...) {
    result.message = "a non-standard exception was thrown";
  }
  result.passed = result.message.empty();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string compare_outputs(const std::string& output, const std::vector<float>& got,
                            const std::vector<float>& want, Tolerance tol,
                            const std::function<std::string(std::size_t)>& explain) {
  if (got.size() != want.size()) {
    return fmt::format("output '{}': sizes differ: got {}, want {}", output, got.size(),
                       want.size());
  }
  std::size_t mismatched = 0;
  std::size_t first = 0;
  bool got_nan = false;
  std::string shown;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double allowed = tol.atol + tol.rtol * std::fabs(static_cast<double>(want[i]));
    if (within(got[i], want[i], allowed)) continue;
    if (mismatched == 0) first = i;
    got_nan = got_nan || std::isnan(got[i]);
    if (++mismatched > kMismatchesShown) continue;
    const bool nan = std::isnan(got[i]) || std::isnan(want[i]);
    shown += fmt::format("\n  {}[{}]: got {}, want {}, tolerance {:.3g}{}", output, i, got[i],
                         want[i], allowed, nan ? " (NaN never passes)" : "");
  }
  if (mismatched == 0) return "";
  std::string more = mismatched > kMismatchesShown
                         ? fmt::format("\n  (and {} more)", mismatched - kMismatchesShown)
                         : "";
  if (const std::string why = explain ? explain(first) : ""; !why.empty()) more += "\n  " + why;
  const std::string note =
      got_nan ? "\n  outputs are filled with NaN before the run: a NaN may be an element the "
                "kernel never wrote"
              : "";
  return fmt::format("output '{}': {} of {} values mismatch{}{}{}", output, mismatched, got.size(),
                     shown, more, note);
}

}  // namespace iron::testing

namespace iron::testing {

std::string compare_backends(const TestResult& a, const TestResult& b) {
  if (!a.passed || !b.passed) return "";  // each failure is reported on its own row
  if (a.outputs.size() != b.outputs.size()) {
    return fmt::format("{} kept {} outputs but {} kept {}", a.backend, a.outputs.size(), b.backend,
                       b.outputs.size());
  }
  const Tolerance twice{2 * a.tolerance.atol, 2 * a.tolerance.rtol};
  std::vector<std::string> mismatches;
  for (std::size_t i = 0; i < a.outputs.size(); ++i) {
    auto m = compare_outputs(a.outputs[i].first, b.outputs[i].second, a.outputs[i].second, twice);
    if (!m.empty())
      mismatches.push_back(fmt::format("{} (got: {}, want: {})", m, b.backend, a.backend));
  }
  return join(mismatches, "\n");
}

}  // namespace iron::testing
