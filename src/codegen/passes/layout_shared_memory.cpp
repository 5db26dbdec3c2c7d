/// Shared-memory layout: 16-byte aligned offsets in declaration order (1024-byte for swizzled
/// allocations on sm_90a, whose wgmma reads the swizzle from address bits; an overlay at its
/// base's), the total, the limit, and each allocation's placement (swizzled rows only where the
/// target reads them).
#include "iron/codegen/passes/layout_shared_memory.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "iron/core/error.hpp"

namespace iron::codegen {
namespace {

constexpr std::uint64_t kAlignment = 16;
/// The period of wgmma's 128-byte swizzle: 8 rows of 128 bytes.
constexpr std::uint64_t kSwizzleAlignment = 1024;

std::uint64_t align_up(std::uint64_t bytes, std::uint64_t alignment = kAlignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

std::uint64_t alloc_bytes(const ir::SharedAlloc& a) {
  return std::uint64_t{a.size} * dtype_size(a.dtype);
}

/// Every allocation with the bytes it would occupy, for the error message.
std::string describe(const ir::Kernel& kernel, const std::vector<std::uint64_t>& offsets) {
  std::string text;
  for (std::size_t i = 0; i < kernel.shared.size(); ++i) {
    const ir::SharedAlloc& a = kernel.shared[i];
    text += fmt::format("\n  @{}: {}[{}] at bytes [{}, {})", a.name, dtype_name(a.dtype), a.size,
                        offsets[i], offsets[i] + alloc_bytes(a));
  }
  return text;
}

}  // namespace

void layout_shared_memory(ir::Kernel& kernel, const TargetProfile& target) {
  std::vector<std::uint64_t> offsets;
  std::uint64_t end = 0;
  for (const ir::SharedAlloc& a : kernel.shared) {
    if (a.overlays >= 0) {  // the base's bytes, which must hold it
      const ir::SharedAlloc& base = kernel.shared[a.overlays];
      if (alloc_bytes(a) > alloc_bytes(base)) {
        throw TargetLimitError(fmt::format(
            "kernel {}: shared {} ({}[{}], {} bytes) overlays {}, which holds {} bytes on target "
            "{}",
            kernel.name, a.name, dtype_name(a.dtype), a.size, alloc_bytes(a), base.name,
            alloc_bytes(base), target.name));
      }
      offsets.push_back(offsets[static_cast<std::size_t>(a.overlays)]);
      continue;
    }
    const bool swizzle_period = target.mma == MmaStrategy::Wgmma && a.swizzle != 0;
    offsets.push_back(align_up(end, swizzle_period ? kSwizzleAlignment : kAlignment));
    end = offsets.back() + alloc_bytes(a);
  }
  const std::uint64_t total = align_up(end);
  if (total > target.max_shared_bytes) {
    throw TargetLimitError(fmt::format(
        "kernel {}: needs {} bytes of threadgroup memory, more than the {} bytes target {} "
        "allows:{}",
        kernel.name, total, target.max_shared_bytes, target.name, describe(kernel, offsets)));
  }
  IRON_INTERNAL_ASSERT(total <= std::numeric_limits<std::uint32_t>::max(),
                       "shared-memory total does not fit 32 bits");
  for (std::size_t i = 0; i < kernel.shared.size(); ++i) {
    kernel.shared[i].offset = static_cast<std::uint32_t>(offsets[i]);
    if (!target.swizzled_shared) kernel.shared[i].swizzle = 0;
  }
  kernel.shared_bytes = static_cast<std::uint32_t>(total);
}

}  // namespace iron::codegen
