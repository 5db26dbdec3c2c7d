/// The target registry: every emitting target (CUDA C++, MSL) with its name, profiles, emitter,
/// file extension and checker, in one list that the compiler and the CLI iterate, as they do
/// pipeline_passes(). Adding a target is one folder under src/codegen/, one IRON_TARGETS row
/// (iron/codegen/target.hpp) and its snapshots.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

/// One emitting target, as its folder describes it in `Target <folder>::target()`.
struct Target {
  TargetKind kind;
  /// "cuda", "msl": the word `--target`, `build --emit`, `--NAME-profile` and the output and
  /// snapshot folders use.
  std::string_view name;
  /// "CUDA C++ for NVRTC", "Metal Shading Language": how help texts name what it writes.
  std::string_view language;
  /// ".cu", ".metal": of each emitted file and snapshot.
  std::string_view extension;
  /// "sm_90", "metal3.1": what `build`, `snap`, `diff` and `inspect` compile for unless told.
  std::string_view default_profile;
  /// The profiles help texts list, oldest first; `profile` accepts them and may accept more.
  std::vector<std::string_view> listed_profiles;
  /// The oldest listed profile with a bf16 type; "" when every profile has one.
  std::string_view first_bf16_profile;
  /// The profile `name` spells when it is one of this target's; nullopt otherwise.
  std::optional<TargetProfile> (*profile)(std::string_view name);
  /// The source of `lowered` (after the pipeline for `profile`), named kernel_symbol(lowered).
  std::string (*emit)(const ir::Kernel& lowered, const TargetProfile& profile);
  /// The check the tests run on every emitted file, by name: "nvrtc" (compiles with NVRTC for
  /// the profile's architecture, any warning failing), "msl-shim" (clang against the Metal shim
  /// header). The codegen layer only names it: the test layer maps names to checks and fails
  /// for a target whose checker it does not know.
  std::string_view checker;
};

// Each target's entry, defined in its folder: cuda::target(), msl::target().
#define IRON_X(e, folder) \
  namespace folder {      \
  Target target();        \
  }
IRON_TARGETS(IRON_X)
#undef IRON_X

/// Every emitting target, in TargetKind order.
const std::vector<Target>& targets();

/// The entry of the target `profile` belongs to.
const Target& target_of(const TargetProfile& profile);

/// The target named `name` ("cuda", "msl"); nullptr for none.
const Target* find_target(std::string_view name);

}  // namespace iron::codegen
