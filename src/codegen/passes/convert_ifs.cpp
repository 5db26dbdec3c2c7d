/// If-conversion: small branches of pure ops and variable assignments become selects.
#include "iron/codegen/passes/convert_ifs.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "iron/codegen/op_predicates.hpp"
#include "iron/core/builder.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/rewriter.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

/// Arms longer than this stay branches: both arms always run once converted.
constexpr std::size_t kMaxArmOps = 16;

/// A variable's value at the end of one arm.
struct Assignment {
  ir::ValueId var = ir::kNoValue;
  ir::ValueId value = ir::kNoValue;
  DType type = DType::F32;
  ir::SourceLoc loc;
};

/// An integer division or remainder faults (in the simulator) on a zero divisor, which the
/// branch may exist to exclude: it is never executed unconditionally.
bool may_fault(const ir::Op& op) {
  return (op.kind == OpKind::Div || op.kind == OpKind::Rem) && !is_float(op.type);
}

/// Pure ops that cannot fault, reads and writes of variables only (a var declared in the arm is
/// not pure, so every variable an arm touches is declared outside the branch).
bool convertible(const ir::Block& arm) {
  return arm.ops.size() <= kMaxArmOps &&
         std::all_of(arm.ops.begin(), arm.ops.end(), [](const ir::Op& op) {
           return (is_pure(op) && !may_fault(op)) || op.kind == OpKind::VarLoad ||
                  op.kind == OpKind::VarStore;
         });
}

/// The assignment of `var` in `assigned` (const or not), or nullptr.
template <class Assignments>
auto* find(Assignments& assigned, ir::ValueId var) {
  const auto it = std::find_if(assigned.begin(), assigned.end(),
                               [&](const Assignment& a) { return a.var == var; });
  return it == assigned.end() ? nullptr : &*it;
}

/// Moves the arm's ops to `out`, except its var.stores (returned as each variable's final value)
/// and the var.loads that follow a store in the arm (replaced by the stored value).
std::vector<Assignment> flatten(ir::Block& arm, std::vector<ir::Op>& out) {
  std::vector<Assignment> assigned;
  std::unordered_map<ir::ValueId, ir::ValueId> stored;  // var.load result -> value it reads
  for (ir::Op& op : arm.ops) {
    for (ir::ValueId& a : op.args) {
      if (const auto it = stored.find(a); it != stored.end()) a = it->second;
    }
    if (op.kind == OpKind::VarStore) {
      const ir::VarOp store(op);
      if (Assignment* a = find(assigned, store.variable())) {
        a->value = store.value();
      } else {
        assigned.push_back({store.variable(), store.value(), op.type, op.loc});
      }
      continue;
    }
    if (op.kind == OpKind::VarLoad) {
      if (const Assignment* a = find(assigned, ir::VarOp(op).variable())) {
        stored[op.result] = a->value;
        continue;
      }
    }
    out.push_back(std::move(op));
  }
  return assigned;
}

/// The ops that replace `branch`: its arms' ops followed by one select and var.store per
/// assigned variable.
std::vector<ir::Op> convert(ir::Kernel& kernel, ir::Op& branch) {
  const ir::IfOp arms(branch);
  std::vector<ir::Op> out;
  const std::vector<Assignment> then_values = flatten(arms.then_block(), out);
  const std::vector<Assignment> else_values = flatten(arms.else_block(), out);
  std::vector<Assignment> order = then_values;
  for (const Assignment& a : else_values) {
    if (find(then_values, a.var) == nullptr) order.push_back(a);
  }
  ir::Builder b(kernel, out);
  for (const Assignment& first : order) {
    const Assignment* on_then = find(then_values, first.var);
    const Assignment* on_else = find(else_values, first.var);
    ir::ValueId before = ir::kNoValue;
    if (on_then == nullptr || on_else == nullptr) {
      before = b.at(branch.loc).make(OpKind::VarLoad, first.type, {first.var}).result;
    }
    const ir::ValueId select =
        b.at(first.loc)
            .make(OpKind::Select, first.type,
                  {arms.condition(), on_then != nullptr ? on_then->value : before,
                   on_else != nullptr ? on_else->value : before})
            .result;
    b.make(OpKind::VarStore, first.type, {first.var, select});
  }
  return out;
}

}  // namespace

void convert_ifs(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  // Inner branches first, so an outer branch whose arms become straight-line qualifies too.
  ir::rewrite(kernel, ir::Order::InnerFirst, [&](ir::Op& op, ir::RewriteSite&) {
    if (op.kind != OpKind::If) return ir::Rewrite::keep();
    const ir::IfOp branch(op);
    if (!convertible(branch.then_block()) || !convertible(branch.else_block())) {
      return ir::Rewrite::keep();
    }
    return ir::Rewrite::replace_with_ops(convert(kernel, op));
  });
}

}  // namespace iron::codegen
