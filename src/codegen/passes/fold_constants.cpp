/// Constant folding: pure ops on constants become constants (with the simulator's exact
/// arithmetic), branches on constants keep only the taken side, and empty constant loops go.
#include "iron/codegen/passes/fold_constants.hpp"

#include <iterator>
#include <unordered_map>
#include <vector>

#include "const_eval.hpp"
#include "iron/codegen/ir_utils.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

bool is_foldable(const ir::Op& op) {
  const ir::OpClass c = ir::op_class(op.kind);
  return c == ir::OpClass::Unary || c == ir::OpClass::Binary || c == ir::OpClass::Compare ||
         op.kind == OpKind::Fma || op.kind == OpKind::Cast || op.kind == OpKind::Bitcast;
}

/// One walk in program order; a value's uses always come after its definition, so constants
/// and replacements are known when their uses are reached.
class Folder {
 public:
  void block(ir::Block& b) {
    std::size_t i = 0;
    while (i < b.ops.size()) {
      if (fold(b, i)) ++i;
    }
  }

 private:
  /// Folds b.ops[i]; returns false when the op was removed or replaced by other ops at i.
  bool fold(ir::Block& b, std::size_t i) {
    ir::Op& op = b.ops[i];
    for (ir::ValueId& a : op.args) {
      for (auto it = replaced_.find(a); it != replaced_.end(); it = replaced_.find(a)) {
        a = it->second;
      }
    }
    switch (op.kind) {
      case OpKind::Const:
        consts_[op.result] = const_value(op);
        return true;
      case OpKind::Select:
        if (const ConstValue* cond = find(op.args[0])) {
          replaced_[op.result] = cond->bits != 0 ? op.args[1] : op.args[2];
          b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(i));
          return false;
        }
        return true;
      case OpKind::If:
        if (const ConstValue* cond = find(op.args[0])) {
          std::vector<ir::Op> taken = std::move(op.blocks[cond->bits != 0 ? 0 : 1].ops);
          const auto at = b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(i));
          b.ops.insert(at, std::make_move_iterator(taken.begin()),
                       std::make_move_iterator(taken.end()));
          return false;
        }
        break;
      case OpKind::For: {
        const ConstValue* start = find(op.args[0]);
        const ConstValue* end = find(op.args[1]);
        if (start != nullptr && end != nullptr && !const_less(*start, *end)) {
          b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(i));
          return false;
        }
        break;
      }
      default:
        if (is_foldable(op)) fold_op(op);
        return true;
    }
    for (ir::Block& nested : op.blocks) block(nested);
    return true;
  }

  void fold_op(ir::Op& op) {
    std::vector<ConstValue> args;
    for (ir::ValueId a : op.args) {
      const ConstValue* c = find(a);
      if (c == nullptr) return;
      args.push_back(*c);
    }
    if (const auto v = evaluate(op.kind, op.type, args)) {
      set_constant(op, *v);
      consts_[op.result] = *v;
    }
  }

  const ConstValue* find(ir::ValueId id) const {
    const auto it = consts_.find(id);
    return it == consts_.end() ? nullptr : &it->second;
  }

  std::unordered_map<ir::ValueId, ConstValue> consts_;
  std::unordered_map<ir::ValueId, ir::ValueId> replaced_;
};

}  // namespace

void fold_constants(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  Folder().block(kernel.body);
  remove_empty_control_flow(kernel.body);
}

}  // namespace iron::codegen
