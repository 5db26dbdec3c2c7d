/// `iron inspect KERNEL`: prints a kernel as Iron IR (code generation targets come later).
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>

#include "commands.hpp"
#include "iron/core/printer.hpp"
#include "iron/dsl/kernel.hpp"

namespace iron::cli {
namespace {

struct InspectOptions {
  std::string kernel;
  std::string target = "ir";
  std::string dtype = "f32";
};

int inspect(const InspectOptions& o) {
  const dsl::KernelInfo* info = dsl::find_kernel(o.kernel);
  if (info == nullptr) {
    throw UsageError(fmt::format("no kernel named '{}' (see `iron list`)", o.kernel));
  }
  if (o.target != "ir") {
    throw UsageError(fmt::format(
        "the {} target is not available yet: this version prints only Iron IR (--ir)", o.target));
  }
  const DType dtype = *parse_dtype(o.dtype);
  if (std::find(info->dtypes.begin(), info->dtypes.end(), dtype) == info->dtypes.end()) {
    throw UsageError(fmt::format("kernel {} has no {} form (see `iron list`)", o.kernel, o.dtype));
  }
  fmt::print("{}", ir::print_kernel(dsl::kernel_ir_for(o.kernel, dtype)));
  return 0;
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Print a kernel traced with one dtype as Iron IR");
  auto o = std::make_shared<InspectOptions>();
  cmd->add_option("kernel", o->kernel, "The kernel's name (see `iron list kernels`)")->required();
  auto* ir_flag = cmd->add_flag_callback(
      "--ir", [o] { o->target = "ir"; }, "Print Iron IR, the default (the same as --target ir)");
  cmd->add_option("--target", o->target,
                  "What to print: ir (Iron IR); cuda and msl are not available yet")
      ->check(CLI::IsMember({"ir", "cuda", "msl"}))
      ->excludes(ir_flag);
  cmd->add_option("--dtype", o->dtype, "The float type T is bound to (default f32)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  return {cmd, [o] { return inspect(*o); }};
}

}  // namespace iron::cli
