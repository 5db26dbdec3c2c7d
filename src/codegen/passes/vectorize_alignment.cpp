/// Alignment facts for vectorize: powers of two that divide integer values.
#include "vectorize_alignment.hpp"

#include <algorithm>
#include <bit>

#include "iron/core/op_views.hpp"

namespace iron::codegen {
namespace {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

constexpr int kAll = 32;  ///< zero: a multiple of every power of two that 32 bits can hold

int ctz(std::int64_t c) {
  const auto bits = static_cast<std::uint32_t>(c);
  return bits == 0 ? kAll : std::countr_zero(bits);
}

}  // namespace

Alignment::Alignment(const ir::Kernel& kernel, const Definitions& definitions)
    : kernel_(kernel), defs_(definitions) {}

int Alignment::log2_of(int lanes) { return std::countr_zero(static_cast<unsigned>(lanes)); }

const Op* Alignment::def(ValueId v) const {
  const auto it = defs_.find(v);
  return it == defs_.end() ? nullptr : it->second;
}

bool Alignment::literal(ValueId v, std::int64_t& out) const {
  const Op* d = def(v);
  if (d == nullptr || d->kind != OpKind::Const || !is_integer(d->type)) return false;
  out = ir::ConstOp(*d).as_int();
  return true;
}

int Alignment::log2_multiple(ValueId v) {
  if (const auto it = known_.find(v); it != known_.end()) return it->second;
  known_[v] = 0;  // a value reached again while computing itself (never in SSA) counts 0
  int log2 = compute(v);
  if (const auto fact = facts_.find(v); fact != facts_.end()) log2 = std::max(log2, fact->second);
  known_[v] = log2;
  return log2;
}

int Alignment::compute(ValueId v) {
  const Op* d = def(v);
  if (d == nullptr || !is_integer(d->type) || d->lanes != 1) return 0;
  const OpKind k = d->kind;
  std::int64_t c = 0;
  const auto operand = [&](std::size_t i) { return log2_multiple(d->args[i]); };
  const auto shift = [&] { return literal(d->args[1], c) && c >= 0 && c < kAll; };
  if (k == OpKind::Const) return ctz(ir::ConstOp(*d).as_int());
  if (k == OpKind::ConstexprRef) return rule_log2(d->param);
  if (k == OpKind::Mul) return std::min(kAll, operand(0) + operand(1));
  if (k == OpKind::Shl) return shift() ? std::min(kAll, operand(0) + static_cast<int>(c)) : 0;
  if (k == OpKind::Shr) return shift() ? std::max(0, operand(0) - static_cast<int>(c)) : 0;
  if (k == OpKind::Div) {
    const bool power =
        literal(d->args[1], c) && c > 0 && std::has_single_bit(static_cast<std::uint64_t>(c));
    return power ? std::max(0, operand(0) - std::countr_zero(static_cast<std::uint64_t>(c))) : 0;
  }
  if (k == OpKind::And) return std::max(operand(0), operand(1));
  if (k == OpKind::Select) return std::min(operand(1), operand(2));
  const bool smaller = k == OpKind::Add || k == OpKind::Sub || k == OpKind::Rem ||
                       k == OpKind::Or || k == OpKind::Xor || k == OpKind::Min || k == OpKind::Max;
  return smaller ? std::min(operand(0), operand(1)) : 0;
}

int Alignment::rule_log2(int param) const {
  int best = 0;
  const std::string& name = kernel_.params[static_cast<std::size_t>(param)].name;
  for (const ir::ConstexprRule& r : kernel_.dispatch.constexpr_rules) {
    if (r.constexpr_name == name && r.multiple > 0) best = std::max(best, ctz(r.multiple));
  }
  return best;
}

void Alignment::assume(ValueId v, int log2) {
  int& fact = facts_[v];
  fact = std::max(fact, log2);
  known_.clear();
  const Op* d = def(v);
  if (d != nullptr && d->kind == OpKind::Or) {
    for (ValueId operand : d->args) assume(operand, log2);
  }
}

void Alignment::assume_true(ValueId condition) {
  const Op* d = def(condition);
  if (d == nullptr) return;
  if (d->kind == OpKind::And && d->type == DType::Bool) {
    for (ValueId operand : d->args) assume_true(operand);
    return;
  }
  if (d->kind != OpKind::Eq) return;
  std::int64_t c = 0;
  const ir::BinaryOp eq(*d);
  const ValueId tested = literal(eq.rhs(), c) && c == 0   ? eq.lhs()
                         : literal(eq.lhs(), c) && c == 0 ? eq.rhs()
                                                          : ir::kNoValue;
  const Op* t = tested == ir::kNoValue ? nullptr : def(tested);
  if (t == nullptr || (t->kind != OpKind::And && t->kind != OpKind::Rem)) return;
  const ir::BinaryOp masked(*t);
  if (t->kind == OpKind::Rem) {  // x % 2^k
    const bool power =
        literal(masked.rhs(), c) && c > 0 && std::has_single_bit(static_cast<std::uint64_t>(c));
    if (power) assume(masked.lhs(), std::countr_zero(static_cast<std::uint64_t>(c)));
    return;
  }
  // x & (2^k - 1), the mask on either side
  for (const auto& [x, mask] :
       {std::pair{masked.lhs(), masked.rhs()}, {masked.rhs(), masked.lhs()}}) {
    const bool low_bits =
        literal(mask, c) && c > 0 && std::has_single_bit(static_cast<std::uint64_t>(c) + 1);
    if (low_bits) {
      assume(x, std::countr_zero(static_cast<std::uint64_t>(c) + 1));
      return;
    }
  }
}

}  // namespace iron::codegen
