/// The IR builder: fresh values, locations and nested blocks of new ops, from the op table.
#include "iron/core/builder.hpp"

#include <utility>

#include "iron/core/error.hpp"

namespace iron::ir {

Builder::Builder(Kernel& kernel, std::vector<Op>& ops) : Builder(kernel, ops, ops.size()) {}

Builder::Builder(Kernel& kernel, std::vector<Op>& ops, std::size_t index)
    : kernel_(kernel), ops_(ops), index_(index) {
  IRON_INTERNAL_ASSERT(index <= ops.size(), "builder insertion point past the end of its block");
}

Builder& Builder::at(SourceLoc loc) {
  loc_ = std::move(loc);
  return *this;
}

ValueId Builder::fresh_value() { return kernel_.num_values++; }

Op& Builder::make(OpKind kind, DType type, std::vector<ValueId> args) {
  Op op;
  op.kind = kind;
  op.type = type;
  if (op_info(kind).result != ResultRule::Forbidden) op.result = fresh_value();
  op.args = std::move(args);
  op.blocks.resize(op_info(kind).blocks);
  op.loc = loc_;
  return insert(std::move(op));
}

ValueId Builder::constant(DType type, double value) {
  Op& op = make(OpKind::Const, type);
  if (is_float(type)) {
    op.fvalue = value;
  } else {
    op.ivalue = static_cast<std::int64_t>(value);
  }
  return op.result;
}

ValueId Builder::builtin(Builtin which, std::uint8_t axis) {
  Op& op = make(OpKind::Builtin, DType::U32);
  op.builtin = which;
  op.axis = axis;
  return op.result;
}

Op& Builder::loop(ValueId start, ValueId end, ValueId step, DType type) {
  return make(OpKind::For, type, {start, end, step});
}

Op& Builder::branch(ValueId condition) { return make(OpKind::If, DType::Bool, {condition}); }

Op& Builder::insert(Op op) {
  const auto at = ops_.insert(ops_.begin() + static_cast<std::ptrdiff_t>(index_), std::move(op));
  ++index_;
  return *at;
}

Op& Builder::copy(const Op& op, std::unordered_map<ValueId, ValueId>& renamed) {
  Op& copied = insert(op);
  renumber(copied, renamed);
  return copied;
}

void Builder::renumber(Op& op, std::unordered_map<ValueId, ValueId>& renamed) {
  for (ValueId& a : op.args) {
    if (const auto it = renamed.find(a); it != renamed.end()) a = it->second;
  }
  if (op.result != kNoValue) {
    const ValueId fresh = fresh_value();
    renamed[op.result] = fresh;
    op.result = fresh;
  }
  for (Block& nested : op.blocks) {
    for (Op& inner : nested.ops) renumber(inner, renamed);
  }
}

}  // namespace iron::ir
