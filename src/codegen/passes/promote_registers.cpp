/// Register promotion. For each `regs` array, if every regs.load and regs.store of it has a
/// constant index inside the array, the array becomes `elements` variables declared where the
/// array was (each starting with its initial value), a regs.load of element i a var.load of
/// variable i, and a regs.store of element i a var.store into it. An array with any other index
/// is left as it is; the verifier's lowered stage then rejects it at the access's source line
/// (the emitters never see a register array).
#include "iron/codegen/passes/promote_registers.hpp"

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "iron/core/builder.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/rewriter.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

bool is_register_access(const ir::Op& op) {
  return op.kind == OpKind::RegsLoad || op.kind == OpKind::RegsStore;
}

/// The arrays whose every access has a constant index inside them, with those indices.
class Promotable {
 public:
  explicit Promotable(const ir::Kernel& kernel) {
    ir::walk(kernel.body, [&](const ir::Op& op) {
      if (op.kind == OpKind::Const && is_integer(op.type)) constants_[op.result] = op.ivalue;
      if (op.kind == OpKind::RegsDecl) elements_[op.result] = ir::RegsOp(op).elements();
      if (!is_register_access(op)) return;
      const ir::RegsOp access(op);
      if (!constant_index(access)) rolled_.insert(access.array());
    });
  }

  bool contains(ir::ValueId array) const { return !rolled_.contains(array); }

  /// The index of a regs.load or regs.store, known to be constant and inside the array.
  std::int64_t index(const ir::Op& access) const {
    return constants_.at(ir::RegsOp(access).index());
  }

 private:
  bool constant_index(ir::RegsOp<const ir::Op> access) const {
    const auto it = constants_.find(access.index());
    const auto size = elements_.find(access.array());
    return it != constants_.end() && size != elements_.end() && it->second >= 0 &&
           it->second < size->second;
  }

  std::unordered_map<ir::ValueId, std::int64_t> constants_;
  std::unordered_map<ir::ValueId, std::int64_t> elements_;
  std::unordered_set<ir::ValueId> rolled_;
};

}  // namespace

void promote_registers(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  const Promotable promotable(kernel);
  std::unordered_map<ir::ValueId, std::vector<ir::ValueId>> variables;  // array -> its elements
  ir::rewrite(kernel, ir::Order::OuterFirst, [&](ir::Op& op, ir::RewriteSite&) {
    if (op.kind == OpKind::RegsDecl && promotable.contains(op.result)) {
      const ir::RegsOp array(op);
      std::vector<ir::Op> decls;
      ir::Builder b(kernel, decls);
      b.at(op.loc);
      std::vector<ir::ValueId>& elements = variables[op.result];
      for (std::int64_t i = 0; i < array.elements(); ++i) {
        elements.push_back(b.make(OpKind::VarDecl, op.type, {array.init()}).result);
      }
      return ir::Rewrite::replace_with_ops(std::move(decls));
    }
    if (!is_register_access(op)) return ir::Rewrite::keep();
    const auto it = variables.find(ir::RegsOp(op).array());
    if (it == variables.end()) return ir::Rewrite::keep();
    const ir::ValueId variable = it->second.at(static_cast<std::size_t>(promotable.index(op)));
    if (op.kind == OpKind::RegsLoad) {
      op.args = {variable};
      op.kind = OpKind::VarLoad;
    } else {
      op.args = {variable, ir::RegsOp(op).value()};
      op.kind = OpKind::VarStore;
    }
    return ir::Rewrite::keep();
  });
}

}  // namespace iron::codegen
