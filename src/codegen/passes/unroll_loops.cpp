/// Full unrolling of small constant loops: a loop with constant start, end and step, at most
/// kMaxTrips iterations and at most kMaxOps ops once unrolled becomes one renumbered copy of its
/// body per iteration, each starting with its induction value as a constant; a loop that never
/// runs goes. Constant bounds make the loop uniform, so the copies keep every thread's sequence
/// of collectives and barriers.
#include "iron/codegen/passes/unroll_loops.hpp"

#include <iterator>
#include <optional>
#include <unordered_map>
#include <vector>

#include "const_eval.hpp"
#include "iron/codegen/ir_utils.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

constexpr std::size_t kMaxTrips = 8;
constexpr std::size_t kMaxOps = 256;

std::size_t count(const ir::Block& b) {
  std::size_t n = 0;
  ir::walk(b, [&](const ir::Op&) { ++n; });
  return n;
}

/// Whether a loop nested in `b` contains a collective or barrier (left rolled, to be safe).
bool nested_loop_is_convergent(const ir::Block& b) {
  bool found = false;
  ir::walk(b, [&](const ir::Op& op) {
    if (op.kind != OpKind::For) return;
    ir::walk(op.blocks[0], [&](const ir::Op& inner) { found |= is_convergent(inner); });
  });
  return found;
}

class Unroller {
 public:
  explicit Unroller(ir::Kernel& kernel) : k_(kernel) {
    ir::walk(kernel.body, [&](const ir::Op& op) {
      if (op.kind == OpKind::Const) consts_[op.result] = const_value(op);
    });
  }

  void block(ir::Block& b) {
    for (std::size_t i = 0; i < b.ops.size();) {
      ir::Op& op = b.ops[i];
      for (ir::Block& nested : op.blocks) block(nested);
      const std::optional<std::vector<ConstValue>> trips =
          op.kind == OpKind::For ? trip_values(op) : std::nullopt;
      if (!trips || (!trips->empty() && !worth_unrolling(op, trips->size()))) {
        ++i;
        continue;
      }
      std::vector<ir::Op> copies = unroll(op, *trips);
      const auto at = b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(i));
      // The copies are visited next: loops bounded by the induction value are constant now.
      b.ops.insert(at, std::make_move_iterator(copies.begin()),
                   std::make_move_iterator(copies.end()));
    }
  }

 private:
  const ConstValue* constant(ir::ValueId v) const {
    const auto it = consts_.find(v);
    return it == consts_.end() ? nullptr : &it->second;
  }

  /// The induction values of a loop with constant bounds, in order, as the simulator steps it;
  /// nullopt when not constant, when it never ends (a zero step) or runs more than kMaxTrips.
  std::optional<std::vector<ConstValue>> trip_values(const ir::Op& loop) const {
    const ConstValue* start = constant(loop.args[0]);
    const ConstValue* end = constant(loop.args[1]);
    const ConstValue* step = constant(loop.args[2]);
    if (start == nullptr || end == nullptr) return std::nullopt;
    std::vector<ConstValue> values;
    ConstValue counter = *start;
    while (const_less(counter, *end)) {
      if (step == nullptr || step->bits == 0 || values.size() == kMaxTrips) return std::nullopt;
      values.push_back(counter);
      const ConstValue operands[] = {counter, *step};
      const auto next = evaluate(OpKind::Add, loop.type, operands);
      IRON_INTERNAL_ASSERT(next.has_value(), "loop counter step did not evaluate");
      counter = *next;
    }
    return values;
  }

  static bool worth_unrolling(const ir::Op& loop, std::size_t trips) {
    const ir::Block& body = loop.blocks[0];
    return count(body) * trips <= kMaxOps && !nested_loop_is_convergent(body);
  }

  std::vector<ir::Op> unroll(const ir::Op& loop, const std::vector<ConstValue>& trips) {
    std::vector<ir::Op> copies;
    for (const ConstValue& value : trips) {
      ir::Op induction = make_const(k_, loop.type, 0.0);
      set_constant(induction, value);
      induction.loc = loop.loc;
      consts_[induction.result] = value;
      std::unordered_map<ir::ValueId, ir::ValueId> renamed = {{loop.result, induction.result}};
      copies.push_back(std::move(induction));
      ir::Block body = loop.blocks[0];
      renumber(body, renamed);
      copies.insert(copies.end(), std::make_move_iterator(body.ops.begin()),
                    std::make_move_iterator(body.ops.end()));
    }
    return copies;
  }

  /// Gives every value defined in `b` a fresh id and rewrites the uses, in program order.
  void renumber(ir::Block& b, std::unordered_map<ir::ValueId, ir::ValueId>& renamed) {
    for (ir::Op& op : b.ops) {
      for (ir::ValueId& a : op.args) {
        if (const auto it = renamed.find(a); it != renamed.end()) a = it->second;
      }
      if (op.result != ir::kNoValue) {
        const ir::ValueId fresh = new_value(k_);
        renamed[op.result] = fresh;
        op.result = fresh;
        if (op.kind == OpKind::Const) consts_[fresh] = const_value(op);
      }
      for (ir::Block& nested : op.blocks) renumber(nested, renamed);
    }
  }

  ir::Kernel& k_;
  std::unordered_map<ir::ValueId, ConstValue> consts_;
};

}  // namespace

void unroll_loops(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  Unroller(kernel).block(kernel.body);
  remove_empty_control_flow(kernel.body);  // a loop that never ran may have been all there was
}

}  // namespace iron::codegen
