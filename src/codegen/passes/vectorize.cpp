/// Vectorization of strided loops: per-row loops (`for j = thread_id to n step group_size` over
/// base + j) and grid-stride loops (`for i = global_id to n step grid_groups * group_size`).
/// Each such loop is versioned into 16-byte, then 8-byte vector loops and the original loop.
///
/// Shape. A top-level loop over u32 whose end %n is a constexpr (or a literal), on one axis A:
///   row:  `for %j = thread_id.A to %n step group_size.A`
///   grid: `for %j = global_id.A to %n step mul(grid_groups.A, group_size.A)` (either order)
/// and whose body is straight-line: loads of input tensors and stores of output tensors at `%j`
/// or `%base + %j`, pure ops, and (row loops only) accumulators (`var.store %v, add|max|min(
/// var.load %v, x)`). Anything else (branches, nested loops, barriers, collectives, atomics,
/// shared memory, other uses of %j or of an index) leaves the loop untouched.
///
/// Rewrite. With W lanes of the widest accessed element in 16 bytes (then 8 bytes), S the loop's
/// start and T its step (the same values as in the original loop):
///   if n % W == 0 { for %k = S to n / W step T { vector loads at base + k*W; the body once
///   per lane, in lane order, on `extract`ed lanes; vector stores } } else { ...narrower... }
/// and the innermost `else` keeps the original loop. A literal end needs no `if`.
///
/// Why it is exact. Lanes of one iteration are elements k*W .. k*W+W-1 < n, so every access
/// stays inside the elements the loop touched before. base is provably a multiple of W (n, a
/// multiple of W in this version, times anything; or a literal multiple), so base + k*W is
/// W-aligned; with tensors starting 256-byte aligned (the runtime's guarantee, assumed here),
/// every vector access is aligned to its width.
///
/// What changes. Thread t of the team (the group for a row loop, the whole grid for a grid
/// loop; T threads) now handles elements kW..kW+W-1 for k = t, t + T, ... < n / W instead of
/// j = t, t + T, ... < n: each element is still handled exactly once, by one thread of the team.
/// That is only invisible when nothing depends on which thread of the team handled an element,
/// so the pass requires: every value the body takes from outside is uniform across the team
/// (for a grid loop: constants, constexprs, grid geometry, and pure math and input loads over
/// those, never group_id or a group reduction); stored tensors are written by this loop only and
/// never read by the kernel; and, in a row loop, each accumulator is read after the loop only by
/// the group reduction of its operator (add -> reduce.sum, max -> reduce.max, min ->
/// reduce.min), so a float sum adds the same terms in another order (reduction order is not
/// specified) and max, min and integer sums are unchanged. A grid loop takes no accumulator: a
/// group reduction after it would combine another set of elements per group.
///
/// Not changed: elementwise kernels (`if i < n { out[i] = f(inp[i]) }`): giving a thread W
/// elements would break the dispatch contract of one element per thread. Loops already
/// vectorized are recognised by their vector accesses (and their fallbacks sit inside an `if`,
/// not at the top level), so the pass is idempotent.
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

  std::unordered_map<ValueId, const Op*> defs_;
  std::unordered_map<ValueId, std::vector<const Op*>> users_;
  std::vector<bool> group_;
  std::vector<bool> grid_;
};

/// What the body's ops become in a vector loop.
enum class Role { Index, Load, Store, Uniform, PerLane };

/// A loop that matches, and what the rewrite needs to know about it.
struct Plan {
  std::vector<Role> roles;                ///< one per body op
  std::vector<ValueId> bases;             ///< distinct bases of `base + j` indices, in order
  int end_param = -1;                     ///< the constexpr end (versioned on), or
  std::optional<std::int64_t> end_value;  ///< the literal end
  std::vector<std::uint8_t> lanes;        ///< the vector widths to build, widest first
};

/// The group reduction that combines per-thread accumulators of `combine`.
std::optional<OpKind> reduction_of(OpKind combine) {
  if (combine == OpKind::Add) return OpKind::ReduceSum;
  if (combine == OpKind::Max) return OpKind::ReduceMax;
  if (combine == OpKind::Min) return OpKind::ReduceMin;
  return std::nullopt;
}

/// Decides whether one top-level loop has the shape, and builds its Plan.
class Matcher {
 public:
  Matcher(const Facts& facts, const Op& loop, const TargetProfile& target)
      : f_(facts), loop_(loop), body_(loop.blocks[0].ops), target_(target) {}

