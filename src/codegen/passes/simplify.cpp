/// Algebraic simplification and strength reduction, only where the rewrite is exact: float
/// identities that hold for every input (-0.0, NaN and infinities included), integer ones with
/// wrap-around, and unsigned multiply/divide/remainder by powers of two as shifts and masks.
#include "iron/codegen/passes/simplify.hpp"

#include <bit>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "const_eval.hpp"
#include "iron/codegen/ir_utils.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

/// What becomes of one op: it stays (possibly rewritten in place), an existing value replaces
/// it, or it becomes the constant 0.
struct Rewrite {
  enum class Kind { Keep, Replace, Constant } kind = Kind::Keep;
  ir::ValueId value = ir::kNoValue;
};

Rewrite keep() { return {}; }
Rewrite use(ir::ValueId v) { return {Rewrite::Kind::Replace, v}; }
Rewrite zero() { return {Rewrite::Kind::Constant}; }

/// What a later op needs to know about a value's definition.
struct Def {
  OpKind kind = OpKind::Const;
  DType type = DType::U32;
  ir::ValueId arg = ir::kNoValue;  ///< first operand, if any
  std::optional<ConstValue> constant;
};

class Simplifier {
 public:
  explicit Simplifier(ir::Kernel& kernel) : k_(kernel) {}

  void block(ir::Block& b) {
    for (std::size_t i = 0; i < b.ops.size();) {
      for (ir::ValueId& a : b.ops[i].args) {
        for (auto it = replaced_.find(a); it != replaced_.end(); it = replaced_.find(a)) {
          a = it->second;
        }
      }
      const Rewrite r = rewrite(b, i);
      if (r.kind == Rewrite::Kind::Replace) {
        replaced_[b.ops[i].result] = r.value;
        b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      if (r.kind == Rewrite::Kind::Constant) {
        set_constant(b.ops[i], const_of(b.ops[i].type, 0));
      }
      record(b.ops[i]);
      for (ir::Block& nested : b.ops[i].blocks) block(nested);
      ++i;
    }
  }

 private:
  void record(const ir::Op& op) {
    if (op.result == ir::kNoValue) return;
    Def d{op.kind, op.type, op.args.empty() ? ir::kNoValue : op.args[0], std::nullopt};
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

  /// Rewrites b.ops[i] (`op %x, %pow2`) into `kind %x, %c` with a new constant c before it.
  Rewrite reduce(ir::Block& b, std::size_t i, OpKind kind, std::int64_t c) {
    ir::Op constant = make_const(k_, b.ops[i].type, 0.0);
    set_constant(constant, const_of(b.ops[i].type, c));
    constant.loc = b.ops[i].loc;
    record(constant);
    b.ops[i].kind = kind;
    b.ops[i].args[1] = constant.result;
    b.ops.insert(b.ops.begin() + static_cast<std::ptrdiff_t>(i), std::move(constant));
    return keep();  // the loop records the constant now and the rewritten op next
  }

  Rewrite rewrite(ir::Block& b, std::size_t i) {
    ir::Op& op = b.ops[i];
    const DType t = op.type;
    const bool is_int = is_integer(t);
    switch (op.kind) {
      case OpKind::Add:
        if (is_additive_identity(op.args[1], t)) return use(op.args[0]);
        if (is_additive_identity(op.args[0], t)) return use(op.args[1]);
        return keep();
      case OpKind::Sub:
        if (is(op.args[1], 0.0)) return use(op.args[0]);  // x - (+0.0) == x, -0.0 included
        if (is_int && op.args[0] == op.args[1]) return zero();
        return keep();
      case OpKind::Mul:
        if (is(op.args[1], 1.0)) return use(op.args[0]);
        if (is(op.args[0], 1.0)) return use(op.args[1]);
        if (is_int && (is(op.args[0], 0.0) || is(op.args[1], 0.0))) return zero();
        if (power_of_two(op.args[0]) && !power_of_two(op.args[1])) {
          std::swap(op.args[0], op.args[1]);
        }
        if (const auto k = power_of_two(op.args[1])) return reduce(b, i, OpKind::Shl, *k);
        return keep();
      case OpKind::Div:
        if (is(op.args[1], 1.0)) return use(op.args[0]);
        if (const auto k = power_of_two(op.args[1])) return reduce(b, i, OpKind::Shr, *k);
        return keep();
      case OpKind::Rem:
        if (const auto k = power_of_two(op.args[1])) {
          return reduce(b, i, OpKind::And, (std::int64_t{1} << *k) - 1);
        }
        return keep();
      case OpKind::Neg:
      case OpKind::Not: {
        const Def* inner = def(op.args[0]);
        if (inner != nullptr && inner->kind == op.kind) return use(inner->arg);
        return keep();
      }
      case OpKind::Cast:
      case OpKind::Bitcast: {
        const Def* d = def(op.args[0]);
        if (d != nullptr && d->type == t) return use(op.args[0]);
        return keep();
      }
      case OpKind::Select:
        if (op.args[1] == op.args[2]) return use(op.args[1]);
        return keep();
      default:
        return keep();
    }
  }

  ir::Kernel& k_;
  std::unordered_map<ir::ValueId, Def> defs_;
  std::unordered_map<ir::ValueId, ir::ValueId> replaced_;
};

}  // namespace

void simplify(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  Simplifier(kernel).block(kernel.body);
  remove_empty_control_flow(kernel.body);
}

}  // namespace iron::codegen
