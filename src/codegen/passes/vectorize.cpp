/// Vectorization of strided loops: per-row loops (`for j = thread_id to n step group_size` over
/// base + j) and grid-stride loops (`for i = global_id to n step grid_groups * group_size`),
/// each versioned into 16-byte, then 8-byte vector loops and the original loop; then the merging
/// of consecutive scalar accesses in straight-line code (vectorize_combine.cpp).
///
/// Shape. A loop over u32 on one axis A, not inside another loop (inside branches only when
/// their conditions are uniform across the loop's team, below):
///   row:  `for %j = thread_id.A to %n step group_size.A`
///   grid: `for %j = global_id.A to %n step mul(grid_groups.A, group_size.A)` (either order)
/// whose end %n is uniform across the team (a literal, a constexpr, or math over them such as
/// `tokens * half`), and whose body is straight-line: loads of input tensors and stores of output
/// tensors at `%j` or `%base + %j`, pure ops (%j may be read as a value), and (row loops only)
/// accumulators: `var.store %v, add|max|min(var.load %v, x)`, or first-best pairs (below).
/// Anything else (branches, nested loops, barriers, collectives, atomics, shared memory, other
/// uses of an index) leaves the loop untouched.
///
/// Rewrite. With W lanes of the widest accessed element in 16 bytes (then 8 bytes), S the loop's
/// start and T its step (the same values as in the original loop), widest first: when the facts
/// (vectorize_alignment.hpp: literals, the contract's `require` rules, the conditions of the
/// enclosing branches) prove n a multiple of W, the W-lane loop runs alone, with no test and no
/// fallback; otherwise it is versioned:
///   if n % W == 0 { for %k = S to n / W step T { vector loads at base + k*W; the body once
///   per lane, in lane order, on `extract`ed lanes; vector stores } } else { ...narrower... }
/// and the innermost `else` keeps the original loop. A literal end takes the widest width that
/// divides it.
///
/// Why it is exact. Lanes of one iteration are elements k*W .. k*W+W-1 < n, so every access
/// stays inside the elements the loop touched before. base is provably a multiple of W (from the
/// facts, with n a multiple of W in its version), so base + k*W is W-aligned; with tensors
/// starting 256-byte aligned (the runtime's guarantee, assumed here), every vector access is
/// aligned to its width. Lane l of vector k reads kW + l where the body reads %j as a value: the
/// j of the element it handles.
///
/// What changes. Thread t of the team (the group for a row loop, the whole grid for a grid
/// loop; T threads) now handles elements kW..kW+W-1 for k = t, t + T, ... < n / W instead of
/// j = t, t + T, ... < n: each element is still handled exactly once, by one thread of the team.
/// That is only invisible when nothing depends on which thread of the team handled an element,
/// so the pass requires: every value the body takes from outside is uniform across the team
/// (for a grid loop: constants, constexprs, grid geometry, and pure math and input loads over
/// those, never group_id or a group reduction), and so is every enclosing branch's condition
/// (all of the team's threads reach the loop, or none); stored tensors are written by this loop
/// only and never read by the kernel; and, in a row loop, each accumulator is read after the
/// loop only by the group reduction of its operator (add -> reduce.sum, max -> reduce.max, min ->
/// reduce.min), so a float sum adds the same terms in another order (reduction order is not
/// specified) and max, min and integer sums are unchanged. A grid loop takes no accumulator: a
/// group reduction after it would combine another set of elements per group.
///
/// First-best pairs (argmax). Variables V and I with, in the body,
///   %b = gt %x, (var.load V)  (or `lt %x, V` for a first minimum; the swapped forms too)
///   var.store I, select(%b, %j, var.load I);  var.store V, select(%b, %x, var.load V)
/// and after the loop only R = reduce.max V (reduce.min for a minimum), E = eq V, R and
/// reduce.min(select(E, I, 0xFFFFFFFF)). Both loops walk a thread's own elements in increasing
/// j (lanes in order, k increasing), and the strict comparison keeps the first of equal values,
/// so each thread holds its best value and the smallest j where it holds it. The group's result
/// is the best value of the row and, among the threads holding it, the smallest such j: the
/// smallest j of the best value in the row, whichever thread handled which element. A thread no
/// element improves keeps its initial pair in both loops; its value is the best only when no
/// element of the row improves on the initial value, and then every thread keeps its initial
/// pair in both loops. The fill 0xFFFFFFFF is no smaller than any j.
///
/// Not changed: elementwise kernels (`if i < n { out[i] = f(inp[i]) }`): giving a thread W
/// elements would break the dispatch contract of one element per thread. Loops already
/// vectorized are recognised by their vector accesses, and the branches of a version (`if n % W
/// == 0 { %c = n / W; the vector loop to %c } else …`) are left as they are, so the pass is
/// idempotent.
#include "iron/codegen/passes/vectorize.hpp"

