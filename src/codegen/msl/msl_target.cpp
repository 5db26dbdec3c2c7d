/// The Metal target: its profiles (Metal 3.0 to 3.2) and its registry entry.
#include "iron/codegen/emit.hpp"
#include "iron/codegen/targets.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen {
namespace {

constexpr int kVersions[] = {30, 31, 32};

/// "metal3.0", "metal3.1" or "metal3.2".
std::optional<TargetProfile> metal_profile(std::string_view name) {
  for (const int version : kVersions) {
    if (name == TargetProfile::metal(version).name) return TargetProfile::metal(version);
  }
  return std::nullopt;
}

}  // namespace

TargetProfile TargetProfile::metal(int version) {
  IRON_INTERNAL_ASSERT(version >= 30 && version <= 32, "Metal 3.0, 3.1 and 3.2 are supported");
  TargetProfile t;
  t.kind = TargetKind::Msl;
  t.name = "metal" + std::to_string(version / 10) + "." + std::to_string(version % 10);
  t.metal_version = version;
  t.native_f16_arithmetic = true;
  t.native_bf16_arithmetic = version >= 31;  // bfloat arrived with Metal 3.1
  t.has_bf16_type = version >= 31;
  t.max_vector_bytes = 16;
  t.async_copies = false;     // copy.async is a load and a store in place
  t.swizzled_shared = false;  // simdgroup_load reads rows a fixed stride apart
  t.max_shared_bytes = kMetalSharedBytes;
  return t;
}

namespace msl {

Target target() {
  return {.kind = TargetKind::Msl,
          .name = "msl",
          .language = "Metal Shading Language",
          .extension = ".metal",
          .default_profile = "metal3.1",
          .listed_profiles = {"metal3.0", "metal3.1", "metal3.2"},
          .first_bf16_profile = "metal3.1",
          .profile = metal_profile,
          .emit = emit_msl,
          .checker = "msl-shim"};
}

}  // namespace msl
}  // namespace iron::codegen
