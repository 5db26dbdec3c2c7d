/// lower_warpgroup_products: a wg.mma that the target does not run as one instruction becomes,
/// for simdgroup s of the warpgroup and each 16 columns kk of K,
///
///   %a = frag 0, a, 16, 16 : T;   frag.load @A[a_offset + 16·(s % 4)·a_stride + kk], %a, a_stride,
///   row %b = frag 0, b, 16, N : T;    frag.load @B[b_offset + kk (· b_stride when row-major)], %b,
///   … frag.mma %d, %a, %b
///
/// (a row-major B wider than its stride: one load a panel, b_panel apart, each placed into %b's
/// columns slot by slot)
/// (the register form's A: columns kk … kk + 15 of the simdgroup's A fragment, moved slot by
/// slot into a 16×16 one), the same sums in the same order (the simulator's contract),
/// synchronous, so the warpgroup's
/// commits, waits, proxy fences and turns (wg.turn) have nothing left to order and are dropped
/// once no wg.mma remains. Fragments hold no 8-bit floats: a wg.mma of them that cannot run as
/// wgmma is an Error naming the op and the target.
#include "iron/codegen/passes/lower_warpgroup_products.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "iron/core/builder.hpp"
#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;
using ir::ValueId;

constexpr std::uint32_t kSwizzleRowBytes = 128;  ///< the Hopper instruction's widest swizzle
/// A row-major B's panels start on the 128-byte swizzle's 8-row atoms.
constexpr std::int64_t kPanelAlignment = 1024;

/// The Const op that defines each value, where one does.
std::unordered_map<ValueId, const ir::Op*> constants(const ir::Kernel& kernel) {
  std::unordered_map<ValueId, const ir::Op*> out;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::Const) out[op.result] = &op;
  });
  return out;
}

bool one_swizzled_row(const ir::Kernel& kernel, int alloc, ValueId stride,
                      const std::unordered_map<ValueId, const ir::Op*>& known) {
  const ir::SharedAlloc& a = kernel.shared[alloc];
  const auto c = known.find(stride);
  return a.swizzle != 0 && a.swizzle * dtype_size(a.dtype) == kSwizzleRowBytes &&
         c != known.end() && c->second->ivalue == a.swizzle;
}

/// Whether the instruction's descriptor reaches every panel of a row-major B of n columns: one
/// panel, or panels a constant whole number of 1024-byte swizzle atoms apart (its leading offset,
/// 14 bits of 16 bytes).
bool panels_addressable(const ir::Kernel& kernel, const ir::Op& op, std::uint32_t n,
                        const std::unordered_map<ValueId, const ir::Op*>& known) {
  const std::size_t element_bytes = dtype_size(kernel.shared[op.shared_b].dtype);
  if (n * element_bytes <= kSwizzleRowBytes) return true;
  const auto c = known.find(ir::WgMmaOp<const ir::Op>(op).b_panel());
  if (c == known.end()) return false;
  const std::int64_t bytes = c->second->ivalue * static_cast<std::int64_t>(element_bytes);
  return bytes > 0 && bytes % kPanelAlignment == 0 && bytes / 16 < (std::int64_t{1} << 14);
}

/// Whether the Hopper instruction reads the op's operands where they are: A in registers or in
/// 128-byte swizzled rows along K; B in such rows along K (column-major) or, row-major, along N
/// in panels of one row (its k-th row 128 bytes after the (k−1)-th; panels_addressable).
bool qualifies(const ir::Kernel& kernel, const ir::Op& op, const TargetProfile& target,
               const std::unordered_map<ValueId, const ir::Op*>& known,
               const std::unordered_map<ValueId, std::uint32_t>& columns) {
  const ir::WgMmaOp<const ir::Op> mma(op);
  const bool b_rows = mma.b_layout() == ir::MatrixLayout::RowMajor;
  const std::size_t element_bytes = dtype_size(kernel.shared[op.shared_b].dtype);
  return target.kind == TargetKind::Cuda && target.mma == MmaStrategy::Wgmma &&
         element_bytes <= 2 && target.swizzled_shared &&
         (mma.a_in_registers() || one_swizzled_row(kernel, op.shared, mma.a_stride(), known)) &&
         one_swizzled_row(kernel, op.shared_b, mma.b_stride(), known) &&
         (!b_rows || panels_addressable(kernel, op, columns.at(mma.d()), known));
}

/// Each fragment's columns (a product's N).
std::unordered_map<ValueId, std::uint32_t> fragment_columns(const ir::Kernel& kernel) {
  std::unordered_map<ValueId, std::uint32_t> out;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::FragDecl) out[op.result] = op.fragment.cols;
  });
  return out;
}

class Lowering {
 public:
  // Read before block() moves ops around: the constants and each fragment's columns.
  Lowering(ir::Kernel& kernel, const TargetProfile& target)
      : kernel_(kernel),
        target_(target),
        known_(constants(kernel)),
        fragment_cols_(fragment_columns(kernel)) {}

