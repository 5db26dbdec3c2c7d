/// select_target_paths: `%q = target.has FEATURE` becomes `%q = const 0|1 : bool`, and
///
///   if %q { A } else { B }   becomes   A (or B)
///
/// in place. Allocations accessed in the dropped blocks and nowhere else are removed, and the
/// remaining ones renumbered, so that a target's shared memory and pipeline stages count only
/// its own path. Other uses of %q keep the constant, which fold_constants propagates.
#include "iron/codegen/passes/select_target_paths.hpp"

#include <unordered_map>
#include <vector>

namespace iron::codegen {
namespace {

using ir::OpKind;
using ir::ValueId;

/// Marks every allocation the ops of `block` access.
void mark_allocations(const ir::Block& block, std::vector<bool>& used) {
  ir::walk(block, [&](const ir::Op& op) {
    for (const int alloc : {op.shared, op.shared_b}) {
      if (alloc >= 0) used[static_cast<std::size_t>(alloc)] = true;
    }
  });
}

class Selection {
 public:
  Selection(ir::Kernel& kernel, const std::function<bool(ir::TargetFeature)>& answer)
      : kernel_(kernel), answer_(answer), dropped_(kernel.shared.size(), false) {}

  void run() {
    block(kernel_.body);
    std::vector<bool> kept(kernel_.shared.size(), false);
    mark_allocations(kernel_.body, kept);
    std::vector<int> renumbered(kernel_.shared.size(), -1);
    std::vector<ir::SharedAlloc> shared;
    for (std::size_t i = 0; i < kernel_.shared.size(); ++i) {
      if (dropped_[i] && !kept[i]) continue;
      renumbered[i] = static_cast<int>(shared.size());
      shared.push_back(std::move(kernel_.shared[i]));
    }
    kernel_.shared = std::move(shared);
    renumber(kernel_.body, renumbered);
  }

 private:
  static void renumber(ir::Block& b, const std::vector<int>& renumbered) {
    for (ir::Op& op : b.ops) {
      for (int* alloc : {&op.shared, &op.shared_b}) {
        if (*alloc >= 0) *alloc = renumbered[static_cast<std::size_t>(*alloc)];
      }
      for (ir::Block& inner : op.blocks) renumber(inner, renumbered);
    }
  }

  void block(ir::Block& b) {
    std::vector<ir::Op> out;
    out.reserve(b.ops.size());
    for (ir::Op& op : b.ops) {
      if (op.kind == OpKind::TargetHas) {
        const bool yes = answer_(static_cast<ir::TargetFeature>(op.ivalue));
        answers_[op.result] = yes;
        op.kind = OpKind::Const;
        op.ivalue = yes ? 1 : 0;
      }
      if (op.kind == OpKind::If) {
        const auto answered = answers_.find(op.args[0]);
        if (answered != answers_.end()) {
          ir::Block& taken = op.blocks[answered->second ? 0 : 1];
          mark_allocations(op.blocks[answered->second ? 1 : 0], dropped_);
          block(taken);
          for (ir::Op& inner : taken.ops) out.push_back(std::move(inner));
          continue;
        }
      }
      for (ir::Block& inner : op.blocks) block(inner);
      out.push_back(std::move(op));
    }
    b.ops = std::move(out);
  }

  ir::Kernel& kernel_;
  const std::function<bool(ir::TargetFeature)>& answer_;
  std::unordered_map<ValueId, bool> answers_;
  std::vector<bool> dropped_;  ///< allocations the dropped blocks access
};

}  // namespace

bool target_has(const TargetProfile& target, ir::TargetFeature feature) {
  switch (feature) {
    case ir::TargetFeature::WarpgroupProducts:
      return target.kind == TargetKind::Cuda && target.mma == MmaStrategy::Wgmma;
  }
  return false;
}

bool has_target_queries(const ir::Kernel& kernel) {
  bool found = false;
  ir::walk(kernel.body, [&](const ir::Op& op) { found |= op.kind == OpKind::TargetHas; });
  return found;
}

void select_target_paths(ir::Kernel& kernel, const std::function<bool(ir::TargetFeature)>& answer) {
  if (has_target_queries(kernel)) Selection(kernel, answer).run();
}

void select_target_paths(ir::Kernel& kernel, const TargetProfile& target) {
  select_target_paths(kernel, [&](ir::TargetFeature f) { return target_has(target, f); });
}

}  // namespace iron::codegen
