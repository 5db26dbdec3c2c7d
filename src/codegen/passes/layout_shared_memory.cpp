/// Shared-memory layout: 16-byte aligned offsets in declaration order (1024-byte for swizzled
/// allocations on sm_90a, whose wgmma reads the swizzle from address bits; an overlay at its
/// base's where it fits there, else bytes of its own), the total, the limit, and each allocation's
/// placement (swizzled rows only where the target reads them). On CUDA, where the memory is one
/// block of bytes at offsets (dynamic shared memory), allocations used only on opposite sides of a
/// launch-constant branch (an `if` on a value computed from constants and constexprs alone,
/// ir::LaunchConstants: every thread of a launch takes the same side) share bytes, so a kernel that
/// holds both sides of its specializations (the unbound form: AOT bundles, `iron build`) needs only
/// the larger.
#include "iron/codegen/passes/layout_shared_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "iron/core/error.hpp"
#include "iron/core/specialization.hpp"

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

/// A side of a launch-constant branch: the `if` op and 0 (then) or 1 (else).
struct Side {
  const ir::Op* branch = nullptr;
  int side = 0;
  bool operator==(const Side&) const = default;
};

/// For each allocation (an overlay's uses counted as its base's), the innermost sides of
/// launch-constant branches that hold all its uses, outermost first; empty for none (or unused).
class BranchSides {
 public:
  explicit BranchSides(const ir::Kernel& kernel)
      : kernel_(kernel),
        constants_(kernel),
        sides_(kernel.shared.size()),
        used_(kernel.shared.size(), false) {
    visit(kernel.body);
  }
  /// Whether a launch never uses both: some branch holds each on its own side.
  bool exclusive(std::size_t a, std::size_t b) const {
    const auto& x = sides_[a];
    const auto& y = sides_[b];
    for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
      if (x[i].branch != y[i].branch) return false;
      if (x[i].side != y[i].side) return true;
    }
    return false;
  }

 private:
  void visit(const ir::Block& block) {
    for (const ir::Op& op : block.ops) {
      use(op.shared);
      use(op.shared_b);
      const bool launch_constant =
          op.kind == ir::OpKind::If && !op.args.empty() && constants_.contains(op.args[0]);
      for (std::size_t b = 0; b < op.blocks.size(); ++b) {
        if (launch_constant) path_.push_back({&op, static_cast<int>(b)});
        visit(op.blocks[b]);
        if (launch_constant) path_.pop_back();
      }
    }
  }
  void use(int alloc) {
    if (alloc < 0) return;
    const ir::SharedAlloc& a = kernel_.shared[static_cast<std::size_t>(alloc)];
    const auto at = static_cast<std::size_t>(overlay_in_base(kernel_, a) ? a.overlays : alloc);
    if (!used_[at]) {
      used_[at] = true;
      sides_[at] = path_;
      return;
    }
    auto& sides = sides_[at];
    std::size_t common = 0;
    while (common < sides.size() && common < path_.size() && sides[common] == path_[common]) {
      ++common;
    }
    sides.resize(common);
  }

  const ir::Kernel& kernel_;
  ir::LaunchConstants constants_;
  std::vector<Side> path_;
  std::vector<std::vector<Side>> sides_;
  std::vector<bool> used_;
};

/// Each allocation's offset (an overlay that fits in its base at its base's), and the total: past
/// every earlier allocation that a launch may use beside it (every one, unless `sides` says
/// otherwise).
struct Placement {
  std::vector<std::uint64_t> offsets;
  std::uint64_t total = 0;
};