  std::optional<Plan> run() {
    if (!bounds() || !body() || !tensors() || !accumulators() || !widths()) return std::nullopt;
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
  /// to %n step grid_groups.A * group_size.A : u32` (a grid loop), %n a constexpr or a literal.
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
    if (end != nullptr && end->kind == OpKind::ConstexprRef) {
      plan_.end_param = end->param;
    } else if (end != nullptr && end->kind == OpKind::Const) {
      plan_.end_value = ir::ConstOp(*end).as_int();
    }
    return plan_.end_param >= 0 || plan_.end_value;
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

  /// An index (%j or base + %j) only where a load or store takes its index, and there nothing
  /// else; any other operand comes from the body or is uniform across the team.
  bool operand_fits(ValueId v, bool index_slot, const std::unordered_set<ValueId>& indices) const {
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

  /// Every var of the body is an accumulator: `%a = var.load %v; %b = OP %a, %x; var.store
  /// %v, %b` inside, and read outside only by the group reduction of OP.
  bool accumulators() const {
    for (ValueId var : vars_) {
      const Op* store = nullptr;
      int loads = 0;
      int stores = 0;
      for (const Op& op : body_) {
        const bool var_op = op.kind == OpKind::VarLoad || op.kind == OpKind::VarStore;
        if (!var_op || ir::VarOp(op).variable() != var) continue;
        if (op.kind == OpKind::VarLoad) {
          ++loads;
        } else {
          ++stores;
          store = &op;
        }
      }
      if (loads != 1 || stores != 1) return false;
      const ValueId stored = ir::VarOp(*store).value();
      if (!defined_inside(stored)) return false;
      const Op* combine = f_.def(stored);
      if (!reduction_of(combine->kind) || f_.users(combine->result).size() != 1) return false;
      const Op* a = f_.def(ir::BinaryOp(*combine).lhs());
      const Op* b = f_.def(ir::BinaryOp(*combine).rhs());
      const auto loads_var = [&](const Op* d) {
        return d != nullptr && d->kind == OpKind::VarLoad && ir::VarOp(*d).variable() == var;
      };
      const bool a_loads = loads_var(a);
      const bool b_loads = loads_var(b);
      const Op* load = a_loads ? a : b;
      if (a_loads == b_loads || f_.users(load->result).size() != 1) return false;
      if (!read_by_reduction(var, *reduction_of(combine->kind))) return false;
    }
    return true;
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

  /// `v` is a multiple of `lanes` when the end is one (a constexpr end is versioned on it).
  bool multiple(ValueId v, std::int64_t lanes) const {
    const Op* d = f_.def(v);
    if (d == nullptr) return false;
    if (d->kind == OpKind::ConstexprRef) return d->param == plan_.end_param;
    if (d->kind == OpKind::Const) return ir::ConstOp(*d).as_int() % lanes == 0;
    if (d->kind == OpKind::Mul) {
      const ir::BinaryOp mul(*d);
      return multiple(mul.lhs(), lanes) || multiple(mul.rhs(), lanes);
    }
    if (d->kind == OpKind::Shl) {
      const ir::BinaryOp shl(*d);
      const Op* shift = f_.def(shl.rhs());
      const std::int64_t bits =
          shift != nullptr && shift->kind == OpKind::Const ? ir::ConstOp(*shift).as_int() : -1;
      const bool wide = bits >= 0 && bits < 32 && (std::int64_t{1} << bits) % lanes == 0;
      return wide || multiple(shl.lhs(), lanes);
    }
    return false;
  }

  /// The widths whose alignment is provable, widest first; one for a literal end.
  bool widths() {
    std::int64_t element = 0;
    for (std::size_t i = 0; i < body_.size(); ++i) {
      if (plan_.roles[i] == Role::Load || plan_.roles[i] == Role::Store) {
        element = std::max(element, static_cast<std::int64_t>(dtype_size(body_[i].type)));
      }
    }
    for (std::int64_t bytes : kVectorBytes) {
      const std::int64_t lanes = bytes / element;
      if (bytes > target_.max_vector_bytes || lanes < 2) continue;
      if (plan_.end_value && *plan_.end_value % lanes != 0) continue;
      const bool aligned = std::all_of(plan_.bases.begin(), plan_.bases.end(),
                                       [&](ValueId b) { return multiple(b, lanes); });
      if (aligned) plan_.lanes.push_back(static_cast<std::uint8_t>(lanes));
      if (aligned && plan_.end_value) break;
    }
    return !plan_.lanes.empty();
  }

  const Facts& f_;
  const Op& loop_;
  const std::vector<Op>& body_;
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

  /// The ops that replace `loop`: the versions, the last of which keeps `loop` itself.
  std::vector<Op> versions(Op loop) {
    std::vector<Op> out;
    if (plan_.end_value) {  // a literal end: the one width that divides it, unversioned
      ir::Builder b(k_, out);
      b.at(loop.loc);
      const std::uint8_t lanes = plan_.lanes.front();
      const ValueId width = b.constant(DType::U32, lanes);
      const std::int64_t vectors = *plan_.end_value / lanes;  // exact: the width divides it
      const ValueId count = b.constant(DType::U32, static_cast<double>(vectors));
      vector_loop(b, loop, lanes, width, count);
      return out;
    }
    const ValueId n = ir::ForOp(loop).end();
    std::vector<Op>* at = &out;
    for (std::uint8_t lanes : plan_.lanes) {
      ir::Builder b(k_, *at);
      b.at(loop.loc);
      const ValueId width = b.constant(DType::U32, lanes);
      const ValueId rem = b.make(OpKind::Rem, DType::U32, {n, width}).result;
      const ValueId zero = b.constant(DType::U32, 0);
      const ValueId divisible = b.make(OpKind::Eq, DType::Bool, {rem, zero}).result;
      const ir::IfOp branch(b.branch(divisible));
      ir::Builder then(k_, branch.then_block().ops);
      then.at(loop.loc);
      const ValueId count = then.make(OpKind::Div, DType::U32, {n, width}).result;
      vector_loop(then, loop, lanes, width, count);
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

}  // namespace

void vectorize(ir::Kernel& kernel, const TargetProfile& target) {
  // Its own walk over the top-level ops rather than the rewrite driver's: each loop is matched
  // against facts about the whole kernel as it stands, which the driver's walk would hide.
  std::vector<Op>& ops = kernel.body.ops;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != OpKind::For || ops[i].blocks.size() != 1) continue;
    const Facts facts(kernel);
    std::optional<Plan> plan = Matcher(facts, ops[i], target).run();
    if (!plan) continue;
    std::vector<Op> versions = Versioner(kernel, *plan).versions(std::move(ops[i]));
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
    ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i),
               std::make_move_iterator(versions.begin()), std::make_move_iterator(versions.end()));
    i += versions.size() - 1;
  }
}

}  // namespace iron::codegen