  /// Lowers the wg.mma ops that do not qualify; returns whether any wg.mma is left.
  bool block(ir::Block& b) {
    bool left = false;
    std::vector<ir::Op> out;
    out.reserve(b.ops.size());
    for (ir::Op& op : b.ops) {
      for (ir::Block& inner : op.blocks) left |= block(inner);
      if (op.kind == OpKind::WgMma && !qualifies(kernel_, op, target_, known_, fragment_cols_)) {
        lower(op, out);
        continue;
      }
      left |= op.kind == OpKind::WgMma;
      out.push_back(std::move(op));
    }
    b.ops = std::move(out);
    return left;
  }

 private:
  void lower(const ir::Op& op, std::vector<ir::Op>& out) {
    const ir::WgMmaOp<const ir::Op> mma(op);
    const DType u32 = DType::U32;
    const DType t = kernel_.shared[op.shared_b].dtype;
    if (is_f8(t)) {
      throw Error(fmt::format(
          "wg.mma at {}: {} operands multiply only as sm_90a's wgmma, from 128-byte swizzled rows "
          "(target {} has no 8-bit tensor-core product): convert the tiles to f16 on this "
          "target's path, as iron_gemm_fp8_nk does",
          format_loc(op.loc), dtype_name(t), target_.name));
    }
    const std::uint32_t n = fragment_cols_.at(mma.d());
    ir::Builder b(kernel_, out);
    b.at(op.loc);
    ValueId a_first = ir::kNoValue;
    if (!mma.a_in_registers()) {
      const ValueId part =
          b.make(OpKind::Rem, u32, {b.builtin(ir::Builtin::Simdgroup), b.constant(u32, 4)}).result;
      const ValueId rows = b.make(OpKind::Mul, u32, {part, b.constant(u32, 16)}).result;
      const ValueId skip = b.make(OpKind::Mul, u32, {rows, index(b, mma.a_stride())}).result;
      a_first = b.make(OpKind::Add, u32, {index(b, mma.a_offset()), skip}).result;
    }
    const bool b_rows = mma.b_layout() == ir::MatrixLayout::RowMajor;
    for (std::uint32_t kk = 0; kk < mma.k(); kk += 16) {
      const ValueId a_at = mma.a_in_registers()
                               ? ir::kNoValue
                               : b.make(OpKind::Add, u32, {a_first, b.constant(u32, kk)}).result;
      const ValueId b_step =
          b_rows ? b.make(OpKind::Mul, u32, {b.constant(u32, kk), index(b, mma.b_stride())}).result
                 : b.constant(u32, kk);
      const ValueId b_at = b.make(OpKind::Add, u32, {index(b, mma.b_offset()), b_step}).result;
      const ValueId a = fragment(b, t, {ir::FragmentRole::A, 16, 16});
      if (mma.a_in_registers()) {
        copy_columns(b, mma.a(), kk, a, t, lane_map(target_));
      } else {
        load(b, op.shared, a_at, a, mma.a_stride(), ir::MatrixLayout::RowMajor, t);
      }
      const ValueId f = fragment(b, t, {ir::FragmentRole::B, 16, n});
      const std::uint32_t width = b_rows ? panel_width(op, n) : n;
      if (width == n) {
        load(b, op.shared_b, b_at, f, mma.b_stride(), mma.b_layout(), t);
      } else {
        for (std::uint32_t c = 0; c < n; c += width) {
          const std::uint32_t which = c / width;
          const ValueId skip =
              b.make(OpKind::Mul, u32, {b.constant(u32, which), index(b, mma.b_panel())}).result;
          const ValueId at = b.make(OpKind::Add, u32, {b_at, skip}).result;
          const std::uint32_t cols = std::min(width, n - c);
          const ValueId panel = fragment(b, t, {ir::FragmentRole::B, 16, cols});
          load(b, op.shared_b, at, panel, mma.b_stride(), mma.b_layout(), t);
          place_columns(b, panel, cols, f, n, c, t, lane_map(target_));
        }
      }
      b.make(OpKind::FragMma, DType::F32, {mma.d(), a, f});
    }
  }

  /// The columns of each panel a row-major B of n columns is read in: its constant stride, or
  /// n where that is at least n or the panel stride is the constant 0 (one panel, as a product
  /// that names none). Error for another B whose stride the pass cannot know, since the panels
  /// are split here.
  std::uint32_t panel_width(const ir::Op& op, std::uint32_t n) const {
    const ir::WgMmaOp<const ir::Op> mma(op);
    const auto one_panel = known_.find(mma.b_panel());
    if (one_panel != known_.end() && one_panel->second->ivalue == 0) return n;
    const auto c = known_.find(mma.b_stride());
    if (c == known_.end()) {
      throw Error(fmt::format(
          "wg.mma at {}: a row-major B's stride must be a constant on target {}, which reads its "
          "panels apart (the panels of b_stride columns are split when the pass runs)",
          format_loc(op.loc), target_.name));
    }
    const auto stride = static_cast<std::uint32_t>(c->second->ivalue);
    return stride >= n ? n : stride;
  }

