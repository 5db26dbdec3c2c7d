/// `iron build --emit all|cuda|msl|cubin -o DIR`: compiles every selected kernel × dtype and
/// writes its CUDA C++, MSL and/or sm_XX cubin, plus one header of typed host launch wrappers.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "commands.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/codegen/launch_wrappers.hpp"
#include "iron/runtime/nvrtc.hpp"
#include "kernel_selection.hpp"

namespace iron::cli {
namespace {

namespace fs = std::filesystem;

struct BuildOptions {
  std::string emit = "all";
  std::string out;
  std::string filter;
  std::string dtype;
  std::string cuda_profile = "sm_90";
  std::string msl_profile = "metal3.1";
  bool time_passes = false;
};

void write_file(const fs::path& path, const void* data, std::size_t size) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw Error(fmt::format("cannot write {}", path.string()));
}

void write_text(const fs::path& path, const std::string& text) {
  write_file(path, text.data(), text.size());
}

int build(const BuildOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const bool cuda = o.emit == "all" || o.emit == "cuda" || o.emit == "cubin";
  const bool msl = o.emit == "all" || o.emit == "msl";
  const bool cubin = o.emit == "cubin";
  const auto cuda_profile = resolve_profile(o.cuda_profile);
  const auto msl_profile = resolve_profile(o.msl_profile);
  if (cuda_profile.kind != codegen::TargetKind::Cuda ||
      msl_profile.kind != codegen::TargetKind::Msl) {
    throw UsageError("--cuda-profile takes sm_80 or sm_90; --msl-profile metal3.0 or metal3.1");
  }
  if (cubin && !runtime::nvrtc_status().available) {
    throw Error("--emit cubin needs NVRTC, which was not found:\n" +
                runtime::nvrtc_status().reason);
  }
  const auto forms = select_kernels(o.filter, o.dtype);
  const fs::path root(o.out);
  std::map<std::string, double> pass_ms;
  std::vector<ir::Kernel> traced_all;
  std::size_t files = 0;
  auto emit = [&](const ir::Kernel& traced, const codegen::TargetProfile& profile) {
    const auto compiled = codegen::compile_kernel(traced, profile);
    for (const auto& s : compiled.stats) pass_ms[s.name] += s.milliseconds;
    const std::string kind(codegen::target_kind_name(profile.kind));
    const fs::path file =
        root / kind / (compiled.symbol + std::string(codegen::source_extension(profile.kind)));
    if (!cubin) {
      write_text(file, compiled.source);
      ++files;
      return;
    }
    const auto result = runtime::compile_cubin(compiled.source, compiled.symbol, profile.cuda_sm);
    write_file(root / "cubin" / fmt::format("{}.{}.cubin", compiled.symbol, profile.name),
               result.cubin.data(), result.cubin.size());
    ++files;
  };
  for (std::size_t i = 0; i < forms.size(); ++i) {
    const auto& f = forms[i];
    fmt::print("[{:>3}/{}] {} {}\n", i + 1, forms.size(), f.info->name, dtype_name(f.dtype));
    std::fflush(stdout);
    traced_all.push_back(f.info->trace(f.dtype));
    if (cuda) emit(traced_all.back(), cuda_profile);
    if (msl) emit(traced_all.back(), msl_profile);
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
  fmt::print("wrote {} files for {} kernel forms to {} in {:.3f} s\n", files, forms.size(),
             root.string(), seconds);
  return 0;
}

}  // namespace

Command add_build_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "build",
      "Compile kernels and write their CUDA C++ (cuda/*.cu), MSL (msl/*.metal) or sm_XX cubins "
      "(cubin/*.cubin, needs NVRTC), plus include/iron_kernels.hpp with typed host launch "
      "wrappers");
  auto o = std::make_shared<BuildOptions>();
  cmd->add_option("--emit", o->emit, "What to write: all (CUDA and MSL), cuda, msl or cubin")
      ->check(CLI::IsMember({"all", "cuda", "msl", "cubin"}));
  cmd->add_option("-o,--out", o->out, "Output folder (created if missing)")->required();
  cmd->add_option("--filter", o->filter, "Only kernels whose name matches this regular expression");
  cmd->add_option("--dtype", o->dtype, "Only this dtype (default: every dtype of each kernel)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  cmd->add_option("--cuda-profile", o->cuda_profile,
                  "CUDA target profile: sm_80 or sm_90 (default)");
  cmd->add_option("--msl-profile", o->msl_profile, "Metal profile: metal3.0 or metal3.1 (default)");
  cmd->add_flag("--time-passes", o->time_passes, "Print each pass's total time over all kernels");
  return {cmd, [o] { return build(*o); }};
}

}  // namespace iron::cli
