/// select_target_paths: `%q = target.has FEATURE` becomes `%q = const 0|1 : bool`, and
///
///   if %q { A } else { B }   becomes   A (or B)
///
/// in place (also where %q is a `not`, `and` or `or` of queries that decides). Allocations
/// accessed in the dropped blocks and nowhere else are removed, and the remaining ones
/// renumbered, so that a target's shared memory and pipeline stages count only its own path
/// (rings left without a pipeline become one stage). Other uses of %q keep the constant, which
/// fold_constants propagates. Specializations bound by the profile are answered the same way
/// (`%s = specialize %c` becomes `%s = const 0|1`); unbound ones are their condition: %s goes,
/// its uses read %c.
#include "iron/codegen/passes/select_target_paths.hpp"

#include <optional>
#include <unordered_map>
#include <vector>

#include "iron/core/specialization.hpp"

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
  Selection(ir::Kernel& kernel, const std::function<bool(ir::TargetFeature)>& answer,
            const std::vector<bool>& specialization)
      : kernel_(kernel), answer_(answer), dropped_(kernel.shared.size(), false) {
    const std::vector<ValueId> bindable = ir::bindable_specializations(kernel);
    for (std::size_t i = 0; i < bindable.size() && i < specialization.size(); ++i) {
      bound_[bindable[i]] = specialization[i];
    }
  }

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
    // An overlay whose base went keeps its bytes as an allocation of its own.
    for (ir::SharedAlloc& s : shared) {
      if (s.overlays >= 0) s.overlays = renumbered[static_cast<std::size_t>(s.overlays)];
    }
    kernel_.shared = std::move(shared);
    renumber(kernel_.body, renumbered);
    // A ring whose pipelines were all dropped is one stage the kept path uses as it is.
    bool pipelines = false;
    ir::walk(kernel_.body, [&](const ir::Op& op) { pipelines |= op.kind == OpKind::Pipeline; });
    if (!pipelines) {
      for (ir::SharedAlloc& s : kernel_.shared) s.ring = false;
    }
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
      for (ValueId& arg : op.args) {
        if (const auto it = renamed_.find(arg); it != renamed_.end()) arg = it->second;
      }
      if (op.kind == OpKind::Specialize) {
        const auto bound = bound_.find(op.result);
        if (bound == bound_.end()) {
          renamed_[op.result] = op.args[0];
          continue;
        }
        answer(op, bound->second);
      }
      if (op.kind == OpKind::TargetHas)
        answer(op, answer_(static_cast<ir::TargetFeature>(op.ivalue)));
      combine(op);
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

  /// A `not`, `and` or `or` of bools whose operands are answered (or that one operand decides) is
  /// answered too, so that an `if` on `target.has A && target.has B` keeps one block; the op
  /// itself stays for fold_constants.
  void combine(const ir::Op& op) {
    if (op.type != DType::Bool || op.result == ir::kNoValue) return;
    const auto of = [&](std::size_t i) -> std::optional<bool> {
      const auto it = answers_.find(op.args[i]);
      return it == answers_.end() ? std::nullopt : std::optional<bool>(it->second);
    };
    if (op.kind == OpKind::Not) {
      if (const auto a = of(0)) answers_[op.result] = !*a;
      return;
    }
    if (op.kind != OpKind::And && op.kind != OpKind::Or) return;
    const bool decider = op.kind == OpKind::Or;  // the operand value that decides alone
    const auto a = of(0);
    const auto b = of(1);
    if ((a && *a == decider) || (b && *b == decider)) {
      answers_[op.result] = decider;
    } else if (a && b) {
      answers_[op.result] = !decider;
    }
  }

  /// Turns the query or specialization `op` into the constant `yes`.
  void answer(ir::Op& op, bool yes) {
    answers_[op.result] = yes;
    op.kind = OpKind::Const;
    op.args.clear();
    op.ivalue = yes ? 1 : 0;
  }

  ir::Kernel& kernel_;
  const std::function<bool(ir::TargetFeature)>& answer_;
  std::unordered_map<ValueId, bool> bound_;       ///< the profile's specializations
  std::unordered_map<ValueId, ValueId> renamed_;  ///< unbound specializations: their conditions
  std::unordered_map<ValueId, bool> answers_;
  std::vector<bool> dropped_;  ///< allocations the dropped blocks access
};

}  // namespace

bool target_has(const TargetProfile& target, ir::TargetFeature feature) {
  switch (feature) {
    case ir::TargetFeature::WarpgroupProducts:
      return target.kind == TargetKind::Cuda && target.mma == MmaStrategy::Wgmma;
    case ir::TargetFeature::PairedAccumulatorColumns:
      return target.kind == TargetKind::Msl || target.mma != MmaStrategy::Wmma;
    case ir::TargetFeature::TensorMaps:
      return target.tensor_maps;
    case ir::TargetFeature::LargeSharedMemory:
      return target.max_shared_bytes > kMetalSharedBytes;
  }
  return false;
}

bool has_target_queries(const ir::Kernel& kernel) {
  bool found = false;
  ir::walk(kernel.body, [&](const ir::Op& op) { found |= op.kind == OpKind::TargetHas; });
  return found;
}

bool has_specializations(const ir::Kernel& kernel) {
  bool found = false;
  ir::walk(kernel.body, [&](const ir::Op& op) { found |= op.kind == OpKind::Specialize; });
  return found;
}

void select_target_paths(ir::Kernel& kernel, const std::function<bool(ir::TargetFeature)>& answer,
                         const std::vector<bool>& specialization) {
  if (has_target_queries(kernel) || has_specializations(kernel)) {
    Selection(kernel, answer, specialization).run();
  }
}

void select_target_paths(ir::Kernel& kernel, const TargetProfile& target) {
  select_target_paths(
      kernel, [&](ir::TargetFeature f) { return target_has(target, f); }, target.specialization);
}

}  // namespace iron::codegen
