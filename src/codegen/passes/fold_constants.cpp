/// Constant folding: pure ops on constants become constants (with the simulator's exact
/// arithmetic), branches on constants keep only the taken side, and empty constant loops go.
#include "iron/codegen/passes/fold_constants.hpp"

#include <unordered_map>
#include <vector>

#include "const_eval.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/rewriter.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

bool is_foldable(const ir::Op& op) {
  const ir::OpClass c = ir::op_class(op.kind);
  return c == ir::OpClass::Unary || c == ir::OpClass::Binary || c == ir::OpClass::Compare ||
         op.kind == OpKind::Fma || op.kind == OpKind::Cast || op.kind == OpKind::Bitcast;
}

/// Decides each op in program order; a value's uses always come after its definition, so
/// constants are known when their uses are reached.
class Folder {
 public:
  ir::Rewrite fold(ir::Op& op) {
    if (op.kind == OpKind::Const) {
      consts_[op.result] = const_value(op);
    } else if (op.kind == OpKind::Select) {
      const ir::SelectOp select(op);
      if (const ConstValue* cond = find(select.condition())) {
        return ir::Rewrite::replace_with_value(cond->bits != 0 ? select.if_true()
                                                               : select.if_false());
      }
    } else if (op.kind == OpKind::If) {
      const ir::IfOp branch(op);
      if (const ConstValue* cond = find(branch.condition())) {
        ir::Block& taken = cond->bits != 0 ? branch.then_block() : branch.else_block();
        return ir::Rewrite::expand(std::move(taken.ops));
      }
    } else if (op.kind == OpKind::For) {
      const ir::ForOp loop(op);
      const ConstValue* start = find(loop.start());
      const ConstValue* end = find(loop.end());
      if (start != nullptr && end != nullptr && !const_less(*start, *end)) {
        return ir::Rewrite::erase();
      }
    } else if (is_foldable(op)) {
      fold_op(op);
    }
    return ir::Rewrite::keep();
  }

 private:
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
};

}  // namespace

void fold_constants(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  Folder folder;
  // Outer ops first: a branch on a constant gives way to its taken block before it is visited.
  ir::rewrite(kernel, ir::Order::OuterFirst,
              [&](ir::Op& op, ir::RewriteSite&) { return folder.fold(op); });
  ir::remove_empty_control_flow(kernel);
}

}  // namespace iron::codegen
