/// The CUDA target: its profiles (sm_80 and newer) and its registry entry.
#include <charconv>

#include "iron/codegen/emit.hpp"
#include "iron/codegen/targets.hpp"
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

/// "sm_N" for N >= 80, spelled as TargetProfile::cuda names it.
std::optional<TargetProfile> cuda_profile(std::string_view name) {
  if (!name.starts_with("sm_")) return std::nullopt;
  const std::optional<int> sm = parse_int(name.substr(3));
  if (!sm || *sm < 80 || name != TargetProfile::cuda(*sm).name) return std::nullopt;
  return TargetProfile::cuda(*sm);
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

namespace cuda {

Target target() {
  return {.kind = TargetKind::Cuda,
          .name = "cuda",
          .language = "CUDA C++ for NVRTC",
          .extension = ".cu",
          .default_profile = "sm_90",
          .listed_profiles = {"sm_80", "sm_90"},
          .first_bf16_profile = "",
          .profile = cuda_profile,
          .emit = emit_cuda,
          .checker = "nvrtc"};
}

}  // namespace cuda
}  // namespace iron::codegen
