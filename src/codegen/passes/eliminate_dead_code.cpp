/// Dead-code elimination by marking what is live and removing the rest: stores, atomics and
/// barriers are live; so is whatever a live op reads, every var.store into a var that a live
/// var.load reads, and every loop or branch around a live op. Everything else goes, which
/// includes unused values, vars never read (or read only to update themselves) with their
/// stores, and loops and branches left with nothing live inside, header and all.
#include "iron/codegen/passes/eliminate_dead_code.hpp"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "iron/codegen/ir_utils.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

/// An effect that must happen whether or not anything reads a result.
bool is_root(const ir::Op& op) {
  return op.kind == OpKind::Store || op.kind == OpKind::SharedStore || op.kind == OpKind::Barrier ||
         ir::op_class(op.kind) == ir::OpClass::Atomic;
}

class Liveness {
 public:
  explicit Liveness(const ir::Kernel& kernel) {
    index(kernel.body, nullptr);
    while (!work_.empty()) {
      const ir::Op* op = work_.back();
      work_.pop_back();
      for (ir::ValueId a : op->args) mark(def_.at(a));
      if (op->kind == OpKind::VarLoad) {
        for (const ir::Op* store : var_stores_[op->args[0]]) mark(store);
      }
      if (const ir::Op* parent = parent_.at(op)) mark(parent);
    }
  }

  /// Removes the ops of `b` (and nested blocks) that are not live.
  void sweep(ir::Block& b) const {
    for (ir::Op& op : b.ops) {
      for (ir::Block& nested : op.blocks) sweep(nested);
    }
    // Ops are identified by address: decide for each before any of them moves.
    std::vector<ir::Op> kept;
    for (ir::Op& op : b.ops) {
      if (live_.contains(&op)) kept.push_back(std::move(op));
    }
    b.ops = std::move(kept);
  }

 private:
  void index(const ir::Block& b, const ir::Op* parent) {
    for (const ir::Op& op : b.ops) {
      parent_[&op] = parent;
      if (op.result != ir::kNoValue) def_[op.result] = &op;
      if (op.kind == OpKind::VarStore) var_stores_[op.args[0]].push_back(&op);
      if (is_root(op)) mark(&op);
      for (const ir::Block& nested : op.blocks) index(nested, &op);
    }
  }

  void mark(const ir::Op* op) {
    if (live_.insert(op).second) work_.push_back(op);
  }

  std::unordered_map<const ir::Op*, const ir::Op*> parent_;  ///< the loop or branch around
  std::unordered_map<ir::ValueId, const ir::Op*> def_;
  std::unordered_map<ir::ValueId, std::vector<const ir::Op*>> var_stores_;
  std::unordered_set<const ir::Op*> live_;
  std::vector<const ir::Op*> work_;
};

}  // namespace

void eliminate_dead_code(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  Liveness(kernel).sweep(kernel.body);
}

}  // namespace iron::codegen
