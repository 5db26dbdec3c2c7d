/// Value naming for the C-like emitters: literals for constants, `vN` for everything else.
#include "values.hpp"

#include <algorithm>

#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"
#include "literals.hpp"

namespace iron::codegen::c_like {

Values::Values(const ir::Kernel& kernel, const Dialect& dialect, Needs& needs)
    : info_(kernel.num_values) {
  std::vector<const ir::Op*> ops;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    ops.push_back(&op);
    for (std::size_t i = 0; i < op.args.size(); ++i) {
      IRON_INTERNAL_ASSERT(op.args[i] < info_.size(), "value id out of range");
      if (!is_variable_target(op, i)) ++info_[op.args[i]].uses;
    }
    if (op.result == ir::kNoValue) return;
    IRON_INTERNAL_ASSERT(op.result < info_.size(), "value id out of range");
    Info& info = info_[op.result];
    info.type = op.type;
    info.lanes = op.kind == ir::OpKind::Load || op.kind == ir::OpKind::SharedLoad ? op.lanes : 1;
    info.fragment = op.fragment;
    if (op.kind != ir::OpKind::Const) return;
    info.literal = const_literal(op, dialect, needs);
    if (!is_float(op.type)) info.integer = const_integer(op);
  });
  drop_unused(ops);
  for (const ir::Op* op : ops) {
    if (emitted(*op)) bind_hazards(*op);
  }
}

bool Values::is_variable_target(const ir::Op& op, std::size_t arg) {
  return arg == 0 && op.kind == ir::OpKind::VarStore;
}

bool Values::emitted(const ir::Op& op) const {
  if (op.kind == ir::OpKind::VarStore) return uses(ir::VarOp(op).variable()) > 0;
  // A loop's result is its induction variable: one that nothing reads still runs its body.
  if (op.kind == ir::OpKind::For) {
    const ir::Block& body = ir::ForOp(op).body();
    return uses(op.result) > 0 || std::any_of(body.ops.begin(), body.ops.end(),
                                              [&](const ir::Op& inner) { return emitted(inner); });
  }
  if (op.result == ir::kNoValue || ir::op_class(op.kind) == ir::OpClass::Atomic) return true;
  return uses(op.result) > 0;
}

void Values::drop_unused(const std::vector<const ir::Op*>& ops) {
  std::vector<bool> dropped(ops.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t k = ops.size(); k-- > 0;) {
      const ir::Op& op = *ops[k];
      if (dropped[k] || emitted(op)) continue;
      dropped[k] = changed = true;
      for (std::size_t i = 0; i < op.args.size(); ++i) {
        if (!is_variable_target(op, i)) --info_[op.args[i]].uses;
      }
    }
  }
}

void Values::bind_hazards(const ir::Op& op) {
  auto is_zero = [&](ir::ValueId id) { return info_[id].integer == 0; };
  const ir::OpKind k = op.kind;
  if (k == ir::OpKind::Div || k == ir::OpKind::Rem) {
    const ir::ValueId divisor = ir::BinaryOp(op).rhs();
    if (!is_float(op.type) && is_zero(divisor)) info_[divisor].bound = true;
    return;
  }
  const bool ordering =
      k == ir::OpKind::Lt || k == ir::OpKind::Le || k == ir::OpKind::Gt || k == ir::OpKind::Ge;
  if (!ordering || !is_unsigned_int(info_[ir::BinaryOp(op).lhs()].type)) return;
  for (ir::ValueId a : op.args) info_[a].bound = info_[a].bound || is_zero(a);
}

std::optional<std::string> Values::bound_literal(ir::ValueId id) const {
  const Info& info = info_.at(id);
  return info.bound ? info.literal : std::nullopt;
}

std::string Values::name(ir::ValueId id) const {
  const Info& info = info_.at(id);
  return info.literal && !info.bound ? *info.literal : "v" + std::to_string(id);
}

std::string Values::operand(ir::ValueId id) const {
  std::string text = name(id);
  return text.starts_with('-') ? "(" + text + ")" : text;
}

std::optional<std::int64_t> Values::integer(ir::ValueId id) const { return info_.at(id).integer; }

}  // namespace iron::codegen::c_like
