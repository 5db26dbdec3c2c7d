/// `iron inspect KERNEL`: the kernel as traced IR, as IR after one or every pass, with per-pass
/// statistics, as the source it compiles to for a target of the registry (CUDA, MSL), or as
/// ptxas's report on its CUDA source (registers, shared memory, stack, spills).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/specialization.hpp"
#include "iron/runtime/nvrtc.hpp"
#include "kernel_selection.hpp"
#include "target_options.hpp"

namespace iron::cli {
namespace {

/// What `--target` prints besides the targets' source: the IR.
constexpr const char* kIr = "ir";
/// The target whose source `--resources` compiles with NVRTC.
constexpr const char* kResourcesTarget = "cuda";

struct InspectOptions {
  std::string kernel;
  std::string target = kIr;
  std::string dtype = "f32";
  std::string pass;
  std::string profile;
  std::string mma;
  std::string config;
  bool stats = false;
  bool resources = false;
  bool usual = false;
};

void print_stats(const std::vector<codegen::PassStat>& stats) {
  fmt::print("{:<34} {:>6} {:>6} {:>7} {:>9}\n", "pass", "before", "after", "delta", "ms");
  for (const auto& s : stats) {
    const auto delta = static_cast<long long>(s.ops_after) - static_cast<long long>(s.ops_before);
    fmt::print("{:<34} {:>6} {:>6} {:>+7} {:>9.3f}\n", s.name, s.ops_before, s.ops_after, delta,
               s.milliseconds);
  }
}

/// The IR after the pass named `o.pass` (every occurrence), or after every pass for "all";
/// returns the run's per-pass statistics.
std::vector<codegen::PassStat> print_passes(const ir::Kernel& traced,
                                            const codegen::TargetProfile& profile,
                                            const InspectOptions& o) {
  const auto result =
      codegen::run_pipeline(traced, profile, {.verify_each = true, .keep_ir = true});
  const auto& passes = codegen::pipeline_passes();
  bool found = false;
  std::string previous = ir::print_kernel(traced);
  if (o.pass == "all") fmt::print("// traced\n{}\n", previous);
  for (std::size_t i = 0; i < passes.size(); ++i) {
    const std::string& now = result.ir_after[i];
    if (o.pass == "all" || passes[i].name == o.pass) {
      found = true;
      const auto& s = result.stats[i];
      fmt::print("// after pass {} ({}): {} -> {} ops\n", i + 1, s.name, s.ops_before, s.ops_after);
      fmt::print("{}\n", now == previous ? "(unchanged)\n" : now);
    }
    previous = now;
  }
  if (!found) {
    std::string names;
    for (const auto& p : passes) names += (names.empty() ? "" : ", ") + std::string(p.name);
    throw UsageError(fmt::format("no pass named '{}'; the passes are: {}", o.pass, names));
  }
  return result.stats;
}

/// ptxas's report on the kernel's CUDA source for `profile`: a row per function, then its use of
/// local memory (a compile with a warning throws, with the warning).
void print_resources(const ir::Kernel& traced, const codegen::TargetProfile& profile) {
  const auto compiled = codegen::compile_kernel(traced, profile);
  const runtime::CubinResult cubin = runtime::compile_cubin(
      compiled.source, compiled.symbol, profile.cuda_sm, profile.arch_specific());
  const runtime::NvrtcStatus& nvrtc = runtime::nvrtc_status();
  fmt::print("{} for {} (ptxas of NVRTC {}.{}; bytes per thread, shared bytes per group)\n",
             compiled.symbol, profile.name, nvrtc.major, nvrtc.minor);
  fmt::print("{:<32} {:>9} {:>8} {:>7} {:>6} {:>12} {:>11}\n", "function", "registers", "barriers",
             "shared", "stack", "spill stores", "spill loads");
  for (const runtime::FunctionResources& f : cubin.resources.functions) {
    fmt::print("{:<32} {:>9} {:>8} {:>7} {:>6} {:>12} {:>11}\n",
               f.entry ? f.function : f.function + " (called)", f.registers, f.barriers,
               f.shared_bytes, f.stack_frame_bytes, f.spill_store_bytes, f.spill_load_bytes);
  }
  const std::vector<std::string> problems = cubin.resources.problems();
  fmt::print("{}\n",
             problems.empty() ? "no local memory" : fmt::format("{}", fmt::join(problems, "\n")));
}

int inspect(const InspectOptions& o) {
  const KernelForm form = resolve_kernel(o.kernel, o.dtype);
  const ir::Kernel traced = dsl::kernel_ir_for(
      o.kernel, form.dtype, tuning_config_option(o.kernel, o.config, "--config"));
  if (o.resources && o.target != kIr && o.target != kResourcesTarget) {
    throw UsageError(
        fmt::format("--resources reports on the {} source, not on {}", kResourcesTarget, o.target));
  }
  // The IR is shown as the first target's default profile compiles it, unless told.
  const codegen::Target* target = o.resources       ? codegen::find_target(kResourcesTarget)
                                  : o.target == kIr ? &codegen::targets().front()
                                                    : codegen::find_target(o.target);
  const std::string profile_name =
      o.profile.empty() ? std::string(target->default_profile) : o.profile;
  codegen::TargetProfile profile = any_profile(profile_name);
  if ((o.target != kIr || o.resources) && &codegen::target_of(profile) != target) {
    throw UsageError(fmt::format("--profile {} is not a {} profile", profile_name, target->name));
  }
  if (!o.mma.empty()) {
    if (profile.kind != codegen::TargetKind::Cuda) {
      throw UsageError(
          fmt::format("--mma chooses a CUDA strategy; {} is not a CUDA profile", profile.name));
    }
    const codegen::MmaStrategy mma = *codegen::parse_mma_strategy(o.mma);
    if (mma == codegen::MmaStrategy::Wgmma && profile.cuda_sm != 90) {
      throw UsageError(
          fmt::format("--mma wgmma is sm_90a's; {} is not a compute capability 9.0 "
                      "profile",
                      profile.name));
    }
    profile = codegen::TargetProfile::cuda(profile.cuda_sm, mma);
  }
  if (o.usual && o.target == kIr && o.pass.empty() && !o.resources && !o.stats) {
    throw UsageError(
        "--usual binds specializations in compiled code: give it with --target, "
        "--pass or --resources (the traced IR has them unbound)");
  }
  if (o.usual) profile.specialization = ir::usual_specialization(traced);
  if (o.resources) {
    print_resources(traced, profile);
  } else if (!o.pass.empty()) {
    const auto stats = print_passes(traced, profile, o);
    if (o.stats) print_stats(stats);
  } else if (o.target != kIr) {
    // One pipeline run gives both the source and the statistics.
    const auto compiled = codegen::compile_kernel(traced, profile);
    fmt::print("{}", compiled.source);
    if (o.stats) print_stats(compiled.stats);
  } else if (o.stats) {
    print_stats(codegen::run_pipeline(traced, profile).stats);
  } else {
    fmt::print("{}", ir::print_kernel(traced));
  }
  return 0;
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "inspect",
      "Print a kernel as traced Iron IR, as IR after compiler passes (--pass), with per-pass "
      "statistics (--stats), as the source it compiles to for a target (--target), or as "
      "ptxas's registers, stack and spills for its CUDA source (--resources)");
  auto o = std::make_shared<InspectOptions>();
  cmd->add_option("kernel", o->kernel, "The kernel's name (see `iron list kernels`)")->required();
  auto* ir_flag = cmd->add_flag_callback(
      "--ir", [o] { o->target = kIr; }, "Print Iron IR, the default (the same as --target ir)");
  std::vector<std::string> targets = target_names();
  targets.insert(targets.begin(), kIr);
  std::vector<std::string> described = target_descriptions();
  described.insert(described.begin(), std::string(kIr) + " (Iron IR)");
  cmd->add_option("--target", o->target, "What to print: " + or_list(described))
      ->check(CLI::IsMember(targets))
      ->excludes(ir_flag);
  cmd->add_option("--dtype", o->dtype, "The float type T is bound to (default f32)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  cmd->add_option("--pass", o->pass,
                  "Print the IR after the pass NAME (each time it runs), or after every pass "
                  "with `all`; passes run for the target profile")
      ->excludes("--target");
  cmd->add_option("--profile", o->profile,
                  "Target profile the passes and emitters assume: " +
                      profiles_help([](const codegen::Target& t) {
                        const bool first = &t == &codegen::targets().front();
                        return first ? std::string(kIr) + " and " + std::string(t.name)
                                     : std::string(t.name);
                      }));
  cmd->add_option("--mma", o->mma,
                  "How CUDA lowers tensor-core fragments (docs/tensor-cores.md): mmasync "
                  "(mma.sync and ldmatrix, the default), software (warp shuffles and fma), wmma "
                  "(nvcuda::wmma tiles) or wgmma (mma.sync, and warpgroup products by Hopper's "
                  "wgmma: sm_90 only); the same as a profile ending in +mma=software or "
                  "+mma=wmma, or sm_90a")
      ->check(CLI::IsMember({"mmasync", "software", "wmma", "wgmma"}));
  auto* stats =
      cmd->add_flag("--stats", o->stats,
                    "Also print each pass's op count before and after, the delta and its time");
  cmd->add_option("--config", o->config,
                  "Trace the kernel under this configuration of its tuning knobs (NAME=VALUE "
                  "separated by commas; the rest at their defaults; docs/tuning.md)");
  cmd->add_flag("--resources", o->resources,
                "Compile the CUDA source with NVRTC for the profile and print, instead of the "
                "source, ptxas's registers, barriers, static shared memory, stack and spill bytes "
                "per function and any use of local memory")
      ->excludes("--pass")
      ->excludes(stats)
      ->excludes(ir_flag);
  cmd->add_flag("--usual", o->usual,
                "Compile with the kernel's specializations bound to their usual values (every one "
                "true), as `iron warmup` and launches with aligned shapes do; without it both "
                "sides of each are compiled (docs/compiler.md, \"Specializations\")")
      ->excludes(ir_flag);
  return {cmd, [o] { return inspect(*o); }};
}

}  // namespace iron::cli
