/// Finds the integer arithmetic that feeds an index, so that the interpreter tracks wrapping on
/// exactly those ops (and lets hashes and bit tricks wrap freely).
#include <vector>

#include "program.hpp"

namespace iron::runtime::sim {
namespace {

using ir::OpKind;

constexpr std::uint32_t kNone = 0xFFFFFFFFu;

bool accesses_memory(OpKind k) {
  return k == OpKind::Load || k == OpKind::Store || k == OpKind::SharedLoad ||
         k == OpKind::SharedStore || ir::op_class(k) == ir::OpClass::Atomic;
}

/// Ops that pass their integer operands' values on (so those operands feed the index too).
bool passes_on(OpKind k) {
  switch (k) {
    case OpKind::Rem:
    case OpKind::Min:
    case OpKind::Max:
    case OpKind::Shr:
    case OpKind::Select:
      return true;
    default:
      return can_wrap(k);
  }
}

class Marker {
 public:
  explicit Marker(Program& p) : p_(p) {
    const std::uint32_t values = p.kernel->num_values;
    def_.assign(values, kNone);
    stores_.resize(values);
    seen_.assign(values, false);
    for (std::uint32_t i = 0; i < p.code.size(); ++i) {
      const ir::Op& op = *p.code[i].op;
      if (op.result != ir::kNoValue) def_[op.result] = i;
      if (op.kind == OpKind::VarStore) stores_[op.args[0]].push_back(i);
    }
  }

  void run() {
    for (const Instr& in : p_.code) {
      if (accesses_memory(in.kind)) push(in.op->args[0]);
    }
    while (!work_.empty()) {
      const ir::ValueId v = work_.back();
      work_.pop_back();
      visit(v);
    }
  }

 private:
  void push(ir::ValueId v) {
    if (seen_[v]) return;
    seen_[v] = true;
    work_.push_back(v);
  }

  void visit(ir::ValueId v) {
    if (def_[v] == kNone) return;
    Instr& in = p_.code[def_[v]];
    const ir::Op& op = *in.op;
    switch (op.kind) {
      case OpKind::VarDecl:  // the variable: its initial value and every value stored into it
        in.exact = true;
        push(op.args[0]);
        for (const std::uint32_t store : stores_[v]) {
          p_.code[store].exact = true;
          push(p_.code[store].op->args[1]);
        }
        return;
      case OpKind::VarLoad:
        in.exact = true;
        return push(op.args[0]);
      case OpKind::For:  // the counter: start + k * step
        in.exact = true;
        push(op.args[0]);
        return push(op.args[2]);
      default:
        break;
    }
    if (!is_integer(op.type) || !passes_on(op.kind)) return;
    in.exact = true;
    const std::size_t first = op.kind == OpKind::Select ? 1 : 0;  // not the condition
    for (std::size_t a = first; a < op.args.size(); ++a) {
      if (def_[op.args[a]] != kNone && is_integer(p_.code[def_[op.args[a]]].op->type)) {
        push(op.args[a]);
      }
    }
  }

  Program& p_;
  std::vector<std::uint32_t> def_;                  ///< value -> defining instruction
  std::vector<std::vector<std::uint32_t>> stores_;  ///< variable -> its VarStore instructions
  std::vector<bool> seen_;
  std::vector<ir::ValueId> work_;
};

}  // namespace

bool can_wrap(OpKind k) {
  switch (k) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Div:
    case OpKind::Shl:
    case OpKind::Fma:
    case OpKind::Cast:
      return true;
    default:
      return false;
  }
}

void mark_index_arithmetic(Program& program) { Marker(program).run(); }

}  // namespace iron::runtime::sim