#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "iron/codegen/op_predicates.hpp"
#include "iron/core/builder.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/uses.hpp"
#include "vectorize_alignment.hpp"
#include "vectorize_combine.hpp"

namespace iron::codegen {
namespace {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

constexpr std::int64_t kVectorBytes[] = {16, 8};

/// The threads that share a loop's elements: one group (row loops) or the whole grid.
enum class Team { Group, Grid };

/// Kernel-wide facts: definitions, users, and which values are uniform across a group and
/// across the grid.
class Facts {
 public:
  explicit Facts(const ir::Kernel& k)
      : kernel(k),
        defs_(ir::definitions(k)),
        users_(ir::users(k)),
        group_(k.num_values),
        grid_(k.num_values) {
    ir::walk(k.body, [&](const Op& op) {
      if (op.result >= k.num_values) return;
      group_[op.result] = computes_uniform(op, Team::Group);
      grid_[op.result] = computes_uniform(op, Team::Grid);
    });
  }

  const Op* def(ValueId v) const {
    const auto it = defs_.find(v);
    return it == defs_.end() ? nullptr : it->second;
  }
  const Alignment::Definitions& definitions() const { return defs_; }
  std::span<const Op* const> users(ValueId v) const {
    const auto it = users_.find(v);
    if (it == users_.end()) return {};
    return it->second;
  }
  /// Same value in every thread of the team: constants, geometry the same for the whole team,
  /// group reductions (group only), and pure math and input loads over those.
  bool uniform(ValueId v, Team team) const {
    const std::vector<bool>& bits = team == Team::Group ? group_ : grid_;
    return v < bits.size() && bits[v];
  }

  const ir::Kernel& kernel;

 private:
  bool computes_uniform(const Op& op, Team team) const {
    if (op.kind == OpKind::Builtin) {
      return (team == Team::Group && op.builtin == ir::Builtin::GroupId) ||
             op.builtin == ir::Builtin::GroupSize || op.builtin == ir::Builtin::GridGroups ||
             op.builtin == ir::Builtin::SimdgroupCount;
    }
    if (op.kind == OpKind::Load) {
      return op.lanes == 1 && kernel.params[op.param].kind == ir::ParamKind::Input &&
             uniform(ir::AccessOp(op).index(), team);
    }
    if (ir::op_class(op.kind) == ir::OpClass::Group) return team == Team::Group;
    return is_pure(op) &&
           std::all_of(op.args.begin(), op.args.end(), [&](ValueId a) { return uniform(a, team); });
  }

  Alignment::Definitions defs_;
  std::unordered_map<ValueId, std::vector<const Op*>> users_;
  std::vector<bool> group_;
  std::vector<bool> grid_;
};

/// What the body's ops become in a vector loop.
enum class Role { Index, Load, Store, Uniform, PerLane };

/// One vector width of a loop, and whether its loop needs the `n % W == 0` test.
struct Width {
  std::uint8_t lanes = 0;
  bool versioned = true;
};

/// A loop that matches, and what the rewrite needs to know about it.
struct Plan {
  std::vector<Role> roles;                ///< one per body op
  std::vector<ValueId> bases;             ///< distinct bases of `base + j` indices, in order
  std::optional<std::int64_t> end_value;  ///< a literal end
  std::vector<Width> widths;              ///< widest first; an unversioned one is the last
  bool reads_induction = false;           ///< the body reads %j as a value
};

/// The group reduction that combines per-thread accumulators of `combine`.
std::optional<OpKind> reduction_of(OpKind combine) {
  if (combine == OpKind::Add) return OpKind::ReduceSum;
  if (combine == OpKind::Max) return OpKind::ReduceMax;
  if (combine == OpKind::Min) return OpKind::ReduceMin;
  return std::nullopt;
}

/// A branch around a loop: its condition, and whether the loop is in its then-block.
struct Enclosing {
  ValueId condition = ir::kNoValue;
  bool then_block = true;
};

/// The variables of a first-best pair, and the reduction that picks the best value.
struct BestPair {
  ValueId value = ir::kNoValue;
  ValueId index = ir::kNoValue;
  OpKind reduce = OpKind::ReduceMax;
};

/// Decides whether one loop has the shape, and builds its Plan.
class Matcher {
 public:
  Matcher(const Facts& facts, const Alignment& alignment, const Op& loop,
          std::span<const Enclosing> enclosing, const TargetProfile& target)
      : f_(facts),
        alignment_(alignment),
        loop_(loop),
        body_(loop.blocks[0].ops),
        enclosing_(enclosing),
        target_(target) {}

