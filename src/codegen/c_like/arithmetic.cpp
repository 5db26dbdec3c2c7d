/// Lane-wise arithmetic as C-like expressions, with the simulator's rounding and wrapping.
#include "arithmetic.hpp"

#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"
#include "literals.hpp"

namespace iron::codegen::c_like {
namespace {

using ir::OpKind;

/// The C operator of each binary and comparison op that has one.
constexpr Spelling kOperators[] = {
    {OpKind::Add, "+"},  {OpKind::Sub, "-"},  {OpKind::Mul, "*"}, {OpKind::Div, "/"},
    {OpKind::Rem, "%"},  {OpKind::And, "&"},  {OpKind::Or, "|"},  {OpKind::Xor, "^"},
    {OpKind::Shl, "<<"}, {OpKind::Shr, ">>"}, {OpKind::Eq, "=="}, {OpKind::Ne, "!="},
    {OpKind::Lt, "<"},   {OpKind::Le, "<="},  {OpKind::Gt, ">"},  {OpKind::Ge, ">="},
};

/// The C operator of and, or and xor on bools.
constexpr Spelling kBoolOperators[] = {
    {OpKind::And, "&&"},
    {OpKind::Or, "||"},
    {OpKind::Xor, "!="},
};

bool is_narrow_int(DType t) { return t == DType::U8 || t == DType::I8 || t == DType::U16; }

/// Narrow integers are promoted to int by C's arithmetic: the result is wrapped back.
std::string wrap(DType t, const std::string& expr, const Context& cx) {
  return is_narrow_int(t) ? cx.dialect.convert(expr, DType::I32, t, cx.needs) : expr;
}

/// An operand of a product or left shift of narrow integers, taken as unsigned int so the
/// promoted arithmetic cannot overflow int (65535 * 65535 would).
std::string unsigned_operand(ir::ValueId v, const Context& cx) {
  const DType t = cx.values.type(v);
  return is_narrow_int(t) ? cx.dialect.convert(cx.values.name(v), t, DType::U32, cx.needs)
                          : cx.values.operand(v);
}

/// An operand of min or max in the 32-bit type its narrow type `t` promotes to, so both operands
/// have one type and the call is unambiguous (literals already are 32-bit).
std::string promoted_operand(ir::ValueId v, DType t, const Context& cx) {
  const bool literal = cx.values.integer(v) && !cx.values.bound_literal(v);
  if (!is_narrow_int(t) || literal) return cx.values.name(v);
  const DType wide = is_signed_int(t) ? DType::I32 : DType::U32;
  return cx.dialect.convert(cx.values.name(v), t, wide, cx.needs);
}

/// `fn(args…)` of the f32 function, the arguments widened and the result rounded once. A
/// function named iron_* is a prelude helper of the dialect.
std::string float_call(std::string_view fn, const ir::Op& op, const Context& cx) {
  if (fn.starts_with("iron_")) cx.needs.helpers.insert(std::string(fn));
  std::string call = std::string(fn) + "(";
  for (std::size_t i = 0; i < op.args.size(); ++i) {
    const std::string arg = cx.values.name(op.args[i]);
    call += i > 0 ? ", " : "";
    call += op.type == DType::F32 ? arg : cx.dialect.convert(arg, op.type, DType::F32, cx.needs);
  }
  call += ")";
  return op.type == DType::F32 ? call : cx.dialect.convert(call, DType::F32, op.type, cx.needs);
}

std::string infix(const ir::Op& op, std::string_view symbol, const Context& cx) {
  const ir::BinaryOp binary(op);
  return cx.values.operand(binary.lhs()) + " " + std::string(symbol) + " " +
         cx.values.operand(binary.rhs());
}

std::string float_unary(const ir::Op& op, const Context& cx) {
  const ir::ValueId a = ir::UnaryOp(op).operand();
  if (op.kind == OpKind::Neg) {
    return cx.dialect.float_arithmetic("-" + cx.values.operand(a), op.type);
  }
  if (op.kind != OpKind::Recip) return float_call(cx.dialect.float_function(op.kind), op, cx);
  const std::string x = op.type == DType::F32
                            ? cx.values.operand(a)
                            : cx.dialect.convert(cx.values.name(a), op.type, DType::F32, cx.needs);
  const std::string quotient = "1.0f / " + x;
  return op.type == DType::F32 ? quotient
                               : cx.dialect.convert(quotient, DType::F32, op.type, cx.needs);
}

std::string integer_unary(const ir::Op& op, const Context& cx) {
  const ir::ValueId operand = ir::UnaryOp(op).operand();
  const std::string a = cx.values.operand(operand);
  if (op.kind == OpKind::Neg) return wrap(op.type, "-" + a, cx);
  if (op.kind == OpKind::Not) return op.type == DType::Bool ? "!" + a : wrap(op.type, "~" + a, cx);
  IRON_INTERNAL_ASSERT(op.kind == OpKind::Abs, "unary op undefined on integers");
  return wrap(op.type, "abs(" + cx.values.name(operand) + ")", cx);
}

std::string float_binary(const ir::Op& op, const Context& cx) {
  const OpKind k = op.kind;
  if (k == OpKind::Add || k == OpKind::Sub || k == OpKind::Mul || k == OpKind::Div) {
    return cx.dialect.float_arithmetic(infix(op, spelling_of(k, kOperators), cx), op.type);
  }
  return float_call(cx.dialect.float_function(k), op, cx);
}

/// `a << b` or `a >> b` with the amount taken modulo 32, as the simulator does.
std::string shift(const ir::Op& op, std::string_view symbol, const Context& cx) {
  const ir::BinaryOp binary(op);
  const std::optional<std::int64_t> amount = cx.values.integer(binary.rhs());
  const std::string count = amount ? integer_literal(op.type, *amount & 31)
                                   : "(" + cx.values.operand(binary.rhs()) + " & 31)";
  const std::string value =
      op.kind == OpKind::Shl ? unsigned_operand(binary.lhs(), cx) : cx.values.operand(binary.lhs());
  return wrap(op.type, value + " " + std::string(symbol) + " " + count, cx);
}

std::string integer_binary(const ir::Op& op, const Context& cx) {
  const OpKind k = op.kind;
  if (op.type == DType::Bool) return infix(op, spelling_of(k, kBoolOperators), cx);
  const ir::BinaryOp binary(op);
  if (k == OpKind::Mul) {
    return wrap(op.type,
                unsigned_operand(binary.lhs(), cx) + " * " + cx.values.operand(binary.rhs()), cx);
  }
  if (k == OpKind::Min || k == OpKind::Max) {
    return wrap(op.type,
                std::string(k == OpKind::Min ? "min(" : "max(") +
                    promoted_operand(binary.lhs(), op.type, cx) + ", " +
                    promoted_operand(binary.rhs(), op.type, cx) + ")",
                cx);
  }
  if (k == OpKind::Shl || k == OpKind::Shr) return shift(op, spelling_of(k, kOperators), cx);
  return wrap(op.type, infix(op, spelling_of(k, kOperators), cx), cx);
}

std::string fma(const ir::Op& op, const Context& cx) {
  if (is_float(op.type)) return float_call(cx.dialect.float_function(OpKind::Fma), op, cx);
  const ir::FmaOp fused(op);
  return wrap(op.type,
              unsigned_operand(fused.lhs(), cx) + " * " + cx.values.operand(fused.rhs()) + " + " +
                  cx.values.operand(fused.addend()),
              cx);
}

}  // namespace

std::string arithmetic_expression(const ir::Op& op, const Context& cx) {
  const Values& v = cx.values;
  switch (ir::op_class(op.kind)) {
    case ir::OpClass::Unary:
      return is_float(op.type) ? float_unary(op, cx) : integer_unary(op, cx);
    case ir::OpClass::Binary:
      return is_float(op.type) ? float_binary(op, cx) : integer_binary(op, cx);
    case ir::OpClass::Compare:
      return infix(op, spelling_of(op.kind, kOperators), cx);
    case ir::OpClass::Other:
      break;
    case ir::OpClass::Leaf:
    case ir::OpClass::Atomic:
    case ir::OpClass::Simd:
    case ir::OpClass::Group:
      IRON_INTERNAL_ERROR("not a lane-wise arithmetic op");
  }
  if (op.kind == OpKind::Select) {
    const ir::SelectOp select(op);
    return v.operand(select.condition()) + " ? " + v.operand(select.if_true()) + " : " +
           v.operand(select.if_false());
  }
  if (op.kind == OpKind::Fma) return fma(op, cx);
  IRON_INTERNAL_ASSERT(op.kind == OpKind::Cast || op.kind == OpKind::Bitcast,
                       "not a lane-wise arithmetic op");
  const ir::ValueId operand = ir::UnaryOp(op).operand();
  const DType from = v.type(operand);
  if (from == op.type) return v.name(operand);
  return op.kind == OpKind::Cast ? cx.dialect.convert(v.name(operand), from, op.type, cx.needs)
                                 : cx.dialect.bitcast(v.name(operand), from, op.type);
}

}  // namespace iron::codegen::c_like
