/// Shared pass tools: op properties, use counts, value replacement and op builders.
#include "iron/codegen/ir_utils.hpp"

#include <cmath>

namespace iron::codegen {

using ir::OpKind;

bool has_side_effects(const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Store:
    case OpKind::SharedStore:
    case OpKind::Barrier:
    case OpKind::VarStore:
    case OpKind::For:
    case OpKind::If:
      return true;
    default:
      return ir::op_class(op.kind) == ir::OpClass::Atomic;
  }
}

bool is_convergent(const ir::Op& op) {
  const ir::OpClass c = ir::op_class(op.kind);
  return op.kind == OpKind::Barrier || c == ir::OpClass::Simd || c == ir::OpClass::Group;
}

bool reads_memory(const ir::Op& op) {
  return op.kind == OpKind::Load || op.kind == OpKind::SharedLoad || op.kind == OpKind::VarLoad;
}

bool is_pure(const ir::Op& op) {
  return !has_side_effects(op) && !is_convergent(op) && !reads_memory(op) &&
         op.kind != OpKind::VarDecl;
}

std::vector<std::uint32_t> use_counts(const ir::Kernel& kernel) {
  std::vector<std::uint32_t> counts(kernel.num_values, 0);
  ir::walk(kernel.body, [&](const ir::Op& op) {
    for (ir::ValueId a : op.args) {
      if (a < counts.size()) ++counts[a];
    }
  });
  return counts;
}

void replace_uses(ir::Block& block, const std::unordered_map<ir::ValueId, ir::ValueId>& map) {
  if (map.empty()) return;
  for (ir::Op& op : block.ops) {
    for (ir::ValueId& a : op.args) {
      // Follow chains (a -> b -> c) so a single call settles every replacement.
      for (auto it = map.find(a); it != map.end(); it = map.find(a)) a = it->second;
    }
    for (ir::Block& b : op.blocks) replace_uses(b, map);
  }
}

ir::ValueId new_value(ir::Kernel& kernel) { return kernel.num_values++; }

ir::Op make_const(ir::Kernel& kernel, DType type, double value) {
  ir::Op op;
  op.kind = OpKind::Const;
  op.type = type;
  if (is_float(type)) {
    op.fvalue = value;
  } else {
    op.ivalue = static_cast<std::int64_t>(value);
  }
  op.result = new_value(kernel);
  return op;
}

ir::Op make_op(ir::Kernel& kernel, ir::OpKind kind, DType type, std::vector<ir::ValueId> args) {
  ir::Op op;
  op.kind = kind;
  op.type = type;
  op.args = std::move(args);
  op.result = new_value(kernel);
  return op;
}

std::unordered_map<ir::ValueId, const ir::Op*> definitions(const ir::Kernel& kernel) {
  std::unordered_map<ir::ValueId, const ir::Op*> defs;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.result != ir::kNoValue) defs[op.result] = &op;
  });
  return defs;
}

double const_as_double(const ir::Op& op) {
  return is_float(op.type) ? op.fvalue : static_cast<double>(op.ivalue);
}

std::int64_t const_as_int(const ir::Op& op) {
  return is_float(op.type) ? static_cast<std::int64_t>(op.fvalue) : op.ivalue;
}

void for_each_block(ir::Block& block, const std::function<void(ir::Block&)>& fn) {
  fn(block);
  for (ir::Op& op : block.ops) {
    for (ir::Block& b : op.blocks) for_each_block(b, fn);
  }
}

bool remove_empty_control_flow(ir::Block& block) {
  bool removed = false;
  std::vector<ir::Op> kept;
  kept.reserve(block.ops.size());
  for (ir::Op& op : block.ops) {
    for (ir::Block& b : op.blocks) removed |= remove_empty_control_flow(b);
    const bool empty_loop = op.kind == OpKind::For && op.blocks[0].ops.empty();
    const bool empty_branch =
        op.kind == OpKind::If && op.blocks[0].ops.empty() && op.blocks[1].ops.empty();
    if (empty_loop || empty_branch) {
      removed = true;
    } else {
      kept.push_back(std::move(op));
    }
  }
  block.ops = std::move(kept);
  return removed;
}

}  // namespace iron::codegen
