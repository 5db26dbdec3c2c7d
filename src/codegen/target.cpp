/// The target registry, built from the IRON_TARGETS rows, and profile lookup across targets.
#include "iron/codegen/target.hpp"

#include <algorithm>

#include "iron/codegen/targets.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen {

const std::vector<Target>& targets() {
  static const std::vector<Target> all = [] {
    std::vector<Target> list = {
#define IRON_X(e, folder) folder::target(),
        IRON_TARGETS(IRON_X)
#undef IRON_X
    };
    for (std::size_t i = 0; i < list.size(); ++i) {
      IRON_INTERNAL_ASSERT(static_cast<std::size_t>(list[i].kind) == i,
                           "a target's entry names another TargetKind");
    }
    return list;
  }();
  return all;
}

const Target& target_of(const TargetProfile& profile) {
  return targets().at(static_cast<std::size_t>(profile.kind));
}

const Target* find_target(std::string_view name) {
  const auto& all = targets();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const Target& t) { return t.name == name; });
  return it == all.end() ? nullptr : &*it;
}

std::optional<TargetProfile> TargetProfile::by_name(std::string_view name) {
  for (const Target& target : targets()) {
    if (auto profile = target.profile(name)) return profile;
  }
  return std::nullopt;
}

std::vector<TargetProfile> TargetProfile::defaults() {
  std::vector<TargetProfile> profiles;
  for (const Target& target : targets()) {
    profiles.push_back(*target.profile(target.default_profile));
  }
  return profiles;
}

}  // namespace iron::codegen
