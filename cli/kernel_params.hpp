/// A kernel's parameters as the CLI shows them: in `iron list --params` and whenever `iron run`
/// is missing or given a wrong name.
#pragma once

#include <string>

#include "iron/core/ir.hpp"
#include "iron/dsl/kernel.hpp"

namespace iron::cli {

/// One line: "in inp: T, out out: T, constexpr n: u32", where T marks a parameter whose dtype
/// follows the kernel's generic float type (found by tracing two of its dtypes).
std::string param_summary(const dsl::KernelInfo& info);

/// One row per parameter of a traced kernel, each indented by two spaces and ending in a newline:
/// kind, name, dtype and the `iron run` option that gives it ("--in inp=FILE.npy").
std::string param_table(const ir::Kernel& kernel);

/// The `iron run` option that gives parameter `p`: "--in inp=FILE.npy", "--const n=VALUE".
std::string run_option(const ir::Param& p);

}  // namespace iron::cli
