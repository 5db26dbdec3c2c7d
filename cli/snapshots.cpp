/// `iron snap` rewrites the emitted-code snapshots (the source of every kernel, in its snapshot
/// dtype, for each target of the registry); `iron diff` shows how the code emitted now differs
/// from them and fails when it does.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/codegen/emit.hpp"
#include "iron/codegen/targets.hpp"
#include "iron/core/error.hpp"
#include "kernel_selection.hpp"
#include "line_diff.hpp"

namespace iron::cli {
namespace {

namespace fs = std::filesystem;

/// The one dtype a kernel's snapshots are taken in: bf16 where the kernel has it, else its first.
/// A kernel's dtypes differ in their element types, which the kernel tests of every dtype cover;
/// one form per kernel keeps what a compiler change does to each kernel reviewable, at a third
/// of the size.
DType snapshot_dtype(const dsl::KernelInfo& info) {
  for (DType dt : info.dtypes) {
    if (dt == DType::BF16) return dt;
  }
  return info.dtypes.front();
}

/// Snapshot path (relative to the snapshot folder) -> emitted source, for every kernel in its
/// snapshot dtype on each target's default profile: TARGET/SYMBOL.EXTENSION. A kernel that
/// exceeds a target's limits has a snapshot that says why it is not emitted there, so a change
/// of either shows.
std::map<std::string, std::string> emit_everything() {
  std::map<std::string, std::string> files;
  for (const auto& form : select_kernels("", "")) {
    if (form.dtype != snapshot_dtype(*form.info)) continue;
    const ir::Kernel traced = form.info->trace(form.dtype);
    for (const auto& profile : codegen::TargetProfile::defaults()) {
      const codegen::Target& target = codegen::target_of(profile);
      const std::string symbol = codegen::kernel_symbol(traced);
      const std::string path = fmt::format("{}/{}{}", target.name, symbol, target.extension);
      try {
        files[path] = codegen::compile_kernel(traced, profile).source;
      } catch (const TargetLimitError& e) {
        files[path] = fmt::format("// not emitted for {}: {}\n", profile.name, e.what());
      }
    }
  }
  return files;
}

/// Snapshot files now on disk in the targets' folders, relative to `dir`.
std::set<std::string> files_on_disk(const fs::path& dir) {
  std::set<std::string> files;
  for (const codegen::Target& target : codegen::targets()) {
    const fs::path folder = dir / target.name;
    if (!fs::is_directory(folder)) continue;
    for (const auto& e : fs::directory_iterator(folder)) {
      if (e.is_regular_file()) files.insert(fs::relative(e.path(), dir).generic_string());
    }
  }
  return files;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int snap(const std::string& dir) {
  const auto emitted = emit_everything();
  std::size_t changed = 0;
  for (const auto& [path, source] : emitted) {
    const fs::path file = fs::path(dir) / path;
    if (fs::exists(file) && read_file(file) == source) continue;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << source;
    ++changed;
  }
  std::size_t removed = 0;
  for (const auto& path : files_on_disk(dir)) {
    if (!emitted.contains(path)) removed += fs::remove(fs::path(dir) / path) ? 1 : 0;
  }
  fmt::print("{} snapshots in {}: {} written, {} removed\n", emitted.size(), dir, changed, removed);
  return 0;
}

int diff(const std::string& dir) {
  if (!fs::is_directory(dir)) {
    throw UsageError(fmt::format("no snapshot folder {} (run `iron snap` first)", dir));
  }
  const auto emitted = emit_everything();
  std::size_t differ = 0;
  std::size_t missing = 0;
  std::size_t stale = 0;
  for (const auto& [path, source] : emitted) {
    const fs::path file = fs::path(dir) / path;
    if (!fs::exists(file)) {
      fmt::print("missing snapshot: {}\n", path);
      ++missing;
      continue;
    }
    const std::string text =
        unified_diff(read_file(file), source, "snapshot/" + path, "emitted/" + path);
    if (!text.empty()) {
      fmt::print("{}", text);
      ++differ;
    }
  }
  for (const auto& path : files_on_disk(dir)) {
    if (!emitted.contains(path)) {
      fmt::print("stale snapshot (no such kernel form): {}\n", path);
      ++stale;
    }
  }
  const std::size_t bad = differ + missing + stale;
  fmt::print("{} snapshots: {} match, {} differ, {} missing, {} stale{}\n", emitted.size(),
             emitted.size() - differ - missing, differ, missing, stale,
             bad == 0 ? "" : " (run `iron snap` to accept the emitted code)");
  return bad == 0 ? 0 : 1;
}

/// "cuda (sm_90) under DIR/cuda, msl (metal3.1) under DIR/msl".
std::string snapshot_folders() {
  std::string text;
  for (const codegen::Target& t : codegen::targets()) {
    text += fmt::format("{}{} ({}) under DIR/{}", text.empty() ? "" : ", ", t.name,
                        t.default_profile, t.name);
  }
  return text;
}

}  // namespace

Command add_snap_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "snap", fmt::format("Rewrite the emitted-code snapshots: the source of every kernel in "
                          "one dtype (bf16 where it has it, else its first) for each target's "
                          "default profile, {}; snapshots of kernel forms that are gone are "
                          "removed",
                          snapshot_folders()));
  auto dir = std::make_shared<std::string>("tests/snapshots");
  cmd->add_option("--dir", *dir, "Snapshot folder (default tests/snapshots)");
  return {cmd, [dir] { return snap(*dir); }};
}

Command add_diff_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "diff",
      "Show how the code emitted now differs from the snapshots (unified diff); exits with "
      "status 1 when anything differs, is missing or is stale");
  auto dir = std::make_shared<std::string>("tests/snapshots");
  cmd->add_option("--dir", *dir, "Snapshot folder (default tests/snapshots)");
  return {cmd, [dir] { return diff(*dir); }};
}

}  // namespace iron::cli
