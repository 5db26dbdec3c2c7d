/// Combining consecutive scalar accesses into vector accesses (see vectorize.cpp for the proof).
///
/// Shape. In one block, scalar loads (or stores) of one tensor or one shared-memory allocation
/// whose indices are `b` or `add b, c` with the same value b and literal offsets c >= 0. The
/// offsets c … c + L - 1, all present, with c and b multiples of L (vectorize_alignment.hpp:
/// literals, `require` rules, enclosing branch conditions), become one access of L lanes: L
/// elements of the widest of 16 and 8 bytes that fits. Loads move up to the first of them (their
/// results become `extract`s of the vector), stores down to the last. Among the accesses left, a
/// base may also be the sum of two values x and y, the index written `x + (y + c)`,
/// `(x + y) + c` or `x + y` (an epilogue's `out[r * n + (c0 + e)]`), both multiples of L.
///
/// Why it is exact. The thread reads (writes) the same elements with the same values; only the
/// order of its own accesses changes. Between the first and the last access of a group there is
/// no branch or loop (whose contents could touch the tensor), no barrier or collective (which
/// could order the access against other threads), and no access of the same tensor that could
/// see the move: for loads no store or atomic, for stores no load, atomic or store at another
/// base (a store at the same base and another offset writes another element). Shared memory is
/// written by other threads and asynchronous copies as well, so between shared accesses only pure
/// ops and tensor accesses may lie. Alignment: b + c is a multiple of L, tensors start 256-byte
/// aligned and every shared allocation 16-byte aligned (layout_shared_memory; each target's
/// declarations).
///
/// Shared memory gains most where a thread reads a run of consecutive elements that its
/// neighbours' runs follow (a staged epilogue: lane l at 8·l): scalar reads put 8 lanes on one
/// bank, 16-byte ones 2.
#include "vectorize_combine.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "iron/core/builder.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/uses.hpp"
#include "vectorize_alignment.hpp"

namespace iron::codegen {
namespace {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

constexpr std::int64_t kVectorBytes[] = {16, 8};

/// The accesses that may merge: same direction, tensor, element type and base: one value, or
/// the sum of two (`base2` set) for indices written `x + (y + c)`.
struct GroupKey {
  bool store = false;
  int param = -1;   ///< the tensor, or -1
  int shared = -1;  ///< the shared allocation, or -1
  DType type = DType::F32;
  ValueId base = ir::kNoValue;
  ValueId base2 = ir::kNoValue;
  bool operator<(const GroupKey& o) const {
    return std::tie(store, param, shared, type, base, base2) <
           std::tie(o.store, o.param, o.shared, o.type, o.base, o.base2);
  }
};

/// An index as a base (one value, or the sum of two) and a literal offset.
struct SplitIndex {
  ValueId base = ir::kNoValue;
  ValueId base2 = ir::kNoValue;
  std::int64_t offset = 0;
};

/// One merge: the accesses at offsets offset .. offset + lanes - 1, by position in the block.
struct Merge {
  GroupKey key;
  std::int64_t offset = 0;
  std::vector<std::size_t> members;  ///< positions, in lane order
};

bool is_tensor_access(const Op& op) {
  return (op.kind == OpKind::Load || op.kind == OpKind::Store) && op.shared < 0 && op.param >= 0;
}

bool is_shared_access(const Op& op) {
  return (op.kind == OpKind::SharedLoad || op.kind == OpKind::SharedStore) && op.shared >= 0;
}

/// Whether `op` can neither change shared memory (nor, past shared stores that move, read it):
/// pure ops and tensor accesses; anything else with an effect or a memory access (shared
/// accesses, fragment and asynchronous copies, waits, which make copies land) might.
bool leaves_shared_memory_alone(const Op& op, bool moving_stores) {
  const ir::OpInfo& info = ir::op_info(op.kind);
  if (is_tensor_access(op)) return true;
  if (info.has(ir::kEffect) || info.has(ir::kWritesMemory)) return false;
  return !(moving_stores && info.has(ir::kReadsMemory));
}

/// Finds the merges of one block.
class BlockPlanner {
 public:
  BlockPlanner(const std::vector<Op>& ops, Alignment& alignment, const Alignment::Definitions& defs,
               const TargetProfile& target)
      : ops_(ops), alignment_(alignment), defs_(defs), target_(target) {}