  std::optional<Plan> run() {
    if (!bounds() || !reached_by_all() || !body() || !tensors() || !accumulators() || !widths()) {
      return std::nullopt;
    }
    return std::move(plan_);
  }

 private:
  bool is_builtin(ValueId v, ir::Builtin b, std::uint8_t axis) const {
    const Op* d = f_.def(v);
    return d != nullptr && d->kind == OpKind::Builtin && d->builtin == b && d->axis == axis;
  }

  /// `mul %x, %y` of grid_groups.A and group_size.A, in either order.
  bool is_grid_threads(ValueId v, std::uint8_t axis) const {
    const Op* d = f_.def(v);
    if (d == nullptr || d->kind != OpKind::Mul) return false;
    const ir::BinaryOp mul(*d);
    const auto is = [&](ValueId operand, ir::Builtin b) { return is_builtin(operand, b, axis); };
    return (is(mul.lhs(), ir::Builtin::GridGroups) && is(mul.rhs(), ir::Builtin::GroupSize)) ||
           (is(mul.lhs(), ir::Builtin::GroupSize) && is(mul.rhs(), ir::Builtin::GridGroups));
  }

  /// `for %j = thread_id.A to %n step group_size.A : u32` (a row loop) or `for %j = global_id.A
  /// to %n step grid_groups.A * group_size.A : u32` (a grid loop), %n uniform across the team.
  bool bounds() {
    const ir::ForOp loop(loop_);
    if (loop_.type != DType::U32 || body_.empty()) return false;
    const Op* start = f_.def(loop.start());
    if (start == nullptr || start->kind != OpKind::Builtin) return false;
    if (is_builtin(loop.start(), ir::Builtin::ThreadId, start->axis) &&
        is_builtin(loop.step(), ir::Builtin::GroupSize, start->axis)) {
      team_ = Team::Group;
    } else if (is_builtin(loop.start(), ir::Builtin::GlobalId, start->axis) &&
               is_grid_threads(loop.step(), start->axis)) {
      team_ = Team::Grid;
    } else {
      return false;
    }
    const Op* end = f_.def(loop.end());
    if (end != nullptr && end->kind == OpKind::Const) plan_.end_value = ir::ConstOp(*end).as_int();
    return f_.uniform(loop.end(), team_);
  }

  /// Every branch around the loop sends the whole team the same way.
  bool reached_by_all() const {
    return std::all_of(enclosing_.begin(), enclosing_.end(),
                       [&](const Enclosing& e) { return f_.uniform(e.condition, team_); });
  }

  bool defined_inside(ValueId v) const { return inside_.contains(v); }
  bool in_body(const Op* op) const {
    const std::less<> before;
    return !before(op, body_.data()) && before(op, body_.data() + body_.size());
  }

