/// `iron tune KERNEL --dtype D --shape m=…,n=… [--shape …] [--bench CASE …] [--tuning FILE]`:
/// times every configuration of a kernel's tuning knobs on each shape (or on a bench case's shape
/// and inputs) on the CUDA device and keeps the fastest per shape bucket in a tuning file;
/// `--dry-run` traces, guards and compiles each one without a GPU; `--list` prints the knobs.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "iron/bench/registry.hpp"
#include "iron/bench/tuner.hpp"
#include "iron/dsl/tuning.hpp"
#include "iron/dsl/tuning_table.hpp"
#include "iron/runtime/device_info.hpp"
#include "kernel_selection.hpp"
#include "shape_option.hpp"

namespace iron::cli {
namespace {

struct TuneOptions {
  std::string kernel;
  std::string dtype;
  std::vector<std::string> shapes;
  std::vector<std::string> benches;
  std::vector<std::string> configs;
  std::string tuning;
  int repeat = 20;
  int sm = 90;
  bool dry_run = false;
  bool list = false;
};

/// One shape to tune: its text as shown and in the tuning file's entry, its constexprs, and the
/// inputs a bench case fills (none for a --shape).
struct Shape {
  std::string origin;  ///< the option that gave it, for errors: "--shape …", "--bench …"
  std::string text;
  std::map<std::string, double, std::less<>> constants;
  std::map<std::string, bench::BenchFill> inputs;
};

/// The shape of --shape `text`.
Shape shape_option(const std::string& text) {
  return {"--shape " + text, text, parse_shape(text), {}};
}

/// The shape and inputs of the kernel's bench case `name` (`iron bench --dry-run` lists them):
/// UsageError when the kernel has no such case or it is not benched in `dtype`.
Shape bench_shape(const std::string& kernel, const std::string& name, DType dtype) {
  const std::string full = kernel + "." + name;
  for (const bench::BenchCase& c : bench::registered_benches()) {
    if (c.name != full) continue;
    if (std::find(c.dtypes.begin(), c.dtypes.end(), dtype) == c.dtypes.end()) {
      throw UsageError(
          fmt::format("--bench {}: the case is not benched in {}", name, dtype_name(dtype)));
    }
    const bench::BenchSetup setup = c.make(dtype);
    Shape shape;
    shape.origin = "--bench " + name;
    for (const auto& [constant, value] : setup.constants()) {
      shape.constants[constant] = value.as_double();
      shape.text +=
          fmt::format("{}{}={}", shape.text.empty() ? "" : ",", constant, value.as_double());
    }
    shape.inputs = setup.inputs();
    return shape;
  }
  throw UsageError(
      fmt::format("--bench {}: {} has no bench case of that name (`iron bench "
                  "--dry-run --filter {}` lists its cases)",
                  name, kernel, kernel));
}

std::string spread_text(const bench::TunedConfig& c) {
  return fmt::format("{:.1f} us ({:.1f}-{:.1f})", c.us->median, c.us->min, c.us->max);
}

int list_knobs(const TuneOptions& o) {
  const auto space = dsl::tuning_space(o.kernel);
  if (!space) throw UsageError(fmt::format("kernel {} declares no tuning knobs", o.kernel));
  fmt::print("{}: {} configurations\n", o.kernel, space->configs().size());
  for (const dsl::TuningKnob& k : space->knobs()) {
    std::string values;
    for (const std::uint32_t v : k.values)
      values += (values.empty() ? "" : ", ") + std::to_string(v);
    fmt::print("  {:<10} {} (default {})\n", k.name, values, k.values.front());
  }
  return kExitSuccess;
}

/// What one shape gave: the entry to keep (when timed), and whether any configuration ran or
/// compiled.
struct ShapeOutcome {
  std::optional<dsl::TuningEntry> entry;
  bool any = false;
};

/// Tunes or checks one shape; prints its table.
ShapeOutcome run_shape(const TuneOptions& o, const KernelForm& form, const Shape& shape,
                       bench::BenchDevice* device) {
  const std::string& shape_text = shape.text;
  bench::TuneRequest request;
  request.kernel = o.kernel;
  request.dtype = form.dtype;
  request.constants = shape.constants;
  request.inputs = shape.inputs;
  request.repeat = o.repeat;
  for (const std::string& c : o.configs) {
    request.configs.push_back(tuning_config_option(o.kernel, c, "--config"));
  }
  try {
    bench::check_shape(dsl::kernel_ir_for(o.kernel, form.dtype), request);
    bench::requested_configs(request);
  } catch (const Error& e) {
    throw UsageError(fmt::format("{}: {}", shape.origin, e.what()));
  }
  fmt::print(stderr, "{} {} at {}: {}\n", o.kernel, dtype_name(form.dtype), shape_text,
             device != nullptr ? "timing on " + device->name()
                               : "compiling for sm_" + std::to_string(o.sm));
  std::size_t step = 0;
  const auto progress = [&](const std::string& line) {
    fmt::print(stderr, "  [{}] {}\n", ++step, line);
  };
  const bench::TuneResult result = device != nullptr
                                       ? bench::tune(*device, request, progress)
                                       : bench::check_configs(request, o.sm, progress);
  const bench::TunedConfig& defaults = result.configs.front();
  fmt::print("\n{} {} at {}\n", o.kernel, dtype_name(form.dtype), shape_text);
  for (const bench::TunedConfig& c : result.configs) {
    const std::string config = dsl::format_config(c.config);
    if (!c.refused.empty()) {
      fmt::print("  {:<36} refused: {}\n", config, c.refused);
    } else if (c.same_as) {
      fmt::print("  {:<36} same code and grid as {}\n", config,
                 dsl::format_config(result.configs[*c.same_as].config));
    } else if (c.us) {
      fmt::print("  {:<36} {:>26} {:>7}{}\n", config, spread_text(c),
                 defaults.us ? fmt::format("{:.3f}x", defaults.us->median / c.us->median) : "",
                 result.best && &result.configs[*result.best] == &c ? "  best" : "");
    } else {
      fmt::print("  {:<36} grid {}x{}x{}, {}\n", config, c.grid.groups.x, c.grid.groups.y,
                 c.grid.groups.z, c.resources);
    }
  }
  ShapeOutcome outcome;
  outcome.any =
      std::any_of(result.configs.begin(), result.configs.end(),
                  [](const bench::TunedConfig& c) { return c.refused.empty() && !c.same_as; });
  if (!result.best) return outcome;
  const bench::TunedConfig& best = result.configs[*result.best];
  const runtime::CudaReport& cuda = runtime::cuda_report();
  dsl::TuningEntry entry;
  entry.kernel = o.kernel;
  entry.dtype = form.dtype;
  entry.bucket = dsl::shape_bucket(dsl::kernel_ir_for(o.kernel, form.dtype), request.constants);
  entry.device = device->name();
  entry.driver = runtime::cuda_version_text(cuda.driver_version);
  entry.config = best.config;
  entry.measured = fmt::format(
      "{:.1f} us{} at {}", best.us->median,
      defaults.us ? fmt::format(", defaults {:.1f} us", defaults.us->median) : ", defaults refused",
      shape_text);
  fmt::print("  best: {} ({}) for {}\n", dsl::format_config(best.config), spread_text(best),
             dsl::format_bucket(entry.bucket));
  outcome.entry = std::move(entry);
  return outcome;
}

int tune(const TuneOptions& o) {
  if (o.list) return list_knobs(o);
  if (o.dtype.empty()) throw UsageError("--dtype is required");
  // The kernel first: a misspelt name is the error to hear about, not a missing --shape.
  const KernelForm form = resolve_kernel(o.kernel, o.dtype);
  if (o.shapes.empty() && o.benches.empty())
    throw UsageError("give at least one --shape or --bench");
  if (o.dry_run && !o.tuning.empty()) {
    throw UsageError("--dry-run times nothing, so it writes no --tuning file");
  }
  dsl::TuningTable table;
  if (!o.tuning.empty() && std::filesystem::exists(o.tuning)) {
    try {
      table = dsl::TuningTable::read(o.tuning);
    } catch (const Error& e) {
      throw UsageError(fmt::format("--tuning: {}", e.what()));
    }
  }
  std::unique_ptr<bench::BenchDevice> device;
  if (!o.dry_run) device = std::make_unique<bench::BenchDevice>();
  std::vector<Shape> shapes;
  for (const std::string& text : o.shapes) shapes.push_back(shape_option(text));
  for (const std::string& name : o.benches)
    shapes.push_back(bench_shape(o.kernel, name, form.dtype));
  int refused_shapes = 0;
  for (const Shape& shape : shapes) {
    ShapeOutcome outcome = run_shape(o, form, shape, device.get());
    if (!outcome.any) ++refused_shapes;
    if (!outcome.entry || o.tuning.empty()) continue;
    table.put(std::move(*outcome.entry));
    table.write(o.tuning);  // after each shape: a later failure loses nothing measured
    fmt::print("  kept in {}\n", o.tuning);
  }
  return refused_shapes == 0 ? kExitSuccess : kExitRefused;
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Time every configuration of a kernel's tuning knobs (tile shape, stages, launch order, …) "
      "on the CUDA device for each --shape, check each one's outputs against the defaults', and "
      "keep the fastest per shape bucket, device and driver in a tuning file that `iron bench "
      "--tuning` and the host entry points (IRON_TUNING_FILE) use (docs/tuning.md)");
  cmd->add_option("kernel", o->kernel, "The kernel (`iron list kernels`)")->required();
  cmd->add_option("--dtype", o->dtype, "The dtype T is bound to (required unless --list)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  cmd->add_option("--shape", o->shapes,
                  "Every constexpr of the kernel, NAME=VALUE separated by commas "
                  "(m=4096,n=4096,k=4096,alpha=1); repeat the option for more shapes")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--bench", o->benches,
                  "A bench case of the kernel (CASE of KERNEL.CASE, as `iron bench --dry-run` "
                  "lists them): its constexprs are the shape and its inputs fill the buffers as "
                  "the bench fills them, for kernels whose integer inputs steer their work "
                  "(expert offsets); repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--config", o->configs,
                  "Only this configuration (NAME=VALUE of some knobs, the rest at their defaults) "
                  "besides the defaults; repeatable (default: every configuration)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--tuning", o->tuning,
                  "Keep each shape's fastest configuration in this tuning file (created, or "
                  "updated in place: an entry of the same kernel, dtype, bucket, device and driver "
                  "is replaced)");
  cmd->add_option("--repeat", o->repeat, "Timed runs per configuration, taken in turn")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--dry-run", o->dry_run,
                "No GPU: trace each configuration, plan its grid, run the dispatch guard and "
                "compile it with NVRTC, printing its registers and spills");
  cmd->add_option("--sm", o->sm, "With --dry-run: the compute capability × 10 to compile for")
      ->check(CLI::Range(80, 200));
  cmd->add_flag("--list", o->list, "Print the kernel's knobs and their values, and stop");
  return {cmd, [o] { return tune(*o); }};
}

}  // namespace iron::cli
