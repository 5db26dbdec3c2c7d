/// The test layer's half of the target registry: the check each target's entry names
/// (codegen::Target::checker), which the tests run on what the target emits. The codegen layer
/// only names its check, so that it depends on neither NVRTC (runtime) nor clang (test support).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "iron/codegen/compile.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/nvrtc.hpp"
#include "support/checks.hpp"

namespace iron::checks_test {

struct TargetChecker {
  std::string_view name;  ///< as a target's entry names it
  /// "" when the tool the check needs is here, else why it is not.
  std::string (*missing)();
  /// "" when `compiled` (emitted for `profile`) passes the check, else what the tool said.
  std::string (*check)(const codegen::CompiledKernel& compiled,
                       const codegen::TargetProfile& profile);
};

/// Every check the tests can run on emitted source.
inline const std::vector<TargetChecker>& target_checkers() {
  static const std::vector<TargetChecker> all = {
      {"nvrtc",
       [] {
         const auto& nvrtc = runtime::nvrtc_status();
         return nvrtc.available ? std::string() : nvrtc.reason;
       },
       [](const codegen::CompiledKernel& compiled, const codegen::TargetProfile& profile) {
         try {
           runtime::compile_cubin(compiled.source, compiled.symbol, profile.cuda_sm);
         } catch (const Error& e) {
           return std::string(e.what());
         }
         return std::string();
       }},
      {"msl-shim", [] { return std::string(); },
       [](const codegen::CompiledKernel& compiled, const codegen::TargetProfile&) {
         try {
           return checks::check_msl(compiled.source);
         } catch (const Error& e) {
           return std::string(e.what());
         }
       }},
  };
  return all;
}

/// The check named `name`; nullptr when the tests have none.
inline const TargetChecker* find_target_checker(std::string_view name) {
  const auto& all = target_checkers();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const TargetChecker& c) { return c.name == name; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace iron::checks_test