  /// Classifies every body op; false on anything outside the shape.
  bool body() {
    const ValueId j = loop_.result;
    for (const Op& op : body_) {
      if (op.result != ir::kNoValue) inside_.insert(op.result);
    }
    std::unordered_set<ValueId> indices = {j};
    per_lane_.insert(j);
    for (const Op& op : body_) {
      if (!op.blocks.empty() || op.lanes != 1) return false;
      const bool access = op.kind == OpKind::Load || op.kind == OpKind::Store;
      if (is_index(op, j)) {
        plan_.roles.push_back(Role::Index);
        indices.insert(op.result);
        continue;
      }
      const bool var_op = op.kind == OpKind::VarLoad || op.kind == OpKind::VarStore;
      for (std::size_t i = var_op ? 1 : 0; i < op.args.size(); ++i) {
        if (!operand_fits(op.args[i], access && i == 0, indices)) return false;
      }
      if (access) {
        if (!has_vectors_of(op.type, target_)) return false;
        plan_.roles.push_back(op.kind == OpKind::Load ? Role::Load : Role::Store);
        ++accesses_;
      } else if (var_op) {
        const ValueId var = ir::VarOp(op).variable();
        if (team_ == Team::Grid || defined_inside(var)) return false;
        vars_.insert(var);
        plan_.roles.push_back(Role::PerLane);
      } else if (is_pure(op)) {
        const bool per_lane = std::any_of(op.args.begin(), op.args.end(),
                                          [&](ValueId a) { return per_lane_.contains(a); });
        if (!per_lane && !f_.uniform(op.result, team_)) return false;
        plan_.roles.push_back(per_lane ? Role::PerLane : Role::Uniform);
      } else {
        return false;
      }
      const bool varies = op.kind == OpKind::Load || plan_.roles.back() == Role::PerLane;
      if (varies && op.result != ir::kNoValue) per_lane_.insert(op.result);
    }
    return accesses_ > 0;
  }

  /// An index (%j or base + %j) where a load or store takes its index; %j itself also as a
  /// value (each lane's own j); any other operand comes from the body or is uniform across the
  /// team.
  bool operand_fits(ValueId v, bool index_slot, const std::unordered_set<ValueId>& indices) {
    if (v == loop_.result && !index_slot) {
      plan_.reads_induction = true;
      return true;
    }
    if (indices.contains(v)) return index_slot;
    return !index_slot && (defined_inside(v) || f_.uniform(v, team_));
  }

  /// `add %base, %j` (either order) with a base from outside the loop, uniform across the team.
  bool is_index(const Op& op, ValueId j) {
    if (op.kind != OpKind::Add) return false;
    const ir::BinaryOp add(op);
    if (add.lhs() != j && add.rhs() != j) return false;
    const ValueId base = add.lhs() == j ? add.rhs() : add.lhs();
    if (base == j || defined_inside(base) || !f_.uniform(base, team_)) return false;
    if (std::find(plan_.bases.begin(), plan_.bases.end(), base) == plan_.bases.end()) {
      plan_.bases.push_back(base);
    }
    return true;
  }

  /// Loads read inputs; stored tensors are written by this loop alone and read nowhere.
  bool tensors() const {
    std::unordered_set<int> stored;
    for (std::size_t i = 0; i < body_.size(); ++i) {
      const int param = body_[i].param;
      if (plan_.roles[i] == Role::Store) stored.insert(param);
      if (plan_.roles[i] == Role::Load && f_.kernel.params[param].kind != ir::ParamKind::Input) {
        return false;
      }
    }
    bool alone = true;
    ir::walk(f_.kernel.body, [&](const Op& op) {
      const bool memory = op.kind == OpKind::Load || op.kind == OpKind::Store ||
                          ir::op_class(op.kind) == ir::OpClass::Atomic;
      if (!memory || !stored.contains(op.param)) return;
      alone = alone && in_body(&op) && op.kind == OpKind::Store;
    });
    return alone;
  }

  /// Every var of the body is an accumulator or half of a first-best pair.
  bool accumulators() const {
    return std::all_of(vars_.begin(), vars_.end(), [&](ValueId var) {
      if (combined(var)) return true;
      const std::optional<BestPair> pair = best_pair(var);
      return pair && read_as_best(*pair);
    });
  }

  /// The body's only var.load and var.store of `var` (null unless there is one of each).
  std::pair<const Op*, const Op*> load_and_store(ValueId var) const {
    const Op* load = nullptr;
    const Op* store = nullptr;
    int count = 0;
    for (const Op& op : body_) {
      const bool var_op = op.kind == OpKind::VarLoad || op.kind == OpKind::VarStore;
      if (!var_op || ir::VarOp(op).variable() != var) continue;
      ++count;
      (op.kind == OpKind::VarLoad ? load : store) = &op;
    }
    if (count != 2 || load == nullptr || store == nullptr) return {nullptr, nullptr};
    return {load, store};
  }

