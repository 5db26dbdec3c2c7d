/// `iron bench`: measures the ceilings, then every selected bench, with progress; prints a table
/// and writes JSON. `--dry-run` checks every bench setup without a GPU.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "commands.hpp"
#include "iron/bench/runner.hpp"
#include "iron/core/error.hpp"
#include "iron/dsl/tuning_table.hpp"
#include "kernel_selection.hpp"

namespace iron::cli {
namespace {

struct BenchOptions {
  std::string filter;
  std::string dtype;
  std::string json;
  std::string tuning;
  int repeat = 50;
  bool dry_run = false;
  bool no_ceilings = false;
};

struct BenchSelection {
  const bench::BenchCase* bench;
  DType dtype;
};

std::vector<BenchSelection> select_benches(const BenchOptions& o) {
  const std::regex filter = filter_regex(o.filter);
  std::vector<BenchSelection> selected;
  for (const auto& bench : bench::registered_benches()) {
    if (!std::regex_search(bench.name, filter)) continue;
    for (DType d : bench.dtypes) {
      if (o.dtype.empty() || dtype_name(d) == o.dtype) selected.push_back({&bench, d});
    }
  }
  if (selected.empty()) {
    throw UsageError(fmt::format("no bench matches{}{}; `iron list benches` lists them",
                                 o.filter.empty() ? "" : " --filter '" + o.filter + "'",
                                 o.dtype.empty() ? "" : " --dtype " + o.dtype));
  }
  return selected;
}

int dry_run(const std::vector<BenchSelection>& selected) {
  int failed = 0;
  for (const auto& s : selected) {
    const std::string problem = bench::check_bench_setup(*s.bench, s.dtype);
    fmt::print("{:<44} {:<5} {}\n", s.bench->name, dtype_name(s.dtype),
               problem.empty() ? "ok" : "FAILED: " + problem);
    failed += problem.empty() ? 0 : 1;
  }
  fmt::print("\n{} benches checked, {} failed\n", selected.size(), failed);
  return failed == 0 ? 0 : 1;
}

/// The tuning file at `path`; a file that cannot be read or parsed is a usage mistake.
dsl::TuningTable read_tuning_file(const std::string& path) {
  try {
    return dsl::TuningTable::read(path);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--tuning: {}", e.what()));
  }
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

int measure(const BenchOptions& o, const std::vector<BenchSelection>& selected) {
  bench::BenchDevice device;
  BenchRun run;
  run.device = device.name();
  run.date = utc_now();
  if (const char* commit = std::getenv("IRON_COMMIT")) run.commit = commit;
  run.repeat = o.repeat;
  if (!o.no_ceilings) {
    fmt::print(stderr,
               "measuring the ceilings on {} (1 GiB copy, cuBLAS bf16 8192^3, mma.sync)...\n",
               run.device);
    run.ceilings = bench::measure_ceilings(device, o.repeat);
  }
  std::optional<dsl::TuningTable> tuning;
  if (!o.tuning.empty()) {
    tuning = read_tuning_file(o.tuning);
  } else if (const char* named = std::getenv("IRON_TUNING_FILE"); named != nullptr && *named) {
    tuning = dsl::environment_tuning_table();
  }
  int failed = 0;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const auto& s = selected[i];
    fmt::print(stderr, "[{}/{}] {} {} ", i + 1, selected.size(), s.bench->name,
               dtype_name(s.dtype));
    bench::BenchResult r =
        bench::run_bench(*s.bench, s.dtype, device, o.repeat, tuning ? &*tuning : nullptr);
    if (r.error.empty()) {
      fmt::print(stderr, "{:.1f} us, {:.0f} GB/s{}\n", r.iron.us.median, r.iron.gbps,
                 r.tuning.empty() ? "" : " (tuned: " + r.tuning + ")");
    } else {
      fmt::print(stderr, "FAILED: {}\n", r.error);
      ++failed;
    }
    if (r.reference && !r.reference->matches) ++failed;
    if (r.library && r.library->unavailable.empty() && !r.library->matches) ++failed;
    run.results.push_back(std::move(r));
  }
  print_bench_table(run);
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << bench_json(run).dump(2) << "\n";
    if (!out) throw Error("cannot write " + o.json);
    fmt::print(stderr, "wrote {}\n", o.json);
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time the registered benches on the CUDA device: each kernel against the copy and cuBLAS "
      "ceilings measured in the same run, and against its CUDA reference and its library call "
      "(cuBLAS) where it has them");
  cmd->add_option("--filter", o->filter,
                  "Only benches whose name (kernel.case) matches this regular expression");
  cmd->add_option("--dtype", o->dtype, "Only this dtype")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  cmd->add_option("--json", o->json, "Also write every figure to this JSON file");
  cmd->add_option("--repeat", o->repeat, "Timed runs per kernel (median, min, max reported)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option(
      "--tuning", o->tuning,
      "Run each kernel with tuning knobs under this tuning file's configuration for "
      "its shape on this device (written by `iron tune`; docs/tuning.md; default: the file "
      "IRON_TUNING_FILE names, if any)");
  cmd->add_flag("--no-ceilings", o->no_ceilings,
                "Skip measuring the copy, cuBLAS and mma.sync ceilings");
  cmd->add_flag("--dry-run", o->dry_run,
                "Check every selected bench setup (grid, bytes, peer case, dispatch guard, "
                "library call sizes) without a GPU");
  return {cmd, [o] {
            const auto selected = select_benches(*o);
            return o->dry_run ? dry_run(selected) : measure(*o, selected);
          }};
}

}  // namespace iron::cli
