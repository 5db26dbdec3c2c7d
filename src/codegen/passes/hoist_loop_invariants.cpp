/// Loop-invariant code motion: pure ops of a loop body whose operands all come from outside the
/// loop move, in order, to just before it. Inner loops go first, so an invariant climbs out of
/// every loop it does not depend on; ops inside branches stay where they are.
#include "iron/codegen/passes/hoist_loop_invariants.hpp"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "const_eval.hpp"
#include "iron/codegen/op_predicates.hpp"
#include "iron/core/builder.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/rewriter.hpp"

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

  /// Moves the invariant ops of a loop's body, in order, to just before the loop.
  ir::Rewrite hoist(ir::Op& op, const ir::RewriteSite& site) const {
    if (op.kind != OpKind::For) return ir::Rewrite::keep();
    const ir::ForOp loop(op);
    ir::Block& body = loop.body();
    std::unordered_set<ir::ValueId> inside = {loop.induction()};
    ir::walk(body, [&](const ir::Op& nested) {
      if (nested.result != ir::kNoValue) inside.insert(nested.result);
    });
    ir::Builder before = site.before();
    std::vector<ir::Op> kept;
    for (ir::Op& inner : body.ops) {
      bool invariant = movable(inner);
      for (ir::ValueId a : inner.args) invariant = invariant && !inside.contains(a);
      if (invariant) {
        inside.erase(inner.result);
        before.insert(std::move(inner));
      } else {
        kept.push_back(std::move(inner));
      }
    }
    body.ops = std::move(kept);
    return ir::Rewrite::keep();
  }

 private:
  /// Pure, and cannot fault where the loop would not have run it: an integer division or
  /// remainder moves only when its divisor is a non-zero constant (the simulator reports
  /// division by zero).
  bool movable(const ir::Op& op) const {
    if (!is_pure(op)) return false;
    if ((op.kind == OpKind::Div || op.kind == OpKind::Rem) && !is_float(op.type)) {
      const auto it = consts_.find(ir::BinaryOp(op).rhs());
      return it != consts_.end() && it->second.bits != 0;
    }
    return true;
  }

  std::unordered_map<ir::ValueId, ConstValue> consts_;
};

}  // namespace

void hoist_loop_invariants(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  const Hoister hoister(kernel);
  // Inner loops first, so an invariant climbs out of every loop it does not depend on.
  ir::rewrite(kernel, ir::Order::InnerFirst,
              [&](ir::Op& op, ir::RewriteSite& site) { return hoister.hoist(op, site); });
  ir::remove_empty_control_flow(kernel);
}

}  // namespace iron::codegen