  /// The op inside the body that defines `v`, if it is one of `kind`.
  const Op* inside_def(ValueId v, OpKind kind) const {
    const Op* d = defined_inside(v) ? f_.def(v) : nullptr;
    return d != nullptr && d->kind == kind ? d : nullptr;
  }

  bool only_users(ValueId v, std::initializer_list<const Op*> allowed) const {
    return std::all_of(f_.users(v).begin(), f_.users(v).end(), [&](const Op* u) {
      return std::find(allowed.begin(), allowed.end(), u) != allowed.end();
    });
  }

  /// `%a = var.load %v; %b = OP %a, %x; var.store %v, %b` inside, read outside only by the
  /// group reduction of OP.
  bool combined(ValueId var) const {
    const auto [load, store] = load_and_store(var);
    if (store == nullptr) return false;
    const ValueId stored = ir::VarOp(*store).value();
    if (!defined_inside(stored)) return false;
    const Op* combine = f_.def(stored);
    if (!reduction_of(combine->kind) || f_.users(combine->result).size() != 1) return false;
    const ValueId a = ir::BinaryOp(*combine).lhs();
    const ValueId b = ir::BinaryOp(*combine).rhs();
    if ((a == load->result) == (b == load->result)) return false;
    if (f_.users(load->result).size() != 1) return false;
    return read_by_reduction(var, *reduction_of(combine->kind));
  }

  /// Outside the loop, `var` is never stored and each of its loads feeds only `reduce`.
  bool read_by_reduction(ValueId var, OpKind reduce) const {
    for (const Op* user : f_.users(var)) {
      if (in_body(user)) continue;
      if (user->kind != OpKind::VarLoad) return false;
      for (const Op* r : f_.users(user->result)) {
        if (r->kind != reduce) return false;
      }
    }
    return true;
  }

  /// The first-best pair `var` belongs to (as its value or its index), by its body alone.
  std::optional<BestPair> best_pair(ValueId var) const {
    const Op* store = load_and_store(var).second;
    const Op* pick =
        store == nullptr ? nullptr : inside_def(ir::VarOp(*store).value(), OpKind::Select);
    if (pick == nullptr) return std::nullopt;
    const Op* better = f_.def(ir::SelectOp(*pick).condition());
    if (better == nullptr || !defined_inside(better->result) ||
        (better->kind != OpKind::Gt && better->kind != OpKind::Lt)) {
      return std::nullopt;
    }
    // The two selects on `better`: the value's (`select(b, x, a)`, a the value's load and b
    // comparing x with a) and the index's (`select(b, j, c)`, c the index's load).
    const Op* value_pick = nullptr;
    const Op* index_pick = nullptr;
    for (const Op* u : f_.users(better->result)) {
      if (u->kind != OpKind::Select || !in_body(u) ||
          ir::SelectOp(*u).condition() != better->result) {
        return std::nullopt;
      }
      (ir::SelectOp(*u).if_true() == loop_.result ? index_pick : value_pick) = u;
    }
    if (value_pick == nullptr || index_pick == nullptr || f_.users(better->result).size() != 2) {
      return std::nullopt;
    }
    const ir::BinaryOp compare(*better);
    const ir::SelectOp vp(*value_pick);
    const ValueId best = vp.if_false();
    const ValueId x = vp.if_true();
    // x > best or best < x keeps a maximum; x < best or best > x a minimum.
    const bool x_first = compare.lhs() == x && compare.rhs() == best;
    const bool best_first = compare.lhs() == best && compare.rhs() == x;
    if (x_first == best_first) return std::nullopt;
    const bool maximum = (better->kind == OpKind::Gt) == x_first;
    const Op* best_load = inside_def(best, OpKind::VarLoad);
    const Op* index_load = inside_def(ir::SelectOp(*index_pick).if_false(), OpKind::VarLoad);
    if (best_load == nullptr || index_load == nullptr) return std::nullopt;
    const BestPair pair{ir::VarOp(*best_load).variable(), ir::VarOp(*index_load).variable(),
                        maximum ? OpKind::ReduceMax : OpKind::ReduceMin};
    if (pair.value == pair.index || (var != pair.value && var != pair.index)) return std::nullopt;
    const auto [v_load, v_store] = load_and_store(pair.value);
    const auto [i_load, i_store] = load_and_store(pair.index);
    if (v_load != best_load || i_load != index_load || v_store == nullptr || i_store == nullptr ||
        ir::VarOp(*v_store).value() != value_pick->result ||
        ir::VarOp(*i_store).value() != index_pick->result) {
      return std::nullopt;
    }
    const bool private_values =
        only_users(best, {better, value_pick}) && only_users(index_load->result, {index_pick}) &&
        only_users(value_pick->result, {v_store}) && only_users(index_pick->result, {i_store});
    if (!private_values) return std::nullopt;
    return pair;
  }

