/// The MSL check: clang parses emitted MSL as C++17 against tools/msl_shim. Not Apple's compiler.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

#include "iron/core/error.hpp"
#include "support/checks.hpp"
#include "support/tool_runner.hpp"

namespace iron::checks {
namespace {

namespace fs = std::filesystem;

/// $IRON_MSL_SHIM_DIR, else tools/msl_shim of the source tree (the build defines the macro of the
/// same name); it must hold metal_stdlib.
fs::path shim_dir() {
  const char* from_environment = std::getenv("IRON_MSL_SHIM_DIR");
  fs::path dir = from_environment != nullptr && *from_environment != '\0'
                     ? fs::path(from_environment)
                     : fs::path(IRON_MSL_SHIM_DIR);
  std::error_code error;
  if (!fs::exists(dir / "metal_stdlib", error)) {
    throw Error(fmt::format("check_msl: {} has no metal_stdlib shim", dir.string()));
  }
  return dir;
}

}  // namespace

std::string check_msl(const std::string& source) {
  const auto clang = find_program({"clang++", "clang"});
  if (!clang) throw Error("check_msl needs clang++ or clang on PATH; neither was found");
  const fs::path shim = shim_dir();

  const ScratchDir scratch("iron-msl-");
  const fs::path file = scratch.path() / "kernel.metal";
  {
    std::ofstream out(file, std::ios::binary);
    out << source;
    out.close();
    if (!out) throw Error(fmt::format("check_msl: cannot write {}", file.string()));
  }
  // aarch64 gives _Float16 arithmetic (half); -nostdinc keeps the host's headers out, so every
  // name the source uses must come from the shim.
  const ToolRun run = run_tool({clang->string(), "-std=c++17", "-fsyntax-only", "-x", "c++",
                                "--target=aarch64-linux-gnu", "-nostdinc", "-ffreestanding",
                                "-fno-color-diagnostics", "-Wall", "-Wno-unknown-attributes", "-I",
                                shim.string(), file.string()});

  std::string diagnostics = run.output;
  const std::string scratch_prefix = scratch.path().string() + "/";
  for (auto at = diagnostics.find(scratch_prefix); at != std::string::npos;
       at = diagnostics.find(scratch_prefix, at)) {
    diagnostics.erase(at, scratch_prefix.size());
  }
  if (run.exit_code != 0 && diagnostics.empty()) {
    diagnostics =
        fmt::format("{} exited with status {} and no message", clang->string(), run.exit_code);
  }
  return diagnostics;
}

}  // namespace iron::checks
