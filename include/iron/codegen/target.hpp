/// Target profiles: what the emitted code may assume about the device it runs on, and the list
/// of emitting targets each profile belongs to.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iron::codegen {

// X(Enum, folder): one row per emitting target. Its folder src/codegen/<folder>/ holds the
// dialect, the emitter and `Target <folder>::target()`, the target's registry entry (see
// iron/codegen/targets.hpp); the row makes the TargetKind enumerator and lists the entry.
#define IRON_TARGETS(X) \
  X(Cuda, cuda)         \
  X(Msl, msl)

/// Which emitting target a profile belongs to: the index of its entry in targets().
enum class TargetKind : std::uint8_t {
#define IRON_X(e, folder) e,
  IRON_TARGETS(IRON_X)
#undef IRON_X
};

/// How CUDA lowers tensor-core fragment ops (docs/tensor-cores.md): `mma.sync.m16n8k16` with
/// `ldmatrix` for f16/bf16 (f32 fragments always go the software way); software: the same
/// lane map, products summed by warp shuffles and fma, for any element type and device; wmma:
/// nvcuda::wmma 16×16×16 tiles, whose layout it reads at run time instead of assuming it; or
/// wgmma (sm_90a only): fragments as mma.sync, warpgroup products (wg.mma) by Hopper's
/// asynchronous `wgmma.mma_async`.
enum class MmaStrategy : std::uint8_t { MmaSync, Software, Wmma, Wgmma };
std::string_view mma_strategy_name(MmaStrategy s);
std::optional<MmaStrategy> parse_mma_strategy(std::string_view name);
/// The strategy the environment asks for: IRON_CUDA_MMA=mmasync|software|wmma, nullopt when it
/// is unset; an iron::Error names a value it does not know.
std::optional<MmaStrategy> mma_strategy_from_environment();

/// CUDA's limit on a block's static __shared__ memory. A kernel that needs more declares its
/// shared memory dynamically (`extern __shared__`) and is launched with that many bytes after
/// opting in with cuFuncSetAttribute, up to the device's per-block limit.
inline constexpr std::uint64_t kCudaStaticSharedBytes = std::uint64_t{48} * 1024;
/// Metal's threadgroup memory a group (every Metal profile); every CUDA profile has more.
inline constexpr std::uint64_t kMetalSharedBytes = std::uint64_t{32} * 1024;
/// Whether a CUDA kernel lowered by the pipeline (its shared memory laid out) is one of those.
inline bool uses_dynamic_shared(std::uint64_t shared_bytes) {
  return shared_bytes > kCudaStaticSharedBytes;
}

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
  /// Shared memory one multiprocessor holds for all its resident groups, and what each group
  /// leaves to the system (CUDA: 228 KB and 1 KB on sm_90); 0 where groups share nothing that
  /// the compiler plans for (Metal).
  std::uint64_t multiprocessor_shared_bytes = 0;
  std::uint64_t reserved_shared_bytes = 0;
  MmaStrategy mma = MmaStrategy::MmaSync;  ///< CUDA: how fragment ops are lowered
  /// copy.async runs in the background (CUDA's cp.async); Metal's are plain loads and stores, so
  /// a pipeline there gains nothing from more than one stage.
  bool async_copies = true;
  /// Shared allocations asking for swizzled rows get them (ir::SharedAlloc::swizzle). False where
  /// fragments are read with a fixed row stride (Metal's simdgroup_load, CUDA's wmma): those keep
  /// the elements in order.
  bool swizzled_shared = true;
  /// A pipeline's tile copies run as Hopper's tensor-memory-accelerator copies on an mbarrier
  /// ring, with tensor maps the host encodes at launch (sm_90a). Off where the launcher cannot
  /// make them: the simulator, AOT bundles.
  bool tensor_maps = false;
  /// The values of the kernel's bindable specializations (iron/core/specialization.hpp) this
  /// code is for, which a launch computes from its constexpr arguments; empty: none bound, each
  /// specialization is its condition.
  std::vector<bool> specialization;

  /// CUDA C++ for compute capability `sm` × 10 (defined in src/codegen/cuda/), its fragments
  /// lowered with `mma`: named "sm_90", or "sm_90+mma=software" (or "+mma=wmma") for another
  /// strategy; wgmma is "sm_90a", whose code runs on compute capability 9.0 only (sm must be 90).
  static TargetProfile cuda(int sm, MmaStrategy mma = MmaStrategy::MmaSync);
  /// The profile a kernel is compiled with for a CUDA device of compute capability `sm` × 10:
  /// the strategy IRON_CUDA_MMA names; else, for a kernel with `warpgroup_products` on 9.0,
  /// wgmma (sm_90a); else mma.sync. Kernels without them keep plain sm_90 code.
  static TargetProfile cuda_device(int sm, bool warpgroup_products = false);
  /// Whether the code uses architecture-specific features ("sm_90a"): NVRTC compiles it for that
  /// architecture, and it runs on that compute capability only.
  bool arch_specific() const { return kind == TargetKind::Cuda && mma == MmaStrategy::Wgmma; }
  /// Metal Shading Language `version` × 10, 3.0 to 3.2 (defined in src/codegen/msl/).
  static TargetProfile metal(int version);
  /// The most shared memory a group may take so that `groups` of them fit on a multiprocessor
  /// (occupancy(groups)): max_shared_bytes for one, or where the multiprocessor's is unknown.
  std::uint64_t shared_bytes_for(std::uint32_t groups) const {
    if (groups <= 1 || multiprocessor_shared_bytes == 0) return max_shared_bytes;
    const std::uint64_t share = multiprocessor_shared_bytes / groups;
    return share > reserved_shared_bytes ? std::min(max_shared_bytes, share - reserved_shared_bytes)
                                         : 0;
  }
  /// The profile of any target that `name` spells ("sm_90", "metal3.1"); nullopt for none.
  static std::optional<TargetProfile> by_name(std::string_view name);
  /// Each target's default profile, in target order: sm_90 and metal3.1.
  static std::vector<TargetProfile> defaults();
};

}  // namespace iron::codegen