  /// The var.loads of `var` outside the loop; empty with a null entry if something else uses it.
  std::vector<const Op*> loads_after_loop(ValueId var) const {
    std::vector<const Op*> loads;
    for (const Op* user : f_.users(var)) {
      if (in_body(user)) continue;
      if (user->kind != OpKind::VarLoad) return {nullptr};
      loads.push_back(user);
    }
    return loads;
  }

  /// After the loop: R = reduce V, E = eq V, R (either order), reduce.min(select(E, I, ~0u)).
  bool read_as_best(const BestPair& p) const {
    const std::vector<const Op*> value_loads = loads_after_loop(p.value);
    const std::vector<const Op*> index_loads = loads_after_loop(p.index);
    const auto is_load = [](const std::vector<const Op*>& loads, ValueId v) {
      return std::any_of(loads.begin(), loads.end(),
                         [&](const Op* l) { return l != nullptr && l->result == v; });
    };
    const auto is_best = [&](ValueId v) {
      const Op* r = f_.def(v);
      return r != nullptr && r->kind == p.reduce && is_load(value_loads, r->args[0]);
    };
    const auto is_tie = [&](const Op* e) {
      if (e->kind != OpKind::Eq) return false;
      const ir::BinaryOp eq(*e);
      return (is_load(value_loads, eq.lhs()) && is_best(eq.rhs())) ||
             (is_load(value_loads, eq.rhs()) && is_best(eq.lhs()));
    };
    for (const Op* load : value_loads) {
      if (load == nullptr) return false;
      for (const Op* u : f_.users(load->result)) {
        if (u->kind != p.reduce && !is_tie(u)) return false;
      }
    }
    for (const Op* load : index_loads) {
      if (load == nullptr) return false;
      for (const Op* u : f_.users(load->result)) {
        if (u->kind != OpKind::Select) return false;
        const ir::SelectOp pick(*u);
        const Op* tie = f_.def(pick.condition());
        const Op* fill = f_.def(pick.if_false());
        const bool shape = tie != nullptr && is_tie(tie) && pick.if_true() == load->result &&
                           fill != nullptr && fill->kind == OpKind::Const &&
                           fill->type == DType::U32 && ir::ConstOp(*fill).as_int() == 0xFFFFFFFF;
        if (!shape) return false;
        for (const Op* r : f_.users(u->result)) {
          if (r->kind != OpKind::ReduceMin) return false;
        }
      }
    }
    return true;
  }

  /// The widths whose alignment is provable, widest first, up to the first that needs no test.
  bool widths() {
    std::int64_t element = 0;
    for (std::size_t i = 0; i < body_.size(); ++i) {
      if (plan_.roles[i] == Role::Load || plan_.roles[i] == Role::Store) {
        element = std::max(element, static_cast<std::int64_t>(dtype_size(body_[i].type)));
      }
    }
    const ValueId end = ir::ForOp(loop_).end();
    for (std::int64_t bytes : kVectorBytes) {
      const std::int64_t lanes = bytes / element;
      if (bytes > target_.max_vector_bytes || lanes < 2) continue;
      if (plan_.end_value && *plan_.end_value % lanes != 0) continue;
      Alignment in_version = alignment_;
      const bool proven =
          plan_.end_value.has_value() || in_version.multiple_of(end, static_cast<int>(lanes));
      in_version.assume(end, Alignment::log2_of(static_cast<int>(lanes)));
      const bool aligned = std::all_of(plan_.bases.begin(), plan_.bases.end(), [&](ValueId b) {
        return in_version.multiple_of(b, static_cast<int>(lanes));
      });
      if (!aligned) continue;
      plan_.widths.push_back({static_cast<std::uint8_t>(lanes), !proven});
      if (proven) break;
    }
    return !plan_.widths.empty();
  }

