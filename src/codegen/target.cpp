/// The CUDA and Metal target profiles and their names ("sm_90", "metal3.1").
#include "iron/codegen/target.hpp"

#include <charconv>

#include "iron/core/error.hpp"

namespace iron::codegen {
namespace {

/// The number `text` spells exactly, if it does.
std::optional<int> parse_int(std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

TargetProfile TargetProfile::cuda(int sm) {
  IRON_INTERNAL_ASSERT(sm > 0, "a CUDA compute capability must be positive");
  TargetProfile t;
  t.kind = TargetKind::Cuda;
  t.name = "sm_" + std::to_string(sm);
  t.cuda_sm = sm;
  t.native_f16_arithmetic = sm >= 80;
  t.native_bf16_arithmetic = sm >= 80;
  t.has_bf16_type = sm >= 80;
  t.max_vector_bytes = 16;
  t.max_shared_bytes = std::uint64_t{48} * 1024;  // the static __shared__ limit
  return t;
}

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
  t.max_shared_bytes = std::uint64_t{32} * 1024;
  return t;
}

std::optional<TargetProfile> TargetProfile::by_name(std::string_view name) {
  if (name.starts_with("sm_")) {
    const std::optional<int> sm = parse_int(name.substr(3));
    if (!sm || *sm < 80 || name != cuda(*sm).name) return std::nullopt;  // sm_80 and newer
    return cuda(*sm);
  }
  for (const int version : {30, 31, 32}) {
    if (name == metal(version).name) return metal(version);
  }
  return std::nullopt;
}

std::vector<TargetProfile> TargetProfile::defaults() { return {cuda(90), metal(31)}; }

}  // namespace iron::codegen