  /// Two rounds: indices as one base and an offset; then, among the accesses left, indices as
  /// the sum of two values and an offset (`x + (y + e)`, what an epilogue handed columns c + e
  /// of row r makes of `out[r * n + c + e]`), so that the first round's merges stay as they were.
  std::vector<Merge> run() {
    std::vector<Merge> merges;
    std::unordered_set<std::size_t> merged;
    for (const bool pairs : {false, true}) {
      std::map<GroupKey, std::map<std::int64_t, std::size_t>> groups;  // offset -> position
      for (std::size_t i = 0; i < ops_.size(); ++i) {
        const Op& op = ops_[i];
        if (!is_tensor_access(op) && !is_shared_access(op)) continue;
        if (op.lanes != 1 || !has_vectors_of(op.type, target_)) continue;
        if (merged.contains(i)) continue;
        const ValueId index = ir::AccessOp(op).index();
        const std::optional<SplitIndex> split = pairs ? split_pair(index) : split_index(index);
        if (!split || split->offset < 0) continue;
        const bool store = ir::op_info(op.kind).has(ir::kWritesMemory);
        const GroupKey key{store,       is_shared_access(op) ? -1 : op.param,
                           op.shared,   op.type,
                           split->base, split->base2};
        groups[key].try_emplace(split->offset, i);  // a second access at one offset stays scalar
      }
      const std::size_t before = merges.size();
      for (const auto& [key, offsets] : groups) plan_group(key, offsets, merges);
      for (std::size_t m = before; m < merges.size(); ++m) {
        merged.insert(merges[m].members.begin(), merges[m].members.end());
      }
    }
    return merges;
  }

 private:
  const Op* definition(ValueId v) const {
    const auto it = defs_.find(v);
    return it == defs_.end() ? nullptr : it->second;
  }

  /// The value of integer literal `v`, if it is one.
  std::optional<std::int64_t> literal(ValueId v) const {
    const Op* d = definition(v);
    if (d == nullptr || d->kind != OpKind::Const || !is_integer(d->type)) return std::nullopt;
    return ir::ConstOp(*d).as_int();
  }

  /// `add b, c` (either order, c a literal) as (b, c); any other index as (index, 0).
  std::optional<SplitIndex> split_index(ValueId index) const {
    const Op* d = definition(index);
    if (d == nullptr || d->kind != OpKind::Add) return SplitIndex{index, ir::kNoValue, 0};
    const ir::BinaryOp add(*d);
    for (const auto& [b, c] : {std::pair{add.lhs(), add.rhs()}, {add.rhs(), add.lhs()}}) {
      if (const auto value = literal(c)) return SplitIndex{b, ir::kNoValue, *value};
    }
    return SplitIndex{index, ir::kNoValue, 0};
  }

  /// `add x, (add y, c)`, `add (add x, y), c` (either order at each add, c a literal) and
  /// `add x, y` as the pair {x, y} (in value order) and c (0 for the last); nullopt otherwise.
  std::optional<SplitIndex> split_pair(ValueId index) const {
    const auto pair = [](ValueId x, ValueId y, std::int64_t c) {
      return SplitIndex{std::min(x, y), std::max(x, y), c};
    };
    const Op* d = definition(index);
    if (d == nullptr || d->kind != OpKind::Add) return std::nullopt;
    const ir::BinaryOp add(*d);
    for (const auto& [x, rest] : {std::pair{add.lhs(), add.rhs()}, {add.rhs(), add.lhs()}}) {
      if (const auto c = literal(rest)) {  // (x + y) + c
        const Op* inner = definition(x);
        if (inner == nullptr || inner->kind != OpKind::Add) return std::nullopt;
        const ir::BinaryOp sum(*inner);
        if (literal(sum.lhs()) || literal(sum.rhs())) return std::nullopt;
        return pair(sum.lhs(), sum.rhs(), *c);
      }
      const Op* inner = definition(rest);
      if (inner == nullptr || inner->kind != OpKind::Add) continue;
      const ir::BinaryOp sum(*inner);
      for (const auto& [y, c] : {std::pair{sum.lhs(), sum.rhs()}, {sum.rhs(), sum.lhs()}}) {
        if (const auto value = literal(c); value && !literal(y)) return pair(x, y, *value);
      }
    }
    if (literal(add.lhs()) || literal(add.rhs())) return std::nullopt;
    return pair(add.lhs(), add.rhs(), 0);
  }