  /// The 16×cols B fragment `from` into columns col0 … of the 16×n `to`, slot by slot under the
  /// target's lane map: on both maps the lane that holds (r, c) of `from` holds (r, col0 + c) of
  /// `to` (col0 and cols multiples of 8), in a slot that depends on neither the lane nor r and c
  /// beyond the slot's own.
  static void place_columns(ir::Builder& b, ValueId from, std::uint32_t cols, ValueId to,
                            std::uint32_t n, std::uint32_t col0, DType t, ir::LaneMap map) {
    const ir::FragmentShape from_shape{ir::FragmentRole::B, 16, cols};
    const ir::FragmentShape to_shape{ir::FragmentRole::B, 16, n};
    for (std::uint32_t e = 0; e < from_shape.elements_per_lane(); ++e) {
      const ir::FragmentCoord at = ir::fragment_coord(map, from_shape, 0, e);
      ir::Op& get = b.make(OpKind::FragGet, t, {from});
      get.ivalue = e;
      b.make(OpKind::FragSet, t, {to, get.result}).ivalue =
          ir::fragment_owner(map, to_shape, at.row, at.col + col0).slot;
    }
  }

  /// Columns kk … kk + 15 of the 16×K A fragment `from` into the 16×16 `to`, slot by slot under
  /// the target's lane map: on both maps the lane that holds (r, c) of `to` holds (r, c + kk) of
  /// `from`, in a slot that depends on neither the lane nor r and c beyond the slot's own. The
  /// result is that map's alone (the simulator runs the register form unlowered).
  void copy_columns(ir::Builder& b, ValueId from, std::uint32_t kk, ValueId to, DType t,
                    ir::LaneMap map) const {
    const ir::FragmentShape to_shape{ir::FragmentRole::A, 16, 16};
    const ir::FragmentShape from_shape{ir::FragmentRole::A, 16, fragment_cols_.at(from)};
    for (std::uint32_t e = 0; e < to_shape.elements_per_lane(); ++e) {
      const ir::FragmentCoord at = ir::fragment_coord(map, to_shape, 0, e);
      ir::Op& get = b.make(OpKind::FragGet, t, {from});
      get.ivalue = ir::fragment_owner(map, from_shape, at.row, at.col + kk).slot;
      b.make(OpKind::FragSet, t, {to, get.result}).ivalue = e;
    }
  }

  /// The lane map of the target's fragments: Metal's 8×8 simdgroup matrices, else m16n8k16.
  static ir::LaneMap lane_map(const TargetProfile& target) {
    return target.kind == TargetKind::Msl ? ir::LaneMap::Simdgroup8x8 : ir::LaneMap::Mma;
  }

  /// `v` as a u32 (offsets and strides may be any integer type).
  static ValueId index(ir::Builder& b, ValueId v) {
    return b.make(OpKind::Cast, DType::U32, {v}).result;
  }

  static ValueId fragment(ir::Builder& b, DType t, const ir::FragmentShape& shape) {
    ir::Op& decl = b.make(OpKind::FragDecl, t, {b.constant(t, 0.0)});
    decl.fragment = shape;
    return decl.result;
  }

  static void load(ir::Builder& b, int alloc, ValueId offset, ValueId f, ValueId stride,
                   ir::MatrixLayout layout, DType t) {
    ir::Op& op = b.make(OpKind::FragLoad, t, {offset, f, stride});
    op.shared = alloc;
    op.layout = layout;
  }

  ir::Kernel& kernel_;
  const TargetProfile& target_;
  std::unordered_map<ValueId, const ir::Op*> known_;
  const std::unordered_map<ValueId, std::uint32_t> fragment_cols_;
};

void drop_turns(ir::Block& b) {
  std::erase_if(b.ops, [](const ir::Op& op) { return op.kind == OpKind::WgTurn; });
  for (ir::Op& op : b.ops) {
    for (ir::Block& inner : op.blocks) drop_turns(inner);
  }
}

void drop_warpgroup_ordering(ir::Block& b) {
  std::erase_if(b.ops, [](const ir::Op& op) {
    return op.kind == OpKind::WgCommit || op.kind == OpKind::WgWait ||
           op.kind == OpKind::FenceProxyAsync || op.kind == OpKind::WgTurn;
  });
  for (ir::Op& op : b.ops) {
    for (ir::Block& inner : op.blocks) drop_warpgroup_ordering(inner);
  }
}

}  // namespace

bool runs_as_wgmma(const ir::Kernel& kernel, const ir::Op& op, const TargetProfile& target) {
  return op.kind == OpKind::WgMma &&
         qualifies(kernel, op, target, constants(kernel), fragment_columns(kernel));
}

bool has_warpgroup_products(const ir::Kernel& kernel) {
  bool any = false;
  ir::walk(kernel.body, [&](const ir::Op& op) { any |= op.kind == OpKind::WgMma; });
  return any;
}

void lower_warpgroup_products(ir::Kernel& kernel, const TargetProfile& target) {
  if (!has_warpgroup_products(kernel)) {
    drop_turns(kernel.body);  // nothing to take turns at
    return;
  }
  if (!Lowering(kernel, target).block(kernel.body)) drop_warpgroup_ordering(kernel.body);
}

}  // namespace iron::codegen
