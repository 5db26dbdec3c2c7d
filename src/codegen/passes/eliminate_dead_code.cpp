/// Dead-code elimination by marking what is live and removing the rest: stores, atomics and
/// barriers are live; so is whatever a live op reads, every var.store into a var that a live
/// var.load reads, and every loop or branch around a live op. Everything else goes, which
/// includes unused values, vars never read (or read only to update themselves) with their
/// stores, and loops and branches left with nothing live inside, header and all.
#include "iron/codegen/passes/eliminate_dead_code.hpp"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "iron/core/op_views.hpp"
#include "iron/core/rewriter.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

/// An effect that must happen whether or not anything reads a result: every effect but a
/// var.store (live when its variable is read) and a loop or branch (live when its body is).
bool is_root(const ir::Op& op) {
  const ir::OpInfo& info = ir::op_info(op.kind);
  return info.has(ir::kEffect) && info.blocks == 0 && op.kind != OpKind::VarStore;
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
        for (const ir::Op* store : var_stores_[ir::VarOp(*op).variable()]) mark(store);
      }
      if (const ir::Op* parent = parent_.at(op)) mark(parent);
    }
  }

  /// Whether `op` is live. Ops are identified by address, which the rewrite driver keeps until
  /// it reaches them.
  bool is_live(const ir::Op& op) const { return live_.contains(&op); }

 private:
  void index(const ir::Block& b, const ir::Op* parent) {
    for (const ir::Op& op : b.ops) {
      parent_[&op] = parent;
      if (op.result != ir::kNoValue) def_[op.result] = &op;
      if (op.kind == OpKind::VarStore) var_stores_[ir::VarOp(op).variable()].push_back(&op);
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
  const Liveness liveness(kernel);
  ir::rewrite(kernel, ir::Order::InnerFirst, [&](ir::Op& op, ir::RewriteSite&) {
    return liveness.is_live(op) ? ir::Rewrite::keep() : ir::Rewrite::erase();
  });
}

}  // namespace iron::codegen
