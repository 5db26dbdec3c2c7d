/// Algebraic simplification and strength reduction, only where the rewrite is exact: float
/// identities that hold for every input (-0.0, NaN and infinities included), integer ones with
/// wrap-around, and unsigned multiply/divide/remainder by powers of two as shifts and masks.
#include "iron/codegen/passes/simplify.hpp"

#include <bit>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "const_eval.hpp"
#include "iron/core/builder.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/rewriter.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

/// What a later op needs to know about a value's definition.
struct Def {
  OpKind kind = OpKind::Const;
  DType type = DType::U32;
  ir::ValueId arg = ir::kNoValue;  ///< first operand, if any (the operand of neg and not)
  std::optional<ConstValue> constant;
};

/// Decides each op in program order, with what it recorded about the definitions before it.
class Simplifier {
 public:
  ir::Rewrite simplify(ir::Op& op, const ir::RewriteSite& site) {
    if (const std::optional<ir::ValueId> same = existing_value(op, site)) {
      return ir::Rewrite::replace_with_value(*same);
    }
    record(op);
    return ir::Rewrite::keep();
  }

 private:
  void record(const ir::Op& op) {
    if (op.result == ir::kNoValue) return;
    Def d{op.kind, op.type, op.args.empty() ? ir::kNoValue : op.args.front(), std::nullopt};
    if (op.kind == OpKind::Const) d.constant = const_value(op);
    defs_[op.result] = d;
  }

  const Def* def(ir::ValueId v) const {
    const auto it = defs_.find(v);
    return it == defs_.end() ? nullptr : &it->second;
  }

  /// Whether `v` is the constant `value`; for floats the sign of zero must match too.
  bool is(ir::ValueId v, double value) const {
    const Def* d = def(v);
    if (d == nullptr || !d->constant) return false;
    const ConstValue c = *d->constant;
    if (!is_float(c.type)) return static_cast<double>(c.as_int()) == value;
    return c.as_float() == value && std::signbit(c.as_float()) == std::signbit(value);
  }

  /// x + v == x for every x: integer 0, or float -0.0 (+0.0 would turn -0.0 into +0.0).
  bool is_additive_identity(ir::ValueId v, DType t) const {
    return is(v, is_float(t) ? -0.0 : 0.0);
  }

  /// log2 of `v` when it is an unsigned integer constant 2^k with k >= 1.
  std::optional<int> power_of_two(ir::ValueId v) const {
    const Def* d = def(v);
    if (d == nullptr || !d->constant || !is_unsigned_int(d->constant->type)) return std::nullopt;
    const std::uint32_t bits = d->constant->bits;
    if (bits < 2 || !std::has_single_bit(bits)) return std::nullopt;
    return std::countr_zero(bits);
  }

  /// Turns `op` into the constant 0 of its type.
  static void make_zero(ir::Op& op) { set_constant(op, const_of(op.type, 0)); }

  /// Rewrites `op %x, %pow2` into `kind %x, %c`, with a new constant c just before it.
  void reduce(ir::Op& op, const ir::RewriteSite& site, OpKind kind, std::int64_t c) {
    ir::Op& constant = site.before().make(OpKind::Const, op.type);
    set_constant(constant, const_of(op.type, c));
    record(constant);
    ir::BinaryOp(op).rhs() = constant.result;
    op.kind = kind;
  }

  /// An existing value that `op` always equals, or nullopt; rewrites `op` in place where it
  /// becomes a constant or a cheaper op.
  std::optional<ir::ValueId> existing_value(ir::Op& op, const ir::RewriteSite& site) {
    const DType t = op.type;
    const bool is_int = is_integer(t);
    if (op.kind == OpKind::Add) {
      const ir::BinaryOp add(op);
      if (is_additive_identity(add.rhs(), t)) return add.lhs();
      if (is_additive_identity(add.lhs(), t)) return add.rhs();
    } else if (op.kind == OpKind::Sub) {
      const ir::BinaryOp sub(op);
      if (is(sub.rhs(), 0.0)) return sub.lhs();  // x - (+0.0) == x, -0.0 included
      if (is_int && sub.lhs() == sub.rhs()) make_zero(op);
    } else if (op.kind == OpKind::Mul) {
      const ir::BinaryOp mul(op);
      if (is(mul.rhs(), 1.0)) return mul.lhs();
      if (is(mul.lhs(), 1.0)) return mul.rhs();
      if (is_int && (is(mul.lhs(), 0.0) || is(mul.rhs(), 0.0))) {
        make_zero(op);
        return std::nullopt;
      }
      if (power_of_two(mul.lhs()) && !power_of_two(mul.rhs())) std::swap(mul.lhs(), mul.rhs());
      if (const auto k = power_of_two(mul.rhs())) reduce(op, site, OpKind::Shl, *k);
    } else if (op.kind == OpKind::Div) {
      const ir::BinaryOp div(op);
      if (is(div.rhs(), 1.0)) return div.lhs();
      if (const auto k = power_of_two(div.rhs())) reduce(op, site, OpKind::Shr, *k);
    } else if (op.kind == OpKind::Rem) {
      if (const auto k = power_of_two(ir::BinaryOp(op).rhs())) {
        reduce(op, site, OpKind::And, (std::int64_t{1} << *k) - 1);
      }
    } else if ((op.kind == OpKind::And || op.kind == OpKind::Or) && t == DType::Bool) {
      // x && true == x, x || false == x: what a condition with a part known at trace time
      // leaves once that part folds.
      const ir::BinaryOp logic(op);
      const double identity = op.kind == OpKind::And ? 1.0 : 0.0;
      if (is(logic.rhs(), identity)) return logic.lhs();
      if (is(logic.lhs(), identity)) return logic.rhs();
    } else if (op.kind == OpKind::Neg || op.kind == OpKind::Not) {
      const Def* inner = def(ir::UnaryOp(op).operand());
      if (inner != nullptr && inner->kind == op.kind) return inner->arg;
    } else if (op.kind == OpKind::Cast || op.kind == OpKind::Bitcast) {
      const ir::ValueId source = ir::UnaryOp(op).operand();
      const Def* d = def(source);
      if (d != nullptr && d->type == t) return source;
    } else if (op.kind == OpKind::Select) {
      const ir::SelectOp select(op);
      if (select.if_true() == select.if_false()) return select.if_true();
    }
    return std::nullopt;
  }

  std::unordered_map<ir::ValueId, Def> defs_;
};

}  // namespace

void simplify(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  Simplifier simplifier;
  ir::rewrite(kernel, ir::Order::OuterFirst,
              [&](ir::Op& op, ir::RewriteSite& site) { return simplifier.simplify(op, site); });
  ir::remove_empty_control_flow(kernel);
}

}  // namespace iron::codegen
