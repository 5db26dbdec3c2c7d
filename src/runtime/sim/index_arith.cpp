/// Finds the integer arithmetic that feeds an index, so that the interpreter tracks wrapping on
/// exactly those ops (and lets hashes and bit tricks wrap freely).
#include <array>
#include <utility>
#include <vector>

#include "iron/core/op_views.hpp"
#include "program.hpp"

namespace iron::runtime::sim {
namespace {

using ir::OpKind;

constexpr std::uint32_t kNone = 0xFFFFFFFFu;

/// Ops that pass their integer operands' values on (so those operands feed the index too).
bool passes_on(OpKind k) {
  return wrapping_of(k) || k == OpKind::Rem || k == OpKind::Min || k == OpKind::Max ||
         k == OpKind::Shr || k == OpKind::Select;
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
      if (op.kind == OpKind::VarStore) stores_[ir::VarOp(op).variable()].push_back(i);
    }
  }

  void run() {
    for (const Instr& in : p_.code) {
      const bool memory =
          in.exec == Exec::Load || in.exec == Exec::Store || in.exec == Exec::Atomic;
      if (memory) push(ir::AccessOp(*in.op).index());
      if (in.exec == Exec::CopyAsync) {
        push(ir::CopyAsyncOp(*in.op).destination());
        push(ir::CopyAsyncOp(*in.op).source());
      }
      if (in.exec == Exec::WgMma) {
        const ir::WgMmaOp mma(*in.op);
        if (!mma.a_in_registers()) {
          push(mma.a_offset());
          push(mma.a_stride());
        }
        push(mma.b_offset());
        push(mma.b_stride());
        if (mma.b_in_panels()) push(mma.b_panel());
      }
      if (in.exec == Exec::FragLoad || in.exec == Exec::FragStore) {
        push(ir::FragAccessOp(*in.op).offset());
        push(ir::FragAccessOp(*in.op).stride());
      }
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
    if (op.kind == OpKind::VarDecl) {  // the variable: its initial value and every value stored
      in.exact = true;
      push(ir::VarOp(op).init());
      for (const std::uint32_t store : stores_[v]) {
        p_.code[store].exact = true;
        push(ir::VarOp(*p_.code[store].op).value());
      }
      return;
    }
    if (op.kind == OpKind::VarLoad) {
      in.exact = true;
      return push(ir::VarOp(op).variable());
    }
    if (op.kind == OpKind::For) {  // the counter: start + k * step
      in.exact = true;
      push(ir::ForOp(op).start());
      return push(ir::ForOp(op).step());
    }
    if (!is_integer(op.type) || !passes_on(op.kind)) return;
    in.exact = true;
    const std::size_t first = op.kind == OpKind::Select ? 1 : 0;  // not the condition
    for (std::size_t a = first; a < op.args.size(); ++a) {
      const ir::ValueId operand = op.args[a];
      if (def_[operand] != kNone && is_integer(p_.code[def_[operand]].op->type)) push(operand);
    }
  }

  Program& p_;
  std::vector<std::uint32_t> def_;                  ///< value -> defining instruction
  std::vector<std::vector<std::uint32_t>> stores_;  ///< variable -> its VarStore instructions
  std::vector<bool> seen_;
  std::vector<ir::ValueId> work_;
};

}  // namespace

std::optional<Wrapping> wrapping_of(OpKind k) {
  static constexpr std::array<std::pair<OpKind, Wrapping>, 8> kWrapping = {{
      {OpKind::Neg, Wrapping::Neg},
      {OpKind::Abs, Wrapping::Abs},
      {OpKind::Add, Wrapping::Add},
      {OpKind::Sub, Wrapping::Sub},
      {OpKind::Mul, Wrapping::Mul},
      {OpKind::Div, Wrapping::Div},
      {OpKind::Shl, Wrapping::Shl},
      {OpKind::Cast, Wrapping::Cast},
  }};
  for (const auto& [op, wrapping] : kWrapping) {
    if (op == k) return wrapping;
  }
  return std::nullopt;
}

void mark_index_arithmetic(Program& program) { Marker(program).run(); }

}  // namespace iron::runtime::sim
