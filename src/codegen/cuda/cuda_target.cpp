/// The CUDA target: its profiles (sm_80 and newer) and its registry entry.
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

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

constexpr std::string_view kMmaOption = "+mma=";
constexpr std::string_view kHopperProfile = "sm_90a";  ///< the wgmma strategy's one profile

/// "sm_N" for N >= 80, optionally "+mma=STRATEGY", spelled as TargetProfile::cuda names it; or
/// "sm_90a".
std::optional<TargetProfile> cuda_profile(std::string_view name) {
  if (name == kHopperProfile) return TargetProfile::cuda(90, MmaStrategy::Wgmma);
  if (!name.starts_with("sm_")) return std::nullopt;
  const std::size_t option = name.find(kMmaOption);
  MmaStrategy mma = MmaStrategy::MmaSync;
  if (option != std::string_view::npos) {
    const auto parsed = parse_mma_strategy(name.substr(option + kMmaOption.size()));
    if (!parsed) return std::nullopt;
    mma = *parsed;
  }
  const std::optional<int> sm = parse_int(name.substr(3, option - 3));
  if (!sm || *sm < 80 || mma == MmaStrategy::Wgmma || name != TargetProfile::cuda(*sm, mma).name) {
    return std::nullopt;
  }
  return TargetProfile::cuda(*sm, mma);
}

constexpr std::string_view kStrategyNames[] = {"mmasync", "software", "wmma", "wgmma"};

constexpr std::uint64_t kKiB = 1024;
/// Shared memory a block leaves to the system on compute capability 8.0 and later.
constexpr std::uint64_t kReservedShared = kKiB;

/// The shared memory of a multiprocessor on compute capability `sm` × 10 (the CUDA programming
/// guide's table of technical specifications).
std::uint64_t multiprocessor_shared(int sm) {
  if (sm >= 90) return 228 * kKiB;
  if (sm == 80 || sm == 87) return 164 * kKiB;
  if (sm >= 86) return 100 * kKiB;
  if (sm == 75) return 64 * kKiB;
  return 96 * kKiB;  // sm_70, sm_72
}

/// The most shared memory a block may opt in to on compute capability `sm` × 10: the
/// multiprocessor's less what a block leaves to the system (the same table).
std::uint64_t shared_limit(int sm) {
  return sm >= 80 ? multiprocessor_shared(sm) - kReservedShared : multiprocessor_shared(sm);
}

}  // namespace

std::string_view mma_strategy_name(MmaStrategy s) {
  return kStrategyNames[static_cast<std::size_t>(s)];
}

std::optional<MmaStrategy> parse_mma_strategy(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kStrategyNames); ++i) {
    if (kStrategyNames[i] == name) return static_cast<MmaStrategy>(i);
  }
  return std::nullopt;
}

std::optional<MmaStrategy> mma_strategy_from_environment() {
  const char* value = std::getenv("IRON_CUDA_MMA");
  if (value == nullptr || *value == '\0') return std::nullopt;
  if (auto s = parse_mma_strategy(value)) return s;
  throw Error(fmt::format("IRON_CUDA_MMA={}: expected mmasync, software, wmma or wgmma", value));
}

TargetProfile TargetProfile::cuda(int sm, MmaStrategy mma) {
  IRON_INTERNAL_ASSERT(sm > 0, "a CUDA compute capability must be positive");
  IRON_INTERNAL_ASSERT(mma != MmaStrategy::Wgmma || sm == 90, "wgmma is sm_90a's alone");
  TargetProfile t;
  t.kind = TargetKind::Cuda;
  t.name = "sm_" + std::to_string(sm);
  if (mma == MmaStrategy::Wgmma) {
    t.name = kHopperProfile;
  } else if (mma != MmaStrategy::MmaSync) {
    t.name += std::string(kMmaOption) + std::string(mma_strategy_name(mma));
  }
  t.mma = mma;
  t.tensor_maps = mma == MmaStrategy::Wgmma;
  t.swizzled_shared = mma != MmaStrategy::Wmma;
  t.cuda_sm = sm;
  t.native_f16_arithmetic = sm >= 80;
  t.native_bf16_arithmetic = sm >= 80;
  t.has_bf16_type = sm >= 80;
  t.max_vector_bytes = 16;
  t.max_shared_bytes = shared_limit(sm);
  t.multiprocessor_shared_bytes = multiprocessor_shared(sm);
  t.reserved_shared_bytes = sm >= 80 ? kReservedShared : 0;
  return t;
}

TargetProfile TargetProfile::cuda_device(int sm, bool warpgroup_products) {
  const MmaStrategy fallback =
      sm == 90 && warpgroup_products ? MmaStrategy::Wgmma : MmaStrategy::MmaSync;
  const MmaStrategy asked = mma_strategy_from_environment().value_or(fallback);
  if (asked == MmaStrategy::Wgmma && sm != 90) {
    throw Error(
        fmt::format("IRON_CUDA_MMA=wgmma needs a device of compute capability 9.0 "
                    "(sm_90a); this one is {}.{}",
                    sm / 10, sm % 10));
  }
  return cuda(sm, asked);
}

namespace cuda {

Target target() {
  return {.kind = TargetKind::Cuda,
          .name = "cuda",
          .language = "CUDA C++ for NVRTC",
          .extension = ".cu",
          .default_profile = "sm_90",
          .listed_profiles = {"sm_80", "sm_90", "sm_90a"},
          .first_bf16_profile = "",
          .profile = cuda_profile,
          .emit = emit_cuda,
          .checker = "nvrtc"};
}

}  // namespace cuda
}  // namespace iron::codegen
