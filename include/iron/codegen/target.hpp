/// Target profiles: what the emitted code may assume about the device it runs on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iron::codegen {

enum class TargetKind : std::uint8_t { Cuda, Msl };

struct TargetProfile {
  TargetKind kind = TargetKind::Cuda;
  std::string name;                     ///< "sm_90", "sm_80", "metal3.1", "metal3.0"
  int cuda_sm = 0;                      ///< compute capability × 10 (90 for sm_90); 0 for Metal
  int metal_version = 0;                ///< language version × 10 (31 for Metal 3.1); 0 for CUDA
  bool native_f16_arithmetic = true;    ///< f16 + - * / without widening to f32
  bool native_bf16_arithmetic = true;   ///< bf16 + - * / without widening to f32
  bool has_bf16_type = true;            ///< the language has a bf16 storage type
  std::uint32_t max_vector_bytes = 16;  ///< widest single load or store
  std::uint64_t max_shared_bytes = std::uint64_t{48} * 1024;

  static TargetProfile cuda(int sm);
  static TargetProfile metal(int version);
  /// "sm_N" for N >= 80, "metal3.0", "metal3.1", "metal3.2"; nullopt for anything else.
  static std::optional<TargetProfile> by_name(std::string_view name);
  /// The profiles `iron build` emits for by default: sm_90 and metal3.1.
  static std::vector<TargetProfile> defaults();
};

}  // namespace iron::codegen
