/// Loop-invariant code motion: pure ops of a loop body whose operands all come from outside the
/// loop move, in order, to just before it. Inner loops go first, so an invariant climbs out of
/// every loop it does not depend on; ops inside branches stay where they are.
#include "iron/codegen/passes/hoist_loop_invariants.hpp"

#include <iterator>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "const_eval.hpp"
#include "iron/codegen/ir_utils.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

class Hoister {
 public:
  explicit Hoister(const ir::Kernel& kernel) {
    ir::walk(kernel.body, [&](const ir::Op& op) {
      if (op.kind == OpKind::Const) consts_[op.result] = const_value(op);
    });
  }

  void block(ir::Block& b) {
    for (std::size_t i = 0; i < b.ops.size(); ++i) {
      for (ir::Block& nested : b.ops[i].blocks) block(nested);
      if (b.ops[i].kind != OpKind::For) continue;
      std::vector<ir::Op> hoisted = invariants(b.ops[i]);
      b.ops.insert(b.ops.begin() + static_cast<std::ptrdiff_t>(i),
                   std::make_move_iterator(hoisted.begin()),
                   std::make_move_iterator(hoisted.end()));
      i += hoisted.size();
    }
  }

 private:
  /// Removes the loop body's invariant ops and returns them in order.
  std::vector<ir::Op> invariants(ir::Op& loop) {
    std::unordered_set<ir::ValueId> inside = {loop.result};
    ir::walk(loop.blocks[0], [&](const ir::Op& op) {
      if (op.result != ir::kNoValue) inside.insert(op.result);
    });
    std::vector<ir::Op> hoisted;
    std::vector<ir::Op> kept;
    for (ir::Op& op : loop.blocks[0].ops) {
      bool invariant = movable(op);
      for (ir::ValueId a : op.args) invariant = invariant && !inside.contains(a);
      if (invariant) {
        inside.erase(op.result);
        hoisted.push_back(std::move(op));
      } else {
        kept.push_back(std::move(op));
      }
    }
    loop.blocks[0].ops = std::move(kept);
    return hoisted;
  }

  /// Pure, and cannot fault where the loop would not have run it: an integer division or
  /// remainder moves only when its divisor is a non-zero constant (the simulator reports
  /// division by zero).
  bool movable(const ir::Op& op) const {
    if (!is_pure(op)) return false;
    if ((op.kind == OpKind::Div || op.kind == OpKind::Rem) && !is_float(op.type)) {
      const auto it = consts_.find(op.args[1]);
      return it != consts_.end() && it->second.bits != 0;
    }
    return true;
  }

  std::unordered_map<ir::ValueId, ConstValue> consts_;
};

}  // namespace

void hoist_loop_invariants(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  Hoister(kernel).block(kernel.body);
  remove_empty_control_flow(kernel.body);
}

}  // namespace iron::codegen
