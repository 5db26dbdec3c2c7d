/// `iron build --emit all|TARGET|BINARY -o DIR`: compiles every selected kernel × dtype and
/// writes its source for every target (or one), or a backend's binaries (cubins), plus one
/// header of typed host launch wrappers. Targets and binaries come from the registries.
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "build_aot.hpp"
#include "commands.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/codegen/launch_wrappers.hpp"
#include "iron/runtime/backend.hpp"
#include "kernel_selection.hpp"
#include "output_files.hpp"
#include "target_options.hpp"

namespace iron::cli {
namespace {

namespace fs = std::filesystem;

/// `--emit` for every target's source.
constexpr const char* kAll = "all";

struct BuildOptions {
  std::string emit = kAll;
  std::string out;
  std::string aot;
  std::string filter;
  std::string dtype;
  std::map<std::string, std::string> profiles;  ///< target name -> its --NAME-profile value
  bool time_passes = false;
};

/// What one kernel form is compiled into: a target's source, or a backend's binary of it.
struct Output {
  const codegen::Target* target;
  codegen::TargetProfile profile;
  const runtime::BinaryFormat* binary;  ///< nullptr: the source itself
};

/// "--cuda-profile": the option that sets a target's profile.
std::string profile_option(const codegen::Target& target) {
  return fmt::format("--{}-profile", target.name);
}

/// The backend whose binary `--emit NAME` names; nullptr for none.
const runtime::BackendEntry* binary_backend(std::string_view name) {
  for (const runtime::BackendEntry& b : runtime::backends()) {
    if (b.binary && b.binary->name == name) return &b;
  }
  return nullptr;
}

/// Every `--emit` value: all, each target, each backend binary.
std::vector<std::string> emit_choices() {
  std::vector<std::string> choices = {kAll};
  for (const auto& name : target_names()) choices.push_back(name);
  for (const runtime::BackendEntry& b : runtime::backends()) {
    if (b.binary) choices.emplace_back(b.binary->name);
  }
  return choices;
}

/// What `--emit` asks for, each target with its profile (every profile option is checked).
std::vector<Output> outputs(const BuildOptions& o) {
  std::map<std::string_view, codegen::TargetProfile> profiles;
  for (const codegen::Target& t : codegen::targets()) {
    profiles.emplace(t.name,
                     target_profile(t, o.profiles.at(std::string(t.name)), profile_option(t)));
  }
  std::vector<Output> out;
  for (const codegen::Target& t : codegen::targets()) {
    if (o.emit == kAll || o.emit == t.name) out.push_back({&t, profiles.at(t.name), nullptr});
  }
  if (const runtime::BackendEntry* backend = binary_backend(o.emit)) {
    const runtime::BinaryFormat& binary = *backend->binary;
    const runtime::BackendStatus compiler = binary.status();
    if (!compiler.available) {
      throw Error(fmt::format("--emit {} needs {}, which was not found:\n{}", binary.name,
                              binary.compiler, compiler.reason));
    }
    const codegen::Target* target = codegen::find_target(backend->target);
    out.push_back({target, profiles.at(target->name), &binary});
  }
  return out;
}

int build(const BuildOptions& o) {
  if (!o.aot.empty()) return build_aot(o.aot, o.filter, o.dtype);
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  const std::vector<Output> wanted = outputs(o);
  const auto forms = select_kernels(o.filter, o.dtype);
  const fs::path root(o.out);
  std::map<std::string, double> pass_ms;
  std::vector<ir::Kernel> traced_all;
  std::size_t files = 0;
  std::size_t skipped = 0;  // kernel × target pairs past the target's limits
  auto emit = [&](const ir::Kernel& traced, const Output& output) {
    const auto compiled = codegen::compile_kernel(traced, output.profile);
    for (const auto& s : compiled.stats) pass_ms[s.name] += s.milliseconds;
    if (output.binary == nullptr) {
      write_text(
          root / output.target->name / (compiled.symbol + std::string(output.target->extension)),
          compiled.source);
    } else {
      const std::string_view format = output.binary->name;
      const auto binary = output.binary->compile(compiled.source, compiled.symbol, output.profile);
      write_file(
          root / format / fmt::format("{}.{}.{}", compiled.symbol, output.profile.name, format),
          binary.data(), binary.size());
    }
    ++files;
  };
  for (std::size_t i = 0; i < forms.size(); ++i) {
    const auto& f = forms[i];
    fmt::print("[{:>3}/{}] {} {}\n", i + 1, forms.size(), f.info->name, dtype_name(f.dtype));
    std::fflush(stdout);
    traced_all.push_back(f.info->trace(f.dtype));
    for (const Output& output : wanted) {
      try {
        emit(traced_all.back(), output);
      } catch (const TargetLimitError& e) {
        fmt::print("  not emitted for {}: {}\n", output.profile.name, e.what());
        ++skipped;
      }
    }
  }
  write_text(root / "include" / "iron_kernels.hpp", codegen::emit_launch_wrappers(traced_all));
  ++files;
  if (o.time_passes) {
    fmt::print("\n{:<34} {:>10}\n", "pass", "total ms");
    for (const auto& p : codegen::pipeline_passes()) {
      if (auto it = pass_ms.find(std::string(p.name)); it != pass_ms.end()) {
        fmt::print("{:<34} {:>10.3f}\n", it->first, it->second);
        pass_ms.erase(it);
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (skipped != 0) {
    fmt::print("{} kernel forms not emitted for a target whose limits they exceed (listed above)\n",
               skipped);
  }
  // The process's CPU time beside the wall time: a budget on it holds on a loaded machine.
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  fmt::print("wrote {} files for {} kernel forms to {} in {:.3f} s ({:.3f} s of CPU)\n", files,
             forms.size(), root.string(), seconds, cpu_seconds);
  return 0;
}

/// "cuda/*.cu: CUDA C++ for NVRTC; msl/*.metal: Metal Shading Language".
std::string source_files() {
  std::string text;
  for (const codegen::Target& t : codegen::targets()) {
    text += fmt::format("{}{}/*{}: {}", text.empty() ? "" : "; ", t.name, t.extension, t.language);
  }
  return text;
}

/// "cuda (CUDA C++ for NVRTC), msl (…) or cubin (for the cuda backend, needs NVRTC)".
std::string emit_help() {
  std::vector<std::string> words = {std::string(kAll) + " (the source for every target)"};
  for (const auto& d : target_descriptions()) words.push_back(d);
  for (const runtime::BackendEntry& b : runtime::backends()) {
    if (!b.binary) continue;
    words.push_back(fmt::format("{} (the {} backend's binary of the {} source, needs {})",
                                b.binary->name, b.name, b.target, b.binary->compiler));
  }
  return "What to write: " + or_list(words);
}

}  // namespace

Command add_build_command(CLI::App& app) {
  std::vector<std::string> binaries;
  for (const runtime::BackendEntry& b : runtime::backends()) {
    if (b.binary) binaries.push_back(fmt::format("{0}/*.{0}", b.binary->name));
  }
  auto* cmd = app.add_subcommand(
      "build", fmt::format("Compile kernels and write their source ({}) or a backend's binaries "
                           "({}), plus include/iron_kernels.hpp with typed host launch wrappers",
                           source_files(), or_list(binaries)));
  auto o = std::make_shared<BuildOptions>();
  auto* emit = cmd->add_option("--emit", o->emit, emit_help());
  emit->check(CLI::IsMember(emit_choices()));
  auto* out = cmd->add_option("-o,--out", o->out, "Output folder (created if missing)");
  auto* aot = cmd->add_option(
      "--aot", o->aot,
      "Instead: write an ahead-of-time bundle to this folder: each kernel form's cubins for "
      "sm_80 and sm_90 (and sm_90a for a form with warpgroup products) and iron_aot.hpp, a header "
      "that launches them through the CUDA driver alone (docs/applications.md; needs NVRTC)");
  out->excludes(aot);
  aot->excludes(out);
  aot->excludes(emit);
  cmd->callback([out, aot] {
    if (out->count() == 0 && aot->count() == 0) {
      throw CLI::RequiredError("-o,--out (or --aot)");
    }
  });
  cmd->add_option("--filter", o->filter, "Only kernels whose name matches this regular expression");
  cmd->add_option("--dtype", o->dtype, "Only this dtype (default: every dtype of each kernel)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  for (const codegen::Target& t : codegen::targets()) {
    std::string& profile = o->profiles[std::string(t.name)];
    profile = t.default_profile;
    const std::vector<std::string> listed(t.listed_profiles.begin(), t.listed_profiles.end());
    cmd->add_option(
        profile_option(t), profile,
        fmt::format("{} profile: {} (default {})", t.language, or_list(listed), t.default_profile));
  }
  cmd->add_flag("--time-passes", o->time_passes, "Print each pass's total time over all kernels");
  return {cmd, [o] { return build(*o); }};
}

}  // namespace iron::cli
