/// Choosing kernels, filters and targets from command-line words, shared by the commands.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "iron/dsl/kernel.hpp"
#include "iron/dsl/tuning.hpp"

namespace iron::cli {

struct KernelForm {
  const dsl::KernelInfo* info;
  DType dtype;
};

/// The kernel named `name` in dtype `dtype` ("f32", "f16", "bf16"); UsageError otherwise.
KernelForm resolve_kernel(const std::string& name, const std::string& dtype);

/// The --filter option as an ECMAScript regular expression; UsageError naming it when invalid.
std::regex filter_regex(const std::string& filter);

/// Every registered kernel × dtype whose name matches `filter` (ECMAScript regex search; empty
/// matches all) and whose dtype is `dtype` (empty: all); UsageError when nothing matches.
std::vector<KernelForm> select_kernels(const std::string& filter, const std::string& dtype);

/// The tuning configuration `text` ("NAME=VALUE,…") of kernel `kernel`, given by option `option`;
/// empty for "". UsageError naming the option when it is malformed, the kernel has no knobs, or
/// a knob or value is not the kernel's.
dsl::TuningConfig tuning_config_option(const std::string& kernel, const std::string& text,
                                       const char* option);

}  // namespace iron::cli