  const Facts& f_;
  const Alignment& alignment_;
  const Op& loop_;
  const std::vector<Op>& body_;
  std::span<const Enclosing> enclosing_;
  const TargetProfile& target_;
  Plan plan_;
  Team team_ = Team::Group;
  std::unordered_set<ValueId> inside_;
  std::unordered_set<ValueId> per_lane_;
  std::unordered_set<ValueId> vars_;
  int accesses_ = 0;
};

/// Builds the versions of one matched loop.
class Versioner {
 public:
  Versioner(ir::Kernel& kernel, const Plan& plan) : k_(kernel), plan_(plan) {}

  /// The ops that replace `loop`: the versions, the last of which keeps `loop` itself unless
  /// the narrowest width needs no test.
  std::vector<Op> versions(Op loop) {
    std::vector<Op> out;
    const ValueId n = ir::ForOp(loop).end();
    std::vector<Op>* at = &out;
    for (const Width& w : plan_.widths) {
      ir::Builder b(k_, *at);
      b.at(loop.loc);
      const ValueId width = b.constant(DType::U32, w.lanes);
      if (!w.versioned) {
        // A literal end's count is a literal (the width divides it); a proven one's n / W.
        const std::int64_t vectors = plan_.end_value.value_or(0) / w.lanes;
        const ValueId count = plan_.end_value ? b.constant(DType::U32, static_cast<double>(vectors))
                                              : b.make(OpKind::Div, DType::U32, {n, width}).result;
        vector_loop(b, loop, w.lanes, width, count);
        return out;
      }
      const ValueId rem = b.make(OpKind::Rem, DType::U32, {n, width}).result;
      const ValueId zero = b.constant(DType::U32, 0);
      const ValueId divisible = b.make(OpKind::Eq, DType::Bool, {rem, zero}).result;
      const ir::IfOp branch(b.branch(divisible));
      ir::Builder then(k_, branch.then_block().ops);
      then.at(loop.loc);
      const ValueId count = then.make(OpKind::Div, DType::U32, {n, width}).result;
      vector_loop(then, loop, w.lanes, width, count);
      at = &branch.else_block().ops;
    }
    at->push_back(std::move(loop));
    return out;
  }

 private:
  /// Makes `for %k = start to count step step` with `b`, each iteration W lanes of the body.
  void vector_loop(ir::Builder& b, const Op& scalar_loop, std::uint8_t lanes, ValueId width,
                   ValueId count) {
    const ir::ForOp scalar(scalar_loop);
    const std::vector<Op>& body = scalar.body().ops;
    const ir::ForOp vloop(b.loop(scalar.start(), count, scalar.step(), scalar_loop.type));
    ir::Builder out(k_, vloop.body().ops);
    out.at(scalar_loop.loc);
    const ValueId first = out.make(OpKind::Mul, DType::U32, {vloop.induction(), width}).result;
    // A body value that has one value for all lanes: %j's is the first lane's index, an
    // index's the first lane's, a load's the vector it loads.
    std::unordered_map<ValueId, ValueId> whole = {{scalar.induction(), first}};
    std::unordered_map<ValueId, ValueId> base_index;
    std::vector<std::unordered_map<ValueId, ValueId>> lane(lanes);
    if (plan_.reads_induction) {  // lane l handles element first + l
      lane[0][scalar.induction()] = first;
      for (std::uint8_t l = 1; l < lanes; ++l) {
        const ValueId offset = out.constant(DType::U32, l);
        lane[l][scalar.induction()] = out.make(OpKind::Add, DType::U32, {first, offset}).result;
      }
    }
    for (std::size_t i = 0; i < body.size(); ++i) {
      const Op& op = body[i];
      switch (plan_.roles[i]) {
        case Role::Index: {  // base + k*W, once per base, in the add's operand order
          const ir::BinaryOp add(op);
          const ValueId base = add.lhs() == scalar.induction() ? add.rhs() : add.lhs();
          auto [it, fresh] = base_index.try_emplace(base);
          if (fresh) it->second = out.copy(op, whole).result;
          whole[op.result] = it->second;
          break;
        }
        case Role::Load: {
          Op& load = out.copy(op, whole);
          load.lanes = lanes;
          const ValueId vector = load.result;
          out.at(op.loc);
          for (std::uint8_t l = 0; l < lanes; ++l) {
            Op& extract = out.make(OpKind::Extract, op.type, {vector});
            extract.ivalue = l;
            lane[l][op.result] = extract.result;
          }
          break;
        }
        case Role::Uniform: {
          const ValueId v = out.copy(op, lane[0]).result;
          for (auto& m : lane) m[op.result] = v;
          break;
        }
        case Role::Store:
        case Role::PerLane:
          break;
      }
    }
    for (std::uint8_t l = 0; l < lanes; ++l) {
      for (std::size_t i = 0; i < body.size(); ++i) {
        if (plan_.roles[i] == Role::PerLane) out.copy(body[i], lane[l]);
      }
    }
    for (std::size_t i = 0; i < body.size(); ++i) {
      if (plan_.roles[i] != Role::Store) continue;
      const ir::AccessOp scalar_store(body[i]);
      Op& store = out.insert(body[i]);
      store.lanes = lanes;
      store.args = {whole.at(scalar_store.index())};
      for (std::uint8_t l = 0; l < lanes; ++l) {
        store.args.push_back(mapped(scalar_store.value(), lane[l]));
      }
    }
  }

