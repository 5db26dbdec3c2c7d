/// Value expressions: built-ins, constexprs, loads, extracts and atomics; the rest delegated.
#include "expressions.hpp"

#include <fmt/format.h>

#include <bit>

#include "arithmetic.hpp"
#include "collectives.hpp"
#include "iron/core/error.hpp"
#include "iron/core/op_views.hpp"

namespace iron::codegen::c_like {

using ir::OpKind;

Access target_of(int param, int shared, const Context& cx) {
  Access a;
  if (shared >= 0) {
    a.space = Space::Shared;
    a.base = cx.kernel.shared.at(static_cast<std::size_t>(shared)).name;
    return a;
  }
  const ir::Param& p = cx.kernel.params.at(static_cast<std::size_t>(param));
  IRON_INTERNAL_ASSERT(p.kind != ir::ParamKind::Constexpr, "memory access to a constexpr");
  a.space = p.kind == ir::ParamKind::Input ? Space::Input : Space::Output;
  a.base = p.name;
  return a;
}

std::pair<int, int> swizzle_shifts(const ir::SharedAlloc& a) {
  if (a.swizzle == 0) return {0, 0};
  return {std::countr_zero(a.swizzle),
          std::countr_zero(static_cast<std::uint32_t>(16 / dtype_size(a.dtype)))};
}

std::string placed_index(const ir::SharedAlloc& a, const std::string& index) {
  const auto [row, chunk] = swizzle_shifts(a);
  if (row == 0) return index;
  return fmt::format("({0} ^ ((({0} >> {1}u) & 7u) << {2}u))", index, row, chunk);
}

Access access_of(const ir::Op& op, const Context& cx) {
  Access a = target_of(op.param, op.shared, cx);
  a.index = cx.values.name(ir::AccessOp(op).index());
  if (op.shared >= 0) {
    a.index = placed_index(cx.kernel.shared.at(static_cast<std::size_t>(op.shared)), a.index);
  }
  a.type = op.type;
  a.lanes = op.lanes;
  return a;
}

DType constexpr_carrier(DType t) {
  if (is_float(t)) return DType::F32;
  return is_signed_int(t) ? DType::I32 : DType::U32;
}

std::string value_expression(const ir::Op& op, const Context& cx) {
  // Every kind is listed, so that a new one is written on purpose (-Wswitch names it).
  switch (op.kind) {
    case OpKind::Neg:
    case OpKind::Not:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Exp:
    case OpKind::Exp2:
    case OpKind::Exp2Approx:
    case OpKind::Log:
    case OpKind::Log2:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tanh:
    case OpKind::Erf:
    case OpKind::Abs:
    case OpKind::Recip:
    case OpKind::RecipApprox:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Rem:
    case OpKind::Min:
    case OpKind::Max:
    case OpKind::Pow:
    case OpKind::Atan2:
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor:
    case OpKind::Shl:
    case OpKind::Shr:
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::Select:
    case OpKind::Fma:
    case OpKind::Cast:
    case OpKind::Bitcast:
      return arithmetic_expression(op, cx);
    case OpKind::SimdSum:
    case OpKind::SimdMax:
    case OpKind::SimdMin:
    case OpKind::SimdPrefixSum:
    case OpKind::SimdPrefixExclusiveSum:
    case OpKind::SimdShuffle:
    case OpKind::SimdShuffleXor:
    case OpKind::SimdShuffleUp:
    case OpKind::SimdShuffleDown:
    case OpKind::SimdBroadcast:
      return simd_expression(op, cx);
    case OpKind::AtomicAdd:
    case OpKind::AtomicMax:
    case OpKind::AtomicMin:
    case OpKind::AtomicAnd:
    case OpKind::AtomicOr:
    case OpKind::AtomicXor:
    case OpKind::AtomicExchange:
      return cx.dialect.atomic(op.kind, access_of(op, cx), cx.values.name(ir::AccessOp(op).value()),
                               cx.needs);
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
      const ir::ExtractOp extract(op);
      const ir::ValueId v = extract.vector();
      return cx.dialect.extract(cx.values.name(v), cx.values.lanes(v), extract.lane());
    }
    case OpKind::VarLoad:
      return cx.values.name(ir::VarOp(op).variable());
    case OpKind::ReduceSum:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
      IRON_INTERNAL_ERROR("reduce.* reached the emitter: run lower_reductions first");
    case OpKind::RegsDecl:
    case OpKind::RegsLoad:
    case OpKind::RegsStore:
      IRON_INTERNAL_ERROR("regs.* reached the emitter: run promote_registers first");
    case OpKind::FragGet: {
      const ir::FragSlotOp get(op);
      const ir::ValueId f = get.fragment();
      return cx.dialect.fragment_element(cx.values.name(f), cx.values.fragment(f), op.type,
                                         get.slot());
    }
    case OpKind::FragCoord: {
      const ir::FragSlotOp coord(op);
      const ir::ValueId f = coord.fragment();
      return cx.dialect.fragment_coord(cx.values.name(f), cx.values.fragment(f), coord.slot(),
                                       coord.column(), cx.needs);
    }
    case OpKind::FragRowValue: {
      const ir::FragSlotOp row_value(op);
      const ir::ValueId f = row_value.fragment();
      return cx.dialect.fragment_row_value(cx.values.name(row_value.row_vector()),
                                           cx.values.fragment(f), row_value.slot());
    }
    case OpKind::CopyAsync:
    case OpKind::AsyncCommit:
    case OpKind::AsyncWait:
    case OpKind::WgMma:
    case OpKind::WgCommit:
    case OpKind::WgWait:
    case OpKind::FenceProxyAsync:
    case OpKind::TargetHas:
    case OpKind::Specialize:
    case OpKind::CopyTile:
    case OpKind::CopyTensor:
    case OpKind::MbarInit:
    case OpKind::MbarExpect:
    case OpKind::MbarWait:
    case OpKind::MbarInval:
    case OpKind::MbarArrive:
    case OpKind::WgRegisters:
    case OpKind::WgTurn:
    case OpKind::Exit:
    case OpKind::FragRowReduce:
    case OpKind::FragConvert:
    case OpKind::FragDecl:
    case OpKind::FragLoad:
    case OpKind::FragStore:
    case OpKind::FragMma:
    case OpKind::FragSet:
    case OpKind::Const:
    case OpKind::VarDecl:
    case OpKind::Store:
    case OpKind::SharedStore:
    case OpKind::Barrier:
    case OpKind::BarrierAmong:
    case OpKind::BarrierSimdgroup:
    case OpKind::VarStore:
    case OpKind::For:
    case OpKind::If:
      break;
    case OpKind::Pipeline:
    case OpKind::PipelineIndex:
      IRON_INTERNAL_ERROR("a pipeline reached the emitter: run expand_pipelines first");
  }
  IRON_INTERNAL_ERROR(
      fmt::format("{} is written as a statement, not as an expression", ir::op_name(op.kind)));
}

}  // namespace iron::codegen::c_like
