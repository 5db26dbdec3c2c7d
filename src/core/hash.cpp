/// Structural hash of a kernel: FNV-1a over everything the text form shows, except source
/// locations, with value ids renumbered in definition order.
#include "iron/core/hash.hpp"

#include <bit>
#include <cmath>
#include <string_view>
#include <unordered_map>

namespace iron::ir {
namespace {

class Hasher {
 public:
  explicit Hasher(const Kernel& k) : k_(k) {}

  std::uint64_t run() {
    number(k_.body);
    str(k_.name);
    u64(static_cast<std::uint64_t>(k_.dtype));
    u64(static_cast<std::uint64_t>(k_.dispatch.mode));
    u64(k_.params.size());
    for (const Param& p : k_.params) {
      str(p.name);
      u64(static_cast<std::uint64_t>(p.kind));
      u64(static_cast<std::uint64_t>(p.dtype));
    }
    u64(k_.shared.size());
    for (const SharedAlloc& s : k_.shared) {
      str(s.name);
      u64(static_cast<std::uint64_t>(s.dtype));
      u64(s.size);
      u64(s.offset);
      u64(s.ring ? 1 : 0);
      u64(s.swizzle);
      u64(static_cast<std::uint64_t>(s.overlays) + 1);  // -1 (none) is 0
    }
    u64(k_.shared_bytes);
    u64(k_.tensor_maps.size());
    for (const TensorMap& m : k_.tensor_maps) {
      u64(static_cast<std::uint64_t>(m.param));
      for (const SizeExpr* e : {&m.base, &m.height, &m.width}) size(*e);
      u64(m.box_rows);
      u64(m.box_cols);
      u64(m.swizzle);
      if (m.box_width != 0) {  // an image map; a matrix map's hash stays what it was
        for (const SizeExpr* e : {&m.images, &m.image_width}) size(*e);
        u64(m.box_width);
      }
    }
    u64(k_.dispatch.group_size_rules.size());
    for (const SizeRule& r : k_.dispatch.group_size_rules) rule(r);
    u64(k_.dispatch.grid_rules.size());
    for (const GridRule& r : k_.dispatch.grid_rules) {
      u64(r.axis);
      u64(static_cast<std::uint64_t>(r.relation));
      size(r.bound);
    }
    u64(k_.dispatch.layouts.size());
    for (const TensorLayout& l : k_.dispatch.layouts) {
      str(l.param);
      u64(l.exact);
      u64(l.dims.size());
      for (const SizeExpr& d : l.dims) size(d);
    }
    u64(k_.dispatch.constexpr_rules.size());
    for (const ConstexprRule& r : k_.dispatch.constexpr_rules) {
      str(r.constexpr_name);
      u64(static_cast<std::uint64_t>(r.multiple));
    }
    u64(k_.dispatch.constexpr_bounds.size());
    for (const ConstexprBound& b : k_.dispatch.constexpr_bounds) {
      str(b.constexpr_name);
      u64(static_cast<std::uint64_t>(b.relation));
      size(b.bound);
    }
    u64(k_.dispatch.occupancy);
    block(k_.body);
    return h_;
  }

 private:
  /// Gives every defined value its position in definition order.
  void number(const Block& b) {
    walk(b, [&](const Op& op) {
      if (op.result != kNoValue) canonical_.emplace(op.result, canonical_.size());
    });
  }