  /// `v` in a lane's copy of the body (values from outside the loop stay themselves).
  static ValueId mapped(ValueId v, const std::unordered_map<ValueId, ValueId>& lane) {
    const auto it = lane.find(v);
    return it == lane.end() ? v : it->second;
  }

  ir::Kernel& k_;
  const Plan& plan_;
};

/// A version this pass made: its then-block is `%c = div %n, W` and the vector loop to %c.
bool is_version(const Op& branch) {
  const std::vector<Op>& then = ir::IfOp(branch).then_block().ops;
  if (then.size() != 2 || then[0].kind != OpKind::Div || then[1].kind != OpKind::For) return false;
  if (ir::ForOp(then[1]).end() != then[0].result) return false;
  bool vector = false;
  ir::walk(then[1].blocks[0], [&](const Op& op) { vector = vector || op.lanes > 1; });
  return vector;
}

/// Vectorizes the loops of a block and, through branches, of the blocks inside it (never the
/// loops inside other loops).
class LoopWalker {
 public:
  LoopWalker(ir::Kernel& kernel, const TargetProfile& target) : k_(kernel), target_(target) {}

  void visit(std::vector<Op>& ops) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == OpKind::If && !is_version(ops[i])) {
        const ValueId condition = ir::IfOp(ops[i]).condition();
        for (std::size_t b = 0; b < 2; ++b) {
          enclosing_.push_back({condition, b == 0});
          visit(ops[i].blocks[b].ops);
          enclosing_.pop_back();
        }
        continue;
      }
      if (ops[i].kind != OpKind::For || ops[i].blocks.size() != 1) continue;
      // Matched against facts about the whole kernel as it stands: a rewrite moves ops, so the
      // facts are gathered again after each one (and only then: gathering them is a walk of the
      // whole kernel, and a kernel has many loops).
      if (!facts_) facts_.emplace(k_);
      const Facts& facts = *facts_;
      Alignment alignment(k_, facts.definitions());
      for (const Enclosing& e : enclosing_) {
        if (e.then_block) alignment.assume_true(e.condition);
      }
      std::optional<Plan> plan = Matcher(facts, alignment, ops[i], enclosing_, target_).run();
      if (!plan) continue;
      std::vector<Op> versions = Versioner(k_, *plan).versions(std::move(ops[i]));
      facts_.reset();
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
      ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i),
                 std::make_move_iterator(versions.begin()),
                 std::make_move_iterator(versions.end()));
      i += versions.size() - 1;
    }
  }

 private:
  ir::Kernel& k_;
  const TargetProfile& target_;
  std::vector<Enclosing> enclosing_;
  std::optional<Facts> facts_;  ///< the kernel's facts since the last rewrite
};

}  // namespace

void vectorize(ir::Kernel& kernel, const TargetProfile& target) {
  // Its own walk rather than the rewrite driver's: each loop is matched against facts about the
  // whole kernel as it stands, which the driver's walk would hide.
  LoopWalker(kernel, target).visit(kernel.body.ops);
  combine_accesses(kernel, target);
}

}  // namespace iron::codegen