  void plan_group(const GroupKey& key, const std::map<std::int64_t, std::size_t>& offsets,
                  std::vector<Merge>& merges) {
    const auto element = static_cast<std::int64_t>(dtype_size(key.type));
    const int base_log2 = key.base2 == ir::kNoValue ? alignment_.log2_multiple(key.base)
                                                    : std::min(alignment_.log2_multiple(key.base),
                                                               alignment_.log2_multiple(key.base2));
    std::unordered_set<std::int64_t> used;
    for (const auto& [offset, position] : offsets) {
      if (used.contains(offset)) continue;
      for (std::int64_t bytes : kVectorBytes) {
        const std::int64_t lanes = bytes / element;
        if (bytes > target_.max_vector_bytes || lanes < 2 || offset % lanes != 0) continue;
        if (base_log2 < Alignment::log2_of(static_cast<int>(lanes))) continue;
        Merge m{key, offset, {}};
        for (std::int64_t l = 0; l < lanes; ++l) {
          const auto it = offsets.find(offset + l);
          if (it == offsets.end() || used.contains(offset + l)) break;
          m.members.push_back(it->second);
        }
        if (m.members.size() != static_cast<std::size_t>(lanes) || !movable(m, offsets)) continue;
        for (std::int64_t l = 0; l < lanes; ++l) used.insert(offset + l);
        merges.push_back(std::move(m));
        break;
      }
    }
  }

  /// Nothing between the first and the last member could observe the accesses moving.
  bool movable(const Merge& m, const std::map<std::int64_t, std::size_t>& same_base) const {
    const auto [first, last] = std::minmax_element(m.members.begin(), m.members.end());
    std::unordered_set<std::size_t> members(m.members.begin(), m.members.end());
    std::unordered_set<std::size_t> same_base_stores;
    if (m.key.store) {
      for (const auto& entry : same_base) same_base_stores.insert(entry.second);
    }
    for (std::size_t i = *first + 1; i < *last; ++i) {
      const Op& op = ops_[i];
      if (members.contains(i)) continue;
      if (!op.blocks.empty() || ir::op_info(op.kind).has(ir::kConvergent)) return false;
      if (m.key.shared >= 0) {
        if (!leaves_shared_memory_alone(op, m.key.store)) return false;
        continue;
      }
      const bool same_tensor =
          op.shared < 0 && op.param == m.key.param && ir::AccessOp<const Op>::is_access(op.kind);
      if (!same_tensor) continue;
      const bool writes = ir::op_info(op.kind).has(ir::kWritesMemory);
      if (!m.key.store && writes) return false;
      // A store at the same base and another offset writes another element.
      const bool other_element = op.kind == OpKind::Store && same_base_stores.contains(i);
      if (m.key.store && !other_element) return false;
    }
    return true;
  }

  const std::vector<Op>& ops_;
  Alignment& alignment_;
  const Alignment::Definitions& defs_;
  const TargetProfile& target_;
};

/// Walks the blocks innermost first, planning and rewriting each with the facts of the branches
/// around it.
class Combiner {
 public:
  Combiner(ir::Kernel& kernel, const TargetProfile& target) : k_(kernel), target_(target) {}

  void run() {
    defs_ = ir::definitions(k_);
    visit(k_.body.ops);
  }