  void byte(std::uint8_t b) {
    h_ ^= b;
    h_ *= 0x100000001b3ull;
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void str(std::string_view s) {
    u64(s.size());
    for (char c : s) byte(static_cast<std::uint8_t>(c));
  }

  /// A defined value by its canonical number; an undefined one (malformed IR) by its raw id.
  void value(ValueId id) {
    const auto it = canonical_.find(id);
    u64(it != canonical_.end() ? it->second : (std::uint64_t{1} << 63) | id);
  }

  void rule(const SizeRule& r) {
    u64(static_cast<std::uint64_t>(r.kind));
    if (r.kind == SizeRule::Kind::PowerOfTwo) return;
    str(r.constexpr_name);
    u64(static_cast<std::uint64_t>(r.constexpr_name.empty() ? r.value : r.divisor));
  }

  void size(const SizeExpr& e) {
    u64(static_cast<std::uint64_t>(e.kind));
    u64(static_cast<std::uint64_t>(e.value));
    str(e.name);
    u64(e.axis);
    u64(e.args.size());
    for (const SizeExpr& a : e.args) size(a);
  }

  /// The parameter or shared allocation an op refers to (-1 for none).
  void target(const Op& op) {
    u64(static_cast<std::uint64_t>(op.param));
    u64(static_cast<std::uint64_t>(op.shared));
  }

  /// What an op holds besides its operands: a constant's value, a builtin, a lane, the
  /// parameter or allocation it reads or writes.
  void attributes(const Op& op) {
    switch (op_attributes(op.kind)) {
      case OpAttributes::None:
        return;
      case OpAttributes::Literal:
        if (!is_float(op.type)) {
          u64(static_cast<std::uint64_t>(op.ivalue));
        } else {
          u64(std::isnan(op.fvalue) ? 0x7ff8000000000000ull
                                    : std::bit_cast<std::uint64_t>(op.fvalue));
        }
        return;
      case OpAttributes::Builtin:
        u64(static_cast<std::uint64_t>(op.builtin));
        u64(op.axis);
        return;
      case OpAttributes::Lane:
      case OpAttributes::Count:
      case OpAttributes::Reduction:
        u64(static_cast<std::uint64_t>(op.ivalue));
        return;
      case OpAttributes::Constexpr:
      case OpAttributes::Tensor:
      case OpAttributes::Shared:
      case OpAttributes::TensorOrShared:
        target(op);
        return;
      case OpAttributes::Fragment:
        u64(static_cast<std::uint64_t>(op.fragment.role));
        u64(op.fragment.rows);
        u64(op.fragment.cols);
        return;
      case OpAttributes::AsyncCopy:
        target(op);
        return;
      case OpAttributes::Pending:
      case OpAttributes::Threads:
      case OpAttributes::FragmentSlot:
      case OpAttributes::StageIndex:
      case OpAttributes::RegisterBudget:
      case OpAttributes::Turn:
        u64(static_cast<std::uint64_t>(op.ivalue));
        u64(op.axis);
        return;
      case OpAttributes::Stages:
        u64(static_cast<std::uint64_t>(op.ivalue));
        u64(op.axis);
        u64(op.consumers);
        return;
      case OpAttributes::FragmentMemory:
        target(op);
        u64(static_cast<std::uint64_t>(op.layout));
        return;
      case OpAttributes::WarpgroupOperands:
        target(op);
        u64(static_cast<std::uint64_t>(op.shared_b));
        u64(static_cast<std::uint64_t>(op.layout));
        u64(static_cast<std::uint64_t>(op.ivalue));
        return;
      case OpAttributes::WarpgroupPending:
      case OpAttributes::Feature:
        u64(static_cast<std::uint64_t>(op.ivalue));
        return;
      case OpAttributes::TileBox:
        target(op);
        u64(op.fragment.rows);
        u64(op.fragment.cols);
        if (op.ivalue != 0) u64(static_cast<std::uint64_t>(op.ivalue));  // an image's box width
        return;
      case OpAttributes::TensorBox:
        target(op);
        u64(static_cast<std::uint64_t>(op.shared_b));
        u64(static_cast<std::uint64_t>(op.ivalue));
        if (op.axis != 0) u64(op.axis);  // an image map's copy
        return;
      case OpAttributes::Barrier:
        target(op);
        u64(static_cast<std::uint64_t>(op.shared_b));
        u64(static_cast<std::uint64_t>(op.ivalue));
        return;
    }
  }

  void block(const Block& b) {
    u64(b.ops.size());
    for (const Op& op : b.ops) this->op(op);
  }

  void op(const Op& op) {
    u64(static_cast<std::uint64_t>(op.kind));
    if (op_has_type(op.kind) && op.kind != OpKind::If) {
      u64(static_cast<std::uint64_t>(op.type));
    }
    u64(op.lanes);
    u64(op.result != kNoValue);
    if (op.result != kNoValue) value(op.result);
    u64(op.args.size());
    for (ValueId a : op.args) value(a);
    attributes(op);
    if (op.kind == OpKind::For) u64(static_cast<std::uint64_t>(op.ivalue));  // rolled
    u64(op.blocks.size());
    for (const Block& b : op.blocks) block(b);
  }

  const Kernel& k_;
  std::unordered_map<ValueId, std::uint64_t> canonical_;
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace

std::uint64_t structural_hash(const Kernel& kernel) { return Hasher(kernel).run(); }

}  // namespace iron::ir
