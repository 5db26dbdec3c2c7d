/// The wmma strategy's spellings: held fragments are iron_wmma tiles, their ops the
/// iron_wmma_* helpers (cuda_wmma_helpers.cpp), and each warp's scratch tile is declared where
/// the kernel's body opens.
#include "cuda_wmma.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "../c_like/kernel_abi.hpp"
#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"

namespace iron::codegen::cuda {
namespace {

constexpr std::uint32_t kTile = 16;
constexpr std::uint32_t kSlotsPerTile = kTile * kTile / 32;
constexpr const char* kScratch = "iron_wmma_scratch";
constexpr const char* kSlots = "iron_wmma_where";

/// Every fragment's declaration, by the value it declares.
std::map<ir::ValueId, const ir::Op*> fragment_declarations(const ir::Kernel& kernel) {
  std::map<ir::ValueId, const ir::Op*> declared;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::FragDecl) declared[op.result] = &op;
  });
  return declared;
}

bool is_operand(ir::FragmentRole role) { return role != ir::FragmentRole::Acc; }

const char* boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

bool wmma_fits(const ir::Kernel& kernel) {
  const auto declared = fragment_declarations(kernel);
  bool fits = true;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::FragDecl && is_operand(op.fragment.role)) {
      const bool sixteen_bits = op.type == DType::F16 || op.type == DType::BF16;
      fits = fits && sixteen_bits && op.fragment.cols % kTile == 0;
    }
    const bool by_slot = op.kind == ir::OpKind::FragGet || op.kind == ir::OpKind::FragSet ||
                         op.kind == ir::OpKind::FragCoord;
    if (by_slot) {
      const auto at = declared.find(ir::FragSlotOp(op).fragment());
      fits = fits && at != declared.end() && !is_operand(at->second->fragment.role);
    }
  });
  return fits;
}

bool wmma_holds(const ir::FragmentShape& shape) {
  return is_operand(shape.role) || shape.cols % kTile == 0;
}

void wmma_kernel_needs(const ir::Kernel& kernel, c_like::Needs& needs) {
  const auto declared = fragment_declarations(kernel);
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::FragRowValue) return;
    const auto at = declared.find(ir::FragSlotOp(op).fragment());
    if (at != declared.end() && wmma_holds(at->second->fragment)) {
      needs.helpers.insert("iron_wmma_row_value");
      needs.helpers.insert("iron_wmma_acc_slots");
    }
  });
}

bool uses_wmma(const c_like::Needs& needs) {
  return std::any_of(needs.helpers.begin(), needs.helpers.end(),
                     [](const std::string& h) { return h.starts_with("iron_wmma"); });
}

std::string wmma_prologue(const ir::Kernel& kernel, const c_like::Needs& needs) {
  static constexpr std::string_view kScratchUsers[] = {"iron_wmma_load", "iron_wmma_store",
                                                       "iron_wmma_row_reduce", "iron_wmma_convert",
                                                       "iron_wmma_acc_slots"};
  const bool scratch =
      std::any_of(std::begin(kScratchUsers), std::end(kScratchUsers),
                  [&](std::string_view h) { return needs.helpers.contains(std::string(h)); });
  if (!scratch) return {};
  const std::uint32_t warps = (c_like::group_size_bound(kernel) + 31) / 32;
  std::string text = fmt::format(
      "  // Each warp's 16×16 scratch tile, through which wmma tiles pass where layout matters.\n"
      "  __shared__ __align__(32) float iron_wmma_tiles[{}][256];\n"
      "  float* const {} = iron_wmma_tiles[iron_linear_thread() >> 5];\n",
      warps, kScratch);
  if (needs.helpers.contains("iron_wmma_acc_slots")) {
    text += fmt::format(
        "  // Each thread's accumulator slot positions, read once.\n"
        "  __shared__ unsigned char iron_wmma_slot_table[{}][8];\n"
        "  unsigned char* const {} = iron_wmma_slot_table[iron_linear_thread()];\n"
        "  iron_wmma_acc_slots({}, {});\n",
        warps * 32, kSlots, kScratch, kSlots);
  }
  return text;
}