 private:
  void visit(std::vector<Op>& ops) {
    for (Op& op : ops) {
      for (std::size_t b = 0; b < op.blocks.size(); ++b) {
        const bool then_block = op.kind == OpKind::If && b == 0;
        if (then_block) conditions_.push_back(ir::IfOp(op).condition());
        visit(op.blocks[b].ops);
        if (then_block) conditions_.pop_back();
      }
    }
    Alignment alignment(k_, defs_);
    for (ValueId c : conditions_) alignment.assume_true(c);
    const std::vector<Merge> merges = BlockPlanner(ops, alignment, defs_, target_).run();
    if (merges.empty()) return;
    rewrite(ops, merges);
    // The block's own ops moved (those of the blocks inside them did not): point their values'
    // definitions at the new places.
    for (const Op& op : ops) {
      if (op.result != ir::kNoValue) defs_[op.result] = &op;
    }
  }

  /// Rebuilds `ops` with every merge: vector loads where their first member was, vector stores
  /// where their last member was.
  void rewrite(std::vector<Op>& ops, const std::vector<Merge>& merges) {
    std::unordered_map<std::size_t, std::vector<const Merge*>> before;  // loads, at the first
    std::unordered_map<std::size_t, const Merge*> at;                   // stores, at the last
    std::unordered_set<std::size_t> removed;
    for (const Merge& m : merges) {
      removed.insert(m.members.begin(), m.members.end());
      const auto [first, last] = std::minmax_element(m.members.begin(), m.members.end());
      if (m.key.store) {
        at[*last] = &m;
      } else {
        before[*first].push_back(&m);
      }
    }
    std::vector<Op> old = std::move(ops);
    ops.clear();
    for (std::size_t i = 0; i < old.size(); ++i) {
      if (const auto it = before.find(i); it != before.end()) {
        for (const Merge* m : it->second) vector_load(ops, old, *m);
      }
      if (const auto it = at.find(i); it != at.end()) vector_store(ops, old, *it->second);
      if (!removed.contains(i)) ops.push_back(std::move(old[i]));
    }
  }

  /// base + offset (the base itself at offset 0; a pair's sum made first), at the merge's first
  /// lane's location.
  static ValueId index(ir::Builder& b, const Merge& m) {
    ValueId base = m.key.base;
    if (m.key.base2 != ir::kNoValue) {
      base = b.make(OpKind::Add, DType::U32, {m.key.base, m.key.base2}).result;
    }
    if (m.offset == 0) return base;
    const ValueId offset = b.constant(DType::U32, static_cast<double>(m.offset));
    return b.make(OpKind::Add, DType::U32, {base, offset}).result;
  }

  void vector_load(std::vector<Op>& ops, const std::vector<Op>& old, const Merge& m) {
    const Op& lane0 = old[m.members.front()];
    ir::Builder b(k_, ops);
    b.at(lane0.loc);
    Op& load = b.make(lane0.kind, m.key.type, {index(b, m)});
    load.param = m.key.param;
    load.shared = m.key.shared;
    load.lanes = static_cast<std::uint8_t>(m.members.size());
    const ValueId vector = load.result;
    for (std::size_t l = 0; l < m.members.size(); ++l) {
      const Op& scalar = old[m.members[l]];
      Op extract;
      extract.kind = OpKind::Extract;
      extract.type = m.key.type;
      extract.result = scalar.result;  // the scalar load's value, now defined here
      extract.args = {vector};
      extract.ivalue = static_cast<std::int64_t>(l);
      extract.loc = scalar.loc;
      b.insert(std::move(extract));
    }
  }

  void vector_store(std::vector<Op>& ops, const std::vector<Op>& old, const Merge& m) {
    const Op& lane0 = old[m.members.front()];
    ir::Builder b(k_, ops);
    b.at(lane0.loc);
    Op store = lane0;
    store.args = {index(b, m)};
    store.lanes = static_cast<std::uint8_t>(m.members.size());
    for (std::size_t member : m.members) {
      store.args.push_back(ir::AccessOp<const Op>(old[member]).value());
    }
    b.insert(std::move(store));
  }

  ir::Kernel& k_;
  const TargetProfile& target_;
  Alignment::Definitions defs_;      ///< every value's defining op, kept current by rewrite
  std::vector<ValueId> conditions_;  ///< of the branches whose then-block is being visited
};

}  // namespace

void combine_accesses(ir::Kernel& kernel, const TargetProfile& target) {
  Combiner(kernel, target).run();
}

}  // namespace iron::codegen
