/// `iron warmup`: compiles the selected kernels into the disk cache ahead of their first launch,
/// several at a time, and prints what each cost.
#include "iron/runtime/warmup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "iron/bench/device.hpp"
#include "iron/core/ir.hpp"
#include "iron/runtime/device_info.hpp"
#include "kernel_selection.hpp"

namespace iron::cli {
namespace {

struct WarmupOptions {
  std::string filter;
  std::string dtype;
  int sm = 0;
  unsigned jobs = 0;
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

/// Whether `kernel` multiplies on tensor cores (fragment or warpgroup products): the forms the
/// JIT latency targets count apart from the memory-bound library (bench/NOTES.md §10).
bool uses_tensor_cores(const ir::Kernel& kernel) {
  bool any = false;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    any |= op.kind == ir::OpKind::FragMma || op.kind == ir::OpKind::WgMma;
  });
  return any;
}

/// "N forms, median M ms" of `ms`, or "none".
std::string summary(const std::vector<double>& ms) {
  if (ms.empty()) return "none";
  const bench::Spread spread = bench::spread_of(ms);
  return fmt::format("{} forms, median {:.1f} ms, max {:.1f} ms", ms.size(), spread.median,
                     spread.max);
}

int warmup(const WarmupOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const int sm = target_sm(o.sm);
  const auto forms = select_kernels(o.filter, o.dtype);
  const unsigned jobs = o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<ir::Kernel> kernels;
  kernels.reserve(forms.size());
  for (const auto& f : forms) kernels.push_back(f.info->trace(f.dtype));
  fmt::print("warming the kernel cache for sm_{}: {} kernel forms, {} at a time\n", sm,
             kernels.size(), jobs);
  std::fflush(stdout);
  const auto results = runtime::warm_module_cache(kernels, sm, jobs);
  std::vector<double> compiled;
  std::vector<double> by_class[2];  // memory-bound forms, tensor-core forms
  std::size_t cached = 0;
  std::size_t failed = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const runtime::WarmupResult& r = results[i];
    const bool tensor_cores = uses_tensor_cores(kernels[i]);
    if (!r.error.empty()) {
      ++failed;
      fmt::print("  {:<44} FAILED  {}\n", r.symbol, r.error);
    } else if (r.compiled) {
      compiled.push_back(r.ms);
      by_class[tensor_cores ? 1 : 0].push_back(r.ms);
      fmt::print("  {:<44} compiled {:8.1f} ms{}\n", r.symbol, r.ms,
                 tensor_cores ? "  tensor cores" : "");
    } else {
      ++cached;
      fmt::print("  {:<44} cached   {:8.1f} ms\n", r.symbol, r.ms);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bench::Spread spread = compiled.empty() ? bench::Spread{} : bench::spread_of(compiled);
  fmt::print(
      "{} compiled (median {:.1f} ms, max {:.1f} ms), {} already cached, {} failed, in {:.2f} s\n",
      compiled.size(), spread.median, spread.max, cached, failed, seconds);
  if (!compiled.empty()) {
    fmt::print("compiled without tensor cores: {}; with tensor cores: {}\n", summary(by_class[0]),
               summary(by_class[1]));
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
  return {cmd, [o] { return warmup(*o); }};
}

}  // namespace iron::cli
