/// If-conversion: small branches of pure ops and variable assignments become selects.
#include "iron/codegen/passes/convert_ifs.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "iron/codegen/ir_utils.hpp"

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
      if (Assignment* a = find(assigned, op.args[0])) {
        a->value = op.args[1];
      } else {
        assigned.push_back({op.args[0], op.args[1], op.type, op.loc});
      }
      continue;
    }
    if (op.kind == OpKind::VarLoad) {
      if (const Assignment* a = find(assigned, op.args[0])) {
        stored[op.result] = a->value;
        continue;
      }
    }
    out.push_back(std::move(op));
  }
  return assigned;
}

/// Replaces `branch` by its arms' ops followed by one select and var.store per assigned variable.
void convert(ir::Kernel& kernel, ir::Op& branch, std::vector<ir::Op>& out) {
  const std::vector<Assignment> then_values = flatten(branch.blocks[0], out);
  const std::vector<Assignment> else_values = flatten(branch.blocks[1], out);
  std::vector<Assignment> order = then_values;
  for (const Assignment& a : else_values) {
    if (find(then_values, a.var) == nullptr) order.push_back(a);
  }
  for (const Assignment& first : order) {
    const Assignment* on_then = find(then_values, first.var);
    const Assignment* on_else = find(else_values, first.var);
    ir::ValueId before = ir::kNoValue;
    if (on_then == nullptr || on_else == nullptr) {
      ir::Op load = make_op(kernel, OpKind::VarLoad, first.type, {first.var});
      load.loc = branch.loc;
      before = load.result;
      out.push_back(std::move(load));
    }
    ir::Op select = make_op(kernel, OpKind::Select, first.type,
                            {branch.args[0], on_then != nullptr ? on_then->value : before,
                             on_else != nullptr ? on_else->value : before});
    select.loc = first.loc;
    ir::Op store;
    store.kind = OpKind::VarStore;
    store.type = first.type;
    store.args = {first.var, select.result};
    store.loc = first.loc;
    out.push_back(std::move(select));
    out.push_back(std::move(store));
  }
}

/// Converts innermost branches first, so an outer branch whose arms become straight-line
/// qualifies too.
void convert_block(ir::Kernel& kernel, ir::Block& block) {
  std::vector<ir::Op> out;
  out.reserve(block.ops.size());
  for (ir::Op& op : block.ops) {
    for (ir::Block& nested : op.blocks) convert_block(kernel, nested);
    if (op.kind == OpKind::If && convertible(op.blocks[0]) && convertible(op.blocks[1])) {
      convert(kernel, op, out);
    } else {
      out.push_back(std::move(op));
    }
  }
  block.ops = std::move(out);
}

}  // namespace

void convert_ifs(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  convert_block(kernel, kernel.body);
}

}  // namespace iron::codegen