Placement place(const ir::Kernel& kernel, const TargetProfile& target, const BranchSides* sides) {
  Placement out;
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < kernel.shared.size(); ++i) {
    const ir::SharedAlloc& a = kernel.shared[i];
    if (overlay_in_base(kernel, a)) {
      out.offsets.push_back(out.offsets[static_cast<std::size_t>(a.overlays)]);
      continue;
    }
    const bool swizzle_period = target.mma == MmaStrategy::Wgmma && a.swizzle != 0;
    std::uint64_t after = 0;
    for (std::size_t j = 0; j < i; ++j) {
      const ir::SharedAlloc& b = kernel.shared[j];
      if (overlay_in_base(kernel, b) || (sides != nullptr && sides->exclusive(i, j))) continue;
      after = std::max(after, out.offsets[j] + alloc_bytes(b));
    }
    out.offsets.push_back(align_up(after, swizzle_period ? kSwizzleAlignment : kAlignment));
    end = std::max(end, out.offsets.back() + alloc_bytes(a));
  }
  out.total = align_up(end);
  return out;
}

/// The placement on `target`. Allocations sharing bytes are views at offsets into one block,
/// which CUDA declares for dynamic shared memory only (static memory is one array an
/// allocation): past the static limit, the two sides of launch-constant branches share bytes,
/// and the total stays past it. Metal keeps an array an allocation unless they would not fit its
/// threadgroup memory; then the sides share bytes of one block (the MSL emitter declares views).
Placement layout_for(const ir::Kernel& kernel, const TargetProfile& target) {
  Placement placed = place(kernel, target, nullptr);
  if (target.kind == TargetKind::Cuda && uses_dynamic_shared(placed.total)) {
    const BranchSides sides(kernel);
    placed = place(kernel, target, &sides);
    placed.total = std::max(placed.total, align_up(kCudaStaticSharedBytes + 1));
  } else if (target.kind == TargetKind::Msl && placed.total > target.max_shared_bytes) {
    const BranchSides sides(kernel);
    placed = place(kernel, target, &sides);
  }
  return placed;
}

}  // namespace

bool overlay_in_base(const ir::Kernel& kernel, const ir::SharedAlloc& a) {
  return a.overlays >= 0 &&
         alloc_bytes(a) <= alloc_bytes(kernel.shared[static_cast<std::size_t>(a.overlays)]);
}

bool allocations_share_bytes(const ir::Kernel& kernel) {
  for (std::size_t i = 0; i < kernel.shared.size(); ++i) {
    const ir::SharedAlloc& a = kernel.shared[i];
    for (std::size_t j = i + 1; j < kernel.shared.size(); ++j) {
      const ir::SharedAlloc& b = kernel.shared[j];
      if (overlay_in_base(kernel, a) || overlay_in_base(kernel, b)) continue;
      if (a.offset < b.offset + alloc_bytes(b) && b.offset < a.offset + alloc_bytes(a)) {
        return true;
      }
    }
  }
  return false;
}

std::uint64_t cuda_shared_footprint(const ir::Kernel& kernel) {
  return layout_for(kernel, TargetProfile::cuda(90)).total;
}

void layout_shared_memory(ir::Kernel& kernel, const TargetProfile& target) {
  const Placement placed = layout_for(kernel, target);
  const std::vector<std::uint64_t>& offsets = placed.offsets;
  const std::uint64_t total = placed.total;
  if (total > target.max_shared_bytes) {
    throw TargetLimitError(fmt::format(
        "kernel {}: needs {} bytes of threadgroup memory, more than the {} bytes target {} "
        "allows:{}",
        kernel.name, total, target.max_shared_bytes, target.name, describe(kernel, offsets)));
  }
  IRON_INTERNAL_ASSERT(total <= std::numeric_limits<std::uint32_t>::max(),
                       "shared-memory total does not fit 32 bits");
  for (std::size_t i = 0; i < kernel.shared.size(); ++i) {
    ir::SharedAlloc& a = kernel.shared[i];
    if (a.overlays >= 0 && !overlay_in_base(kernel, a)) a.overlays = -1;  // bytes of its own
    a.offset = static_cast<std::uint32_t>(offsets[i]);
    if (!target.swizzled_shared) a.swizzle = 0;
  }
  kernel.shared_bytes = static_cast<std::uint32_t>(total);
}

}  // namespace iron::codegen
