/// Value expressions: built-ins, constexprs, loads, extracts and atomics; the rest delegated.
#include "expressions.hpp"

#include "arithmetic.hpp"
#include "collectives.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen::c_like {

using ir::OpKind;

Access access_of(const ir::Op& op, const Context& cx) {
  Access a;
  if (op.shared >= 0) {
    a.space = Space::Shared;
    a.base = cx.kernel.shared.at(static_cast<std::size_t>(op.shared)).name;
  } else {
    const ir::Param& p = cx.kernel.params.at(static_cast<std::size_t>(op.param));
    IRON_INTERNAL_ASSERT(p.kind != ir::ParamKind::Constexpr, "memory access to a constexpr");
    a.space = p.kind == ir::ParamKind::Input ? Space::Input : Space::Output;
    a.base = p.name;
  }
  a.index = cx.values.name(op.args.at(0));
  a.type = op.type;
  a.lanes = op.lanes;
  return a;
}

DType constexpr_carrier(DType t) {
  if (is_float(t)) return DType::F32;
  return is_signed_int(t) ? DType::I32 : DType::U32;
}

std::string value_expression(const ir::Op& op, const Context& cx) {
  switch (ir::op_class(op.kind)) {
    case ir::OpClass::Unary:
    case ir::OpClass::Binary:
    case ir::OpClass::Compare:
      return arithmetic_expression(op, cx);
    case ir::OpClass::Simd:
      return simd_expression(op, cx);
    case ir::OpClass::Atomic:
      return cx.dialect.atomic(op.kind, access_of(op, cx), cx.values.name(op.args.at(1)), cx.needs);
    case ir::OpClass::Group:
      IRON_INTERNAL_ASSERT(false, "reduce.* reached the emitter: run lower_reductions first");
      break;
    default:
      break;
  }
  switch (op.kind) {
    case OpKind::Builtin:
      return cx.dialect.builtin(op.builtin, op.axis, cx.needs);
    case OpKind::ConstexprRef: {
      const ir::Param& p = cx.kernel.params.at(static_cast<std::size_t>(op.param));
      const DType carrier = constexpr_carrier(op.type);
      return carrier == op.type ? p.name : cx.dialect.convert(p.name, carrier, op.type, cx.needs);
    }
    case OpKind::Load:
    case OpKind::SharedLoad: {
      const Access a = access_of(op, cx);
      return a.lanes > 1 ? cx.dialect.vector_load(a, cx.needs) : a.base + "[" + a.index + "]";
    }
    case OpKind::Extract: {
      const ir::ValueId v = op.args.at(0);
      return cx.dialect.extract(cx.values.name(v), cx.values.lanes(v), static_cast<int>(op.ivalue));
    }
    case OpKind::VarDecl:
    case OpKind::VarLoad:
      return cx.values.name(op.args.at(0));
    default:
      return arithmetic_expression(op, cx);
  }
}

}  // namespace iron::codegen::c_like
