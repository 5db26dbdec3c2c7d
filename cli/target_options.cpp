/// Option choices, help texts and profile checks read from the target and backend registries.
#include "target_options.hpp"

#include <fmt/format.h>

#include "commands.hpp"
#include "iron/runtime/backend.hpp"

namespace iron::cli {

std::string or_list(const std::vector<std::string>& words) {
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) text += i + 1 == words.size() ? " or " : ", ";
    text += words[i];
  }
  return text;
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const codegen::Target& t : codegen::targets()) names.emplace_back(t.name);
  return names;
}

std::vector<std::string> target_descriptions() {
  std::vector<std::string> words;
  for (const codegen::Target& t : codegen::targets()) {
    words.push_back(fmt::format("{} ({})", t.name, t.language));
  }
  return words;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const runtime::BackendEntry& b : runtime::backends()) names.emplace_back(b.name);
  return names;
}

codegen::TargetProfile target_profile(const codegen::Target& target, const std::string& name,
                                      std::string_view option) {
  if (auto profile = target.profile(name)) return *profile;
  const std::vector<std::string> listed(target.listed_profiles.begin(),
                                        target.listed_profiles.end());
  throw UsageError(fmt::format("{} takes a {} profile ({}), not '{}'", option, target.name,
                               or_list(listed), name));
}

codegen::TargetProfile any_profile(const std::string& name) {
  if (auto profile = codegen::TargetProfile::by_name(name)) return *profile;
  std::vector<std::string> listed;
  for (const codegen::Target& t : codegen::targets()) {
    listed.insert(listed.end(), t.listed_profiles.begin(), t.listed_profiles.end());
  }
  throw UsageError(fmt::format(
      "unknown target profile '{}': use {} (a CUDA profile may end in +mma=software or +mma=wmma)",
      name, or_list(listed)));
}

std::string profiles_help(std::string (*default_for)(const codegen::Target& target)) {
  std::vector<std::string> words;
  for (const codegen::Target& t : codegen::targets()) {
    for (const std::string_view p : t.listed_profiles) {
      words.emplace_back(p);
      if (p == t.default_profile) words.back() += " (default for " + default_for(t) + ")";
    }
  }
  return or_list(words);
}

}  // namespace iron::cli
