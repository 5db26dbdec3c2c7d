/// Constant evaluation over ir::evaluate: only results that are one defined value are folded.
#include "const_eval.hpp"

#include <array>

namespace iron::codegen {

ConstValue const_value(const ir::Op& constant) {
  return {ir::constant_value(constant.type, constant.fvalue, constant.ivalue)};
}

ConstValue const_of(DType type, std::int64_t v) {
  if (is_float(type)) return {{type, ir::round_bits(type, static_cast<float>(v))}};
  return {{type, ir::wrap_bits(type, static_cast<std::uint32_t>(v))}};
}

void set_constant(ir::Op& op, ConstValue v) {
  op.kind = ir::OpKind::Const;
  op.type = v.type;
  op.args.clear();
  op.blocks.clear();
  op.param = -1;
  op.shared = -1;
  op.lanes = 1;
  op.builtin = ir::Builtin::ThreadId;
  op.axis = 0;
  op.fvalue = is_float(v.type) ? static_cast<double>(v.as_float()) : 0.0;
  op.ivalue = is_float(v.type) ? 0 : v.as_int();
}

std::optional<ConstValue> evaluate(ir::OpKind kind, DType type, std::span<const ConstValue> args) {
  std::array<ir::ScalarValue, 3> operands{};
  std::array<DType, 3> types{};
  if (args.size() > operands.size()) return std::nullopt;
  for (std::size_t i = 0; i < args.size(); ++i) {
    operands[i] = args[i];
    types[i] = args[i].type;
  }
  if (!ir::can_evaluate(kind, type, std::span(types).first(args.size()))) return std::nullopt;
  const ir::Evaluation e = ir::evaluate(kind, type, std::span(operands).first(args.size()));
  if (e.outcome != ir::Outcome::Defined) return std::nullopt;
  return ConstValue{e.value};
}

bool const_less(ConstValue a, ConstValue b) {
  const std::array<ir::ScalarValue, 2> operands = {a, b};
  return ir::evaluate(ir::OpKind::Lt, DType::Bool, operands).value.bits != 0;
}

}  // namespace iron::codegen
