/// Dead-code elimination to a fixed point: unused values that have no effect (pure ops, memory
/// reads, simdgroup and threadgroup collectives), vars that are never read together with their
/// stores, and loops or branches left with nothing inside.
#include "iron/codegen/passes/eliminate_dead_code.hpp"

#include <unordered_set>
#include <vector>

#include "iron/codegen/ir_utils.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

/// Whether the op only produces its result: removing it when nobody reads the result changes
/// nothing (an unused load is dropped even though the simulator would check its bounds).
bool only_computes(const ir::Op& op) {
  const ir::OpClass c = ir::op_class(op.kind);
  return is_pure(op) || reads_memory(op) || c == ir::OpClass::Simd || c == ir::OpClass::Group;
}

/// Vars without a var.load, with every var.store into them.
bool remove_unread_vars(ir::Kernel& kernel) {
  std::unordered_set<ir::ValueId> read;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::VarLoad) read.insert(op.args[0]);
  });
  bool removed = false;
  for_each_block(kernel.body, [&](ir::Block& b) {
    removed |= std::erase_if(b.ops, [&](const ir::Op& op) {
                 const bool decl = op.kind == OpKind::VarDecl;
                 const bool store = op.kind == OpKind::VarStore;
                 return (decl && !read.contains(op.result)) || (store && !read.contains(op.args[0]));
               }) > 0;
  });
  return removed;
}

/// Removes dead ops of `b`, last first so a chain of dead values goes in one sweep.
bool sweep(ir::Block& b, std::vector<std::uint32_t>& uses) {
  bool removed = false;
  for (std::size_t i = b.ops.size(); i-- > 0;) {
    ir::Op& op = b.ops[i];
    for (ir::Block& nested : op.blocks) removed |= sweep(nested, uses);
    const bool unused = op.result != ir::kNoValue && uses[op.result] == 0 && only_computes(op);
    const bool empty_loop = op.kind == OpKind::For && op.blocks[0].ops.empty();
    const bool empty_branch =
        op.kind == OpKind::If && op.blocks[0].ops.empty() && op.blocks[1].ops.empty();
    if (!unused && !empty_loop && !empty_branch) continue;
    for (ir::ValueId a : op.args) --uses[a];
    b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(i));
    removed = true;
  }
  return removed;
}

}  // namespace

void eliminate_dead_code(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  bool removed = true;
  while (removed) {
    removed = remove_unread_vars(kernel);
    std::vector<std::uint32_t> uses = use_counts(kernel);
    removed |= sweep(kernel.body, uses);
  }
}

}  // namespace iron::codegen
