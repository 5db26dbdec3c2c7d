/// Kernel, dtype and target-profile selection with clear errors for unknown names.
#include "kernel_selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "commands.hpp"

namespace iron::cli {

KernelForm resolve_kernel(const std::string& name, const std::string& dtype) {
  const dsl::KernelInfo* info = dsl::find_kernel(name);
  if (info == nullptr) {
    throw UsageError(fmt::format("no kernel named '{}' (see `iron list`)", name));
  }
  const auto parsed = parse_dtype(dtype);
  if (!parsed ||
      std::find(info->dtypes.begin(), info->dtypes.end(), *parsed) == info->dtypes.end()) {
    throw UsageError(fmt::format("kernel {} has no {} form (see `iron list`)", name, dtype));
  }
  return {info, *parsed};
}

std::regex filter_regex(const std::string& filter) {
  try {
    return std::regex(filter, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UsageError(
        fmt::format("--filter '{}' is not a valid regular expression: {}", filter, e.what()));
  }
}

std::vector<KernelForm> select_kernels(const std::string& filter, const std::string& dtype) {
  const std::regex pattern = filter_regex(filter);
  std::vector<KernelForm> forms;
  for (const auto& info : dsl::registered_kernels()) {
    if (!std::regex_search(info.name, pattern)) continue;
    for (const DType d : info.dtypes) {
      if (dtype.empty() || dtype_name(d) == dtype) forms.push_back({&info, d});
    }
  }
  if (forms.empty()) {
    throw UsageError(fmt::format("no kernel matches --filter '{}'{} (see `iron list kernels`)",
                                 filter, dtype.empty() ? "" : " with --dtype " + dtype));
  }
  return forms;
}

dsl::TuningConfig tuning_config_option(const std::string& kernel, const std::string& text,
                                       const char* option) {
  try {
    dsl::TuningConfig config = dsl::parse_config(text);
    if (config.empty()) return config;
    const auto space = dsl::tuning_space(kernel);
    if (!space) throw Error(fmt::format("kernel {} declares no tuning knobs", kernel));
    space->complete(kernel, config);
    return config;
  } catch (const Error& e) {
    throw UsageError(fmt::format("{}: {}", option, e.what()));
  }
}

}  // namespace iron::cli
