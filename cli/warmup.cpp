/// `iron warmup`: compiles the selected kernels into the disk cache ahead of their first launch,
/// several at a time, and prints what each cost.
#include "iron/runtime/warmup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "iron/bench/device.hpp"
#include "iron/core/error.hpp"
#include "iron/core/ir.hpp"
#include "iron/core/specialization.hpp"
#include "iron/dsl/tuning.hpp"
#include "iron/dsl/tuning_table.hpp"
#include "iron/runtime/device_info.hpp"
#include "kernel_selection.hpp"
#include "shape_option.hpp"

namespace iron::cli {
namespace {

struct WarmupOptions {
  std::string filter;
  std::string dtype;
  int sm = 0;
  unsigned jobs = 0;
  std::vector<std::string> shapes;
};

/// The architecture to compile for: --sm, else the first CUDA device's.
int target_sm(int asked) {
  if (asked != 0) return asked;
  const runtime::CudaReport& report = runtime::cuda_report();
  if (report.devices.empty()) {
    throw UsageError(fmt::format(
        "no CUDA device here to compile for ({}): give the architecture with --sm (90 for sm_90)",
        report.reason));
  }
  return report.devices.front().sm();
}

/// "N forms, median M ms" of `ms`, or "none".
std::string summary(const std::vector<double>& ms) {
  if (ms.empty()) return "none";
  const bench::Spread spread = bench::spread_of(ms);
  return fmt::format("{} forms, median {:.1f} ms, max {:.1f} ms", ms.size(), spread.median,
                     spread.max);
}

/// The forms to compile and, for each, the shape that chose its specialization ("" for the
/// usual one).
struct Forms {
  std::vector<runtime::WarmupForm> forms;
  std::vector<std::string> shapes;
};

/// The tuning configuration a launch of `k` with `constants` takes: its entry in the tuning files
/// (IRON_TUNING_FILE and the built-in ones) for the first CUDA device, else the kernel's rule.
dsl::TuningConfig launch_config(const ir::Kernel& k,
                                const std::map<std::string, double, std::less<>>& constants) {
  const runtime::CudaReport& cuda = runtime::cuda_report();
  const std::string device = cuda.devices.empty() ? "" : cuda.devices.front().name;
  return dsl::environment_tuning_for(k, constants, device,
                                     runtime::cuda_version_text(cuda.driver_version));
}

/// What to compile: each traced kernel with its usual specialization or, with shapes, traced
/// under the configuration each shape's launch takes (launch_config) with the specialization it
/// binds (once per distinct pair). UsageError for a shape that
/// lacks a constexpr of a selected kernel or names one that no selected kernel has.
Forms forms_to_warm(const std::vector<ir::Kernel>& kernels,
                    const std::vector<std::string>& shapes) {
  Forms out;
  if (shapes.empty()) {
    for (const ir::Kernel& k : kernels) {
      out.forms.push_back({k, ir::usual_specialization(k)});
      out.shapes.emplace_back();
    }
    return out;
  }
  std::vector<std::map<std::string, double, std::less<>>> parsed;
  for (const std::string& text : shapes) {
    parsed.push_back(parse_shape(text));
    for (const auto& entry : parsed.back()) {
      const std::string& name = entry.first;
      const bool known = std::any_of(kernels.begin(), kernels.end(), [&](const ir::Kernel& k) {
        return std::any_of(k.params.begin(), k.params.end(), [&](const ir::Param& p) {
          return p.kind == ir::ParamKind::Constexpr && p.name == name;
        });
      });
      if (!known) {
        throw UsageError(fmt::format(
            "--shape '{}' names '{}', a constexpr of none of the selected kernels", text, name));
      }
    }
  }
  for (const ir::Kernel& k : kernels) {
    std::vector<std::pair<std::string, std::vector<bool>>> seen;
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      std::vector<bool> values;
      dsl::TuningConfig config;
      try {
        config = launch_config(k, parsed[s]);
        const ir::Kernel traced = config.empty() ? k : dsl::kernel_ir_for(k.name, k.dtype, config);
        values = ir::specialization_for(traced, parsed[s]);
        const std::pair<std::string, std::vector<bool>> key{dsl::format_config(config), values};
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        out.forms.push_back({traced, std::move(values)});
      } catch (const Error& e) {
        throw UsageError(fmt::format("--shape '{}': {}", shapes[s], e.what()));
      }
      out.shapes.push_back(shapes[s]);
    }
  }
  return out;
}

int warmup(const WarmupOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const int sm = target_sm(o.sm);
  const auto selected = select_kernels(o.filter, o.dtype);
  const unsigned jobs = o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<ir::Kernel> traced;
  traced.reserve(selected.size());
  for (const auto& f : selected) traced.push_back(f.info->trace(f.dtype));
  const Forms chosen = forms_to_warm(traced, o.shapes);
  const std::vector<runtime::WarmupForm>& forms = chosen.forms;
  fmt::print("warming the kernel cache for sm_{}: {} kernel forms, {} at a time\n", sm,
             forms.size(), jobs);
  std::fflush(stdout);
  const auto results = runtime::warm_module_cache(forms, sm, jobs);
  std::vector<double> compiled;
  std::vector<double> by_class[3];  // by runtime::Products: none, CUDA cores, tensor cores
  std::size_t cached = 0;
  std::size_t failed = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const runtime::WarmupResult& r = results[i];
    const char* mark = r.products == runtime::Products::TensorCores ? "  tensor cores"
                       : r.products == runtime::Products::CudaCores ? "  f32 fragments"
                                                                    : "";
    const std::string shape = chosen.shapes[i].empty() ? "" : "  for " + chosen.shapes[i];
    if (!r.error.empty()) {
      ++failed;
      fmt::print("  {:<44} FAILED  {}{}\n", r.symbol, r.error, shape);
    } else if (r.compiled) {
      compiled.push_back(r.ms);
      by_class[static_cast<int>(r.products)].push_back(r.ms);
      fmt::print("  {:<44} compiled {:8.1f} ms{}{}\n", r.symbol, r.ms, mark, shape);
    } else {
      ++cached;
      fmt::print("  {:<44} cached   {:8.1f} ms{}\n", r.symbol, r.ms, shape);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bench::Spread spread = compiled.empty() ? bench::Spread{} : bench::spread_of(compiled);
  fmt::print(
      "{} compiled (median {:.1f} ms, max {:.1f} ms), {} already cached, {} failed, in {:.2f} s\n",
      compiled.size(), spread.median, spread.max, cached, failed, seconds);
  if (!compiled.empty()) {
    fmt::print(
        "compiled without products: {}; with f32 fragment products (CUDA cores): {}; with "
        "tensor cores: {}\n",
        summary(by_class[0]), summary(by_class[1]), summary(by_class[2]));
  }
  return failed == 0 ? kExitSuccess : kExitRefused;
}

}  // namespace

Command add_warmup_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "warmup",
      "Compile kernels for a CUDA architecture into the kernel cache ahead of their first launch, "
      "several at a time, so that a program's first call loads instead of compiling (needs NVRTC, "
      "not a GPU)");
  auto o = std::make_shared<WarmupOptions>();
  cmd->add_option("--filter", o->filter, "Only kernels whose name matches this regular expression");
  cmd->add_option("--dtype", o->dtype, "Only this dtype (default: every dtype of each kernel)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  cmd->add_option("--sm", o->sm,
                  "Compute capability × 10 to compile for (default: the first CUDA device's)")
      ->check(CLI::Range(80, 200));
  cmd->add_option("-j,--jobs", o->jobs, "Kernels compiled at once (default: the CPU count)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--shape", o->shapes,
                  "Compile the module a launch with these constexprs loads (NAME=VALUE separated "
                  "by commas, every constexpr of each selected kernel; repeatable: each distinct "
                  "specialization once); default: the usual one, every specialization true "
                  "(docs/compiler.md, \"Specializations\")");
  return {cmd, [o] { return warmup(*o); }};
}

}  // namespace iron::cli
