/// Command-line words from the target and backend registries: the choices options accept, their
/// help texts, and profiles checked against their target. No command lists a target or a
/// backend by hand.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "iron/codegen/targets.hpp"

namespace iron::cli {

/// "a", "a or b", "a, b or c".
std::string or_list(const std::vector<std::string>& words);

/// Every emitting target's name, in registry order ("cuda", "msl").
std::vector<std::string> target_names();

/// Each target as "NAME (LANGUAGE)": "cuda (CUDA C++ for NVRTC)".
std::vector<std::string> target_descriptions();

/// Every backend's name, in registry order ("sim", "cuda", "metal").
std::vector<std::string> backend_names();

/// The profile `name` of `target`; UsageError naming `option` and the target's listed profiles
/// when it is not one.
codegen::TargetProfile target_profile(const codegen::Target& target, const std::string& name,
                                      std::string_view option);

/// The profile `name` of any target; UsageError listing every target's profiles otherwise.
codegen::TargetProfile any_profile(const std::string& name);

/// Every listed profile of every target, the default of each followed by "(default for …)" with
/// the words `default_for` gives it: "sm_80, sm_90 (default for cuda), metal3.0, …".
std::string profiles_help(std::string (*default_for)(const codegen::Target& target));

}  // namespace iron::cli