bool wmma_row_major_b(const ir::Kernel& kernel) {
  const auto declared = fragment_declarations(kernel);
  bool rows = false;
  bool columns = false;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::FragLoad) return;
    const auto at = declared.find(ir::FragAccessOp(op).fragment());
    if (at == declared.end() || at->second->fragment.role != ir::FragmentRole::B) return;
    (op.layout == ir::MatrixLayout::RowMajor ? rows : columns) = true;
  });
  return rows && !columns;
}

std::vector<std::string> wmma_declaration(const std::string& name, const ir::FragmentShape& shape,
                                          const std::string& type, const std::string& init,
                                          bool row_major_b, c_like::Needs& needs) {
  constexpr int kRowMajorB = 3;  // iron_wmma's role of a B held in row-major tiles
  const bool b_rows = row_major_b && shape.role == ir::FragmentRole::B;
  needs.helpers.insert("iron_wmma_fill");
  return {
      fmt::format("iron_wmma<{}, {}, {}, {}> {};", type,
                  b_rows ? kRowMajorB : static_cast<int>(shape.role), shape.rows, shape.cols, name),
      fmt::format("iron_wmma_fill({}, {});", name, init)};
}

std::string wmma_access(const c_like::FragmentAccess& f, c_like::Needs& needs) {
  IRON_INTERNAL_ASSERT(f.swizzle_row_shift == 0,
                       "a swizzled tile reached wmma: its profile keeps shared rows in order");
  const bool col = f.layout == ir::MatrixLayout::ColMajor;
  const std::string helper = !f.store                   ? "iron_wmma_load"
                             : is_operand(f.shape.role) ? "iron_wmma_store_operand"
                                                        : "iron_wmma_store";
  needs.helpers.insert(f.store ? "iron_wmma_store" : "iron_wmma_load");
  const std::string window =
      f.window_cols == 0 ? "" : fmt::format(", {}, {}", f.window_first, f.window_cols);
  return fmt::format("{}<{}{}>({}, {}, {}, {}, {});", helper, boolean(col), window, f.fragment,
                     f.base, f.offset, f.stride, kScratch);
}

std::string wmma_product(const c_like::FragmentProduct& p, c_like::Needs& needs) {
  needs.helpers.insert("iron_wmma_mma");
  return fmt::format("iron_wmma_mma({}, {}, {});", p.d, p.a, p.b);
}

std::string wmma_element(const std::string& name, std::uint32_t slot) {
  return fmt::format("{}.t[{}].x[{}]", name, slot / kSlotsPerTile, slot % kSlotsPerTile);
}

std::string wmma_coord(const ir::FragmentShape& shape, std::uint32_t slot, bool column,
                       c_like::Needs& needs) {
  needs.helpers.insert("iron_wmma_acc_slots");
  return fmt::format("iron_wmma_coord<{}, {}>({}, {})", shape.cols, boolean(column), kSlots, slot);
}

std::string wmma_row_value(const std::string& rows, const ir::FragmentShape& shape,
                           std::uint32_t slot) {
  return fmt::format("iron_wmma_row_value({}, iron_wmma_coord<{}, false>({}, {}))", rows,
                     shape.cols, kSlots, slot);
}

std::string wmma_row_reduce(const std::string& rows, const std::string& source,
                            ir::RowReduction reduction, c_like::Needs& needs) {
  needs.helpers.insert("iron_wmma_row_reduce");
  return fmt::format("iron_wmma_row_reduce<{}>({}, {}, {});",
                     boolean(reduction == ir::RowReduction::Sum), rows, source, kScratch);
}

std::string wmma_convert(const std::string& a, const std::string& source, c_like::Needs& needs) {
  needs.helpers.insert("iron_wmma_convert");
  return fmt::format("iron_wmma_convert({}, {}, {});", a, source, kScratch);
}

}  // namespace iron::codegen::cuda
