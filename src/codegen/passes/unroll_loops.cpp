/// Full unrolling of small constant loops: a loop with constant start, end and step, at most
/// kMaxTrips iterations and at most kMaxOps ops once unrolled becomes one renumbered copy of its
/// body per iteration, each starting with its induction value as a constant; a loop that never
/// runs goes. An op on a whole fragment counts as many ops as the fragment has slots a lane, the
/// statements it becomes: a loop that stores a 128-slot accumulator stays a loop (NVRTC spends
/// ~25 ms a copy of such a store). A loop whose body reads or writes a register array is unrolled
/// up to kMaxRegs trips and kMaxRegisterOps ops, since its indices must become constants for the
/// array to live in registers. Constant bounds make the loop uniform, so the copies keep every
/// thread's sequence of collectives and barriers.
#include "iron/codegen/passes/unroll_loops.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "const_eval.hpp"
#include "iron/codegen/op_predicates.hpp"
#include "iron/core/builder.hpp"
#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/rewriter.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

constexpr std::size_t kMaxTrips = 8;
constexpr std::size_t kMaxOps = 256;
constexpr std::size_t kMaxRegisterOps = 8192;

/// Whether `b` reads or writes a register array.
bool accesses_registers(const ir::Block& b) {
  bool found = false;
  ir::walk(b, [&](const ir::Op& op) {
    found |= ir::op_info(op.kind).types == ir::TypeRule::RegisterAccess;
  });
  return found;
}

std::size_t count(const ir::Block& b) {
  std::size_t n = 0;
  ir::walk(b, [&](const ir::Op&) { ++n; });
  return n;
}

/// Whether op works on every slot of the fragments among its operands.
bool whole_fragment_op(const ir::Op& op) {
  switch (ir::op_info(op.kind).types) {
    case ir::TypeRule::FragmentAccess:
    case ir::TypeRule::FragmentMultiply:
    case ir::TypeRule::FragmentTransform:
    case ir::TypeRule::WarpgroupMultiply:
    case ir::TypeRule::WarpgroupWait:
      return true;
    default:
      return false;
  }
}

/// Whether a loop nested in `b` contains a collective or barrier (left rolled, to be safe).
bool nested_loop_is_convergent(const ir::Block& b) {
  bool found = false;
  ir::walk(b, [&](const ir::Op& op) {
    if (op.kind != OpKind::For) return;
    ir::walk(ir::ForOp(op).body(), [&](const ir::Op& inner) { found |= is_convergent(inner); });
  });
  return found;
}

/// Decides each op after its nested blocks; the copies of an unrolled loop are visited next, so
/// loops bounded by its induction value, constant now, unroll in turn.
class Unroller {
 public:
  explicit Unroller(ir::Kernel& kernel) : k_(kernel) {
    ir::walk(kernel.body, [&](const ir::Op& op) {
      if (op.kind == OpKind::FragDecl) slots_[op.result] = op.fragment.elements_per_lane();
    });
  }

  ir::Rewrite unroll_if_small(ir::Op& op) {
    if (op.kind == OpKind::Const) consts_[op.result] = const_value(op);
    if (op.kind != OpKind::For || op.ivalue == 1) return ir::Rewrite::keep();  // or rolled
    const bool registers = accesses_registers(ir::ForOp(op).body());
    const std::optional<std::vector<ConstValue>> trips =
        trip_values(op, registers ? static_cast<std::size_t>(ir::kMaxRegs) : kMaxTrips);
    if (!trips || (!trips->empty() && !worth_unrolling(op, trips->size(), registers))) {
      return ir::Rewrite::keep();
    }
    return ir::Rewrite::expand(unroll(op, *trips));
  }

 private:
  const ConstValue* constant(ir::ValueId v) const {
    const auto it = consts_.find(v);
    return it == consts_.end() ? nullptr : &it->second;
  }

  /// The induction values of a loop with constant bounds, in order, as the simulator steps it;
  /// nullopt when not constant, when it never ends (a zero step) or runs more than `max_trips`.
  std::optional<std::vector<ConstValue>> trip_values(const ir::Op& op,
                                                     std::size_t max_trips) const {
    const ir::ForOp loop(op);
    const ConstValue* start = constant(loop.start());
    const ConstValue* end = constant(loop.end());
    const ConstValue* step = constant(loop.step());
    if (start == nullptr || end == nullptr) return std::nullopt;
    std::vector<ConstValue> values;
    ConstValue counter = *start;
    while (const_less(counter, *end)) {
      if (step == nullptr || step->bits == 0 || values.size() == max_trips) return std::nullopt;
      values.push_back(counter);
      const ConstValue operands[] = {counter, *step};
      const auto next = evaluate(OpKind::Add, op.type, operands);
      IRON_INTERNAL_ASSERT(next.has_value(), "loop counter step did not evaluate");
      counter = *next;
    }
    return values;
  }

  /// The statements `b` becomes: one an op, a fragment's slots a lane for a whole-fragment op.
  std::size_t emitted_size(const ir::Block& b) const {
    std::size_t n = 0;
    ir::walk(b, [&](const ir::Op& op) {
      std::size_t size = 1;
      if (whole_fragment_op(op)) {
        for (const ir::ValueId arg : op.args) {
          const auto it = slots_.find(arg);
          if (it != slots_.end()) size = std::max<std::size_t>(size, it->second);
        }
      }
      n += size;
    });
    return n;
  }

  /// Register-array loops count ops (their indices must become constants); others count what
  /// they are emitted as.
  bool worth_unrolling(const ir::Op& loop, std::size_t trips, bool registers) const {
    const ir::Block& body = ir::ForOp(loop).body();
    const std::size_t size = registers ? count(body) : emitted_size(body);
    return size * trips <= (registers ? kMaxRegisterOps : kMaxOps) &&
           !nested_loop_is_convergent(body);
  }

  /// One copy of the body per trip, each with fresh values and its induction value a constant.
  std::vector<ir::Op> unroll(const ir::Op& op, const std::vector<ConstValue>& trips) {
    const ir::ForOp loop(op);
    std::vector<ir::Op> copies;
    ir::Builder b(k_, copies);
    b.at(op.loc);
    for (const ConstValue& value : trips) {
      ir::Op& induction = b.make(OpKind::Const, op.type);
      set_constant(induction, value);
      std::unordered_map<ir::ValueId, ir::ValueId> renamed = {{loop.induction(), induction.result}};
      for (const ir::Op& body_op : loop.body().ops) b.copy(body_op, renamed);
    }
    return copies;
  }

  ir::Kernel& k_;
  std::unordered_map<ir::ValueId, ConstValue> consts_;
  std::unordered_map<ir::ValueId, std::uint32_t> slots_;  ///< each fragment's slots a lane
};

}  // namespace

void unroll_loops(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  Unroller unroller(kernel);
  ir::rewrite(kernel, ir::Order::InnerFirst,
              [&](ir::Op& op, ir::RewriteSite&) { return unroller.unroll_if_small(op); });
  ir::remove_empty_control_flow(kernel);  // a loop that never ran may have been all there was
}

}  // namespace iron::codegen
