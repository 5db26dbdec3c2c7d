/// Simdgroup ops in C-like code: 32-bit carriers and the source-lane arithmetic of shuffles.
#include "collectives.hpp"

#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"

namespace iron::codegen::c_like {
namespace {

using ir::OpKind;

/// The 32-bit type that carries a value of `t` through a simd op.
DType carrier(DType t) {
  switch (t) {
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3:
    case DType::F8E5M2:
      return DType::F32;
    case DType::I8:
      return DType::I32;
    case DType::U8:
    case DType::U16:
    case DType::Bool:
      return DType::U32;
    case DType::F32:
    case DType::I32:
    case DType::U32:
      return t;
  }
  return t;
}

bool is_move(OpKind k) {
  return k == OpKind::SimdShuffle || k == OpKind::SimdShuffleXor || k == OpKind::SimdShuffleUp ||
         k == OpKind::SimdShuffleDown || k == OpKind::SimdBroadcast;
}

/// The lane a shuffle reads, as a u32 expression: wrong lanes fall outside 0..31 modulo 2^32.
std::string source_lane(const ir::Op& op, const Context& cx) {
  const ir::ValueId operand = ir::SimdMoveOp(op).lane();
  const DType t = cx.values.type(operand);
  std::string value = t == DType::U32
                          ? cx.values.operand(operand)
                          : cx.dialect.convert(cx.values.name(operand), t, DType::U32, cx.needs);
  if (op.kind == OpKind::SimdShuffle || op.kind == OpKind::SimdBroadcast) return value;
  const std::string lane = cx.dialect.builtin(ir::Builtin::Lane, 0, cx.needs);
  const char* symbol = op.kind == OpKind::SimdShuffleXor  ? " ^ "
                       : op.kind == OpKind::SimdShuffleUp ? " - "
                                                          : " + ";
  const bool compound = lane.find(' ') != std::string::npos;
  return (compound ? "(" + lane + ")" : lane) + symbol + value;
}

}  // namespace

std::string simd_expression(const ir::Op& op, const Context& cx) {
  IRON_INTERNAL_ASSERT(ir::op_class(op.kind) == ir::OpClass::Simd, "simd op expected");
  const DType t = op.type;
  const DType wide = carrier(t);
  const bool move = is_move(op.kind);
  const std::string name =
      cx.values.name(move ? ir::SimdMoveOp(op).value() : ir::CollectiveOp(op).value());
  const std::string v = t == wide ? name : cx.dialect.convert(name, t, wide, cx.needs);
  std::string result;
  if (!move) {
    result = cx.dialect.simd_reduce(op.kind, wide, v, cx.needs);
  } else if (const auto c = cx.values.integer(ir::SimdMoveOp(op).lane()); c && *c >= 0 && *c < 32) {
    result = cx.dialect.simd_move(op.kind, wide, v, static_cast<int>(*c), cx.needs);
  } else {
    result = cx.dialect.simd_read(wide, v, source_lane(op, cx), cx.needs);
  }
  return t == wide ? result : cx.dialect.convert(result, wide, t, cx.needs);
}

}  // namespace iron::codegen::c_like
