/// Evaluation of constants and of ops on values held by their type (the definition itself is
/// inline, in the header), which kinds and operands it applies to, and the combiners of
/// collective ops.
#include "iron/core/evaluate.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace iron::ir {

ScalarValue constant_value(DType t, double f, std::int64_t i) {
  if (is_float(t)) return {t, round_bits(t, static_cast<float>(f))};
  return {t, wrap_bits(t, static_cast<std::uint32_t>(i))};
}

bool can_evaluate(OpKind k, DType type, std::span<const DType> operand_types) {
  const OpInfo& info = op_info(k);
  if (!is_evaluable(k) || operand_types.size() != info.operands) return false;
  auto all_are = [&](std::size_t first, DType t) {
    return std::all_of(operand_types.begin() + static_cast<std::ptrdiff_t>(first),
                       operand_types.end(), [t](DType x) { return x == t; });
  };
  switch (info.types) {
    case TypeRule::Comparison:
      return type == DType::Bool && all_are(0, operand_types[0]);
    case TypeRule::Selection:
      return operand_types[0] == DType::Bool && all_are(1, type);
    case TypeRule::Conversion:
      return true;
    case TypeRule::Reinterpretation:
      return dtype_size(operand_types[0]) == dtype_size(type);
    case TypeRule::FloatOrSigned:
    case TypeRule::IntegerOrBool:
    case TypeRule::Integer:
    case TypeRule::Float:
    case TypeRule::Number:
      return all_are(0, type) && op_defined_on(k, type);
    case TypeRule::Constant:
    case TypeRule::ConstexprValue:
    case TypeRule::ThreadGeometry:
    case TypeRule::TensorAccess:
    case TypeRule::SharedAccess:
    case TypeRule::AtomicNumber:
    case TypeRule::AtomicInteger:
    case TypeRule::CollectiveNumber:
    case TypeRule::CollectiveMove:
    case TypeRule::SameAsResult:
    case TypeRule::VariableStore:
    case TypeRule::LoopBounds:
    case TypeRule::Condition:
    case TypeRule::NoOperands:
    case TypeRule::RegisterArray:
    case TypeRule::RegisterAccess:
    case TypeRule::FragmentDecl:
    case TypeRule::FragmentAccess:
    case TypeRule::FragmentMultiply:
    case TypeRule::FragmentElement:
    case TypeRule::FragmentTransform:
    case TypeRule::AsyncCopy:
    case TypeRule::AsyncGroup:
    case TypeRule::PipelineBounds:
    case TypeRule::PipelineIndex:
    case TypeRule::WarpgroupMultiply:
    case TypeRule::WarpgroupWait:
    case TypeRule::TargetQuery:
    case TypeRule::Specialization:
    case TypeRule::TileCopy:
    case TypeRule::TensorCopy:
    case TypeRule::Mbarrier:
      return false;
  }
  return false;
}

Evaluation evaluate(OpKind k, DType t, std::span<const ScalarValue> operands) {
  const ScalarValue none{};
  return evaluate_lane(k, t, operands.empty() ? none : operands[0],
                       operands.size() > 1 ? operands[1] : none,
                       operands.size() > 2 ? operands[2] : none);
}

std::optional<OpKind> combiner_of(OpKind k) {
  static constexpr std::array<std::pair<OpKind, OpKind>, 14> kCombiners = {{
      {OpKind::AtomicAdd, OpKind::Add},
      {OpKind::AtomicMax, OpKind::Max},
      {OpKind::AtomicMin, OpKind::Min},
      {OpKind::AtomicAnd, OpKind::And},
      {OpKind::AtomicOr, OpKind::Or},
      {OpKind::AtomicXor, OpKind::Xor},
      {OpKind::SimdSum, OpKind::Add},
      {OpKind::SimdMax, OpKind::Max},
      {OpKind::SimdMin, OpKind::Min},
      {OpKind::SimdPrefixSum, OpKind::Add},
      {OpKind::SimdPrefixExclusiveSum, OpKind::Add},
      {OpKind::ReduceSum, OpKind::Add},
      {OpKind::ReduceMax, OpKind::Max},
      {OpKind::ReduceMin, OpKind::Min},
  }};
  for (const auto& [op, combiner] : kCombiners) {
    if (op == k) return combiner;
  }
  return std::nullopt;
}

}  // namespace iron::ir
