/// Common-subexpression elimination over the block tree: an op structurally equal to one already
/// computed in the same or an enclosing block reuses its value. Memory reads carry a generation
/// that every possible write (and, for var.load, every branch or loop) advances. A fragment's
/// elements are one lane's registers, which only ops naming the fragment write: reads of a
/// fragment (frag.get, frag.rowvalue) carry that fragment's own generation, so a row's value read
/// once a slot in a `map` is read once, whatever else the map writes.
#include "iron/codegen/passes/eliminate_common_subexpressions.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "const_eval.hpp"
#include "iron/codegen/op_predicates.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/rewriter.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

/// Everything that makes two ops compute the same value.
struct Key {
  OpKind kind = OpKind::Const;
  DType type = DType::U32;
  std::vector<ir::ValueId> args;
  std::uint64_t payload = 0;  ///< Const: the value's bits; else ivalue (a lane, a slot, a count)
  ir::Builtin builtin = ir::Builtin::ThreadId;
  std::uint8_t axis = 0;
  std::uint8_t lanes = 1;
  int param = -1;
  int shared = -1;
  std::uint64_t generation = 0;  ///< memory reads: the state of memory they read

  auto fields() const {
    return std::tie(kind, type, args, payload, builtin, axis, lanes, param, shared, generation);
  }
  bool operator<(const Key& other) const { return fields() < other.fields(); }
};

/// Tensor and shared memory may change here: a write (var.store too, to stay conservative) or a
/// barrier, after which other threads' writes are visible.
bool writes_memory(const ir::Op& op) {
  return ir::op_info(op.kind).has(ir::kWritesMemory) || op.kind == OpKind::Barrier ||
         op.kind == OpKind::BarrierAmong || op.kind == OpKind::BarrierSimdgroup;
}

bool block_writes_memory(const ir::Block& b) {
  bool writes = false;
  ir::walk(b, [&](const ir::Op& op) { writes |= writes_memory(op); });
  return writes;
}

/// Walks the blocks itself rather than through the rewrite driver: what a block makes available
/// ends with the block, and the generations advance around every nested block, so the recursion
/// is where the pass's scoping lives.
class Eliminator {
 public:
  explicit Eliminator(const ir::Kernel& kernel) {
    ir::walk(kernel.body, [&](const ir::Op& op) {
      if (op.kind == OpKind::FragDecl) fragments_.emplace(op.result, 0);
    });
  }

  void block(ir::Block& b) {
    std::vector<std::map<Key, ir::ValueId>::iterator> scope;  // what this block made available
    std::size_t kept = 0;  // the ops that stay are compacted to the front, in order
    for (std::size_t i = 0; i < b.ops.size(); ++i) {
      ir::Op& op = b.ops[i];
      for (ir::ValueId& a : op.args) {
        if (const auto it = replaced_.find(a); it != replaced_.end()) a = it->second;
      }
      if (writes_memory(op)) {
        ++memory_generation_;
        written_fragments(op);
      }
      if (op.kind == OpKind::VarStore) ++var_generation_;
      if (!op.blocks.empty()) {
        nested(op);
      } else if (is_candidate(op)) {
        const auto [it, inserted] = available_.try_emplace(key(op), op.result);
        if (!inserted) {
          replaced_[op.result] = it->second;
          continue;
        }
        scope.push_back(it);
      }
      if (kept != i) b.ops[kept] = std::move(op);
      ++kept;
    }
    b.ops.resize(kept);
    for (const auto& it : scope) available_.erase(it);
  }

 private:
  /// Every fragment `op` names may have changed: a new generation for each.
  void written_fragments(const ir::Op& op) {
    for (const ir::ValueId a : op.args) {
      if (const auto it = fragments_.find(a); it != fragments_.end()) it->second = ++counter_;
    }
  }

  /// The fragment whose elements `op` reads, where it reads one the kernel declares: frag.get's
  /// fragment, frag.rowvalue's row vector (its first operand gives only the slots' rows).
  std::optional<ir::ValueId> read_fragment(const ir::Op& op) const {
    std::optional<ir::ValueId> read;
    if (op.kind == OpKind::FragGet) read = op.args.at(0);
    if (op.kind == OpKind::FragRowValue) read = op.args.at(1);
    if (read && !fragments_.contains(*read)) return std::nullopt;
    return read;
  }

  void nested(ir::Op& op) {
    ++var_generation_;
    // A later iteration reads what an earlier one wrote: nothing read before the loop survives.
    if (op.kind == OpKind::For && block_writes_memory(ir::ForOp(op).body())) {
      ++memory_generation_;
      ir::walk(ir::ForOp(op).body(), [&](const ir::Op& inner) {
        if (writes_memory(inner)) written_fragments(inner);
      });
    }
    for (ir::Block& b : op.blocks) {
      block(b);
      ++var_generation_;
    }
  }

  static bool is_candidate(const ir::Op& op) {
    if (op.result == ir::kNoValue) return false;
    return is_pure(op) || reads_memory(op);
  }

  Key key(const ir::Op& op) const {
    Key k{op.kind, op.type, op.args};
    // Every attribute an op can hold is part of its key (a literal's value, a lane, a slot).
    k.payload =
        op.kind == OpKind::Const ? const_value(op).bits : static_cast<std::uint64_t>(op.ivalue);
    k.builtin = op.builtin;
    k.axis = op.axis;
    k.lanes = op.lanes;
    k.param = op.param;
    k.shared = op.shared;
    if (op.kind == OpKind::VarLoad) {
      k.generation = var_generation_;
    } else if (const auto read = read_fragment(op)) {
      k.generation = fragments_.at(*read);
    } else if (reads_memory(op)) {
      k.generation = memory_generation_;
    }
    return k;
  }

  std::map<Key, ir::ValueId> available_;
  std::unordered_map<ir::ValueId, ir::ValueId> replaced_;
  std::uint64_t memory_generation_ = 0;
  std::uint64_t var_generation_ = 0;
  std::unordered_map<ir::ValueId, std::uint64_t> fragments_;  ///< each fragment's generation
  std::uint64_t counter_ = 0;  ///< the last fragment generation handed out
};

}  // namespace

void eliminate_common_subexpressions(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  Eliminator(kernel).block(kernel.body);
  ir::remove_empty_control_flow(kernel);
}

}  // namespace iron::codegen
