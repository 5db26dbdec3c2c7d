/// Emission of DSL operations into the current trace, with the checks C++ types cannot make.
#include <fmt/format.h>

#include "iron/dsl/intrinsics.hpp"
#include "iron/dsl/memory.hpp"

namespace iron::dsl::detail {
namespace {

ir::Op make(ir::OpKind kind, DType type, std::vector<ir::ValueId> args) {
  ir::Op op;
  op.kind = kind;
  op.type = type;
  op.args = std::move(args);
  return op;
}

void check_write_target(Tracer& t, int param) {
  if (param < 0) return;
  const ir::Param& p = t.kernel().params.at(static_cast<std::size_t>(param));
  if (!ir::is_output(p.kind)) {
    t.fail(
        fmt::format("'{}' is an input tensor; mark it Out<T> (or InOut<T>) to write it", p.name));
  }
  t.mark_written(param);
}

}  // namespace

ir::ValueId emit_const(DType type, double fvalue, std::int64_t ivalue) {
  ir::Op op = make(ir::OpKind::Const, type, {});
  op.fvalue = fvalue;
  op.ivalue = ivalue;
  return Tracer::current().emit(std::move(op), true);
}

ir::ValueId emit_unary(ir::OpKind kind, ir::ValueId a, DType type) {
  return Tracer::current().emit(make(kind, type, {a}), true);
}

ir::ValueId emit_binary(ir::OpKind kind, ir::ValueId a, ir::ValueId b, DType type) {
  return Tracer::current().emit(make(kind, type, {a, b}), true);
}

ir::ValueId emit_convert(ir::OpKind kind, ir::ValueId a, DType to) {
  return Tracer::current().emit(make(kind, to, {a}), true);
}

ir::ValueId emit_op(ir::OpKind kind, std::initializer_list<ir::ValueId> args, DType type) {
  return Tracer::current().emit(make(kind, type, args), true);
}

ir::ValueId emit_builtin(ir::Builtin b, int axis) {
  ir::Op op = make(ir::OpKind::Builtin, DType::U32, {});
  op.builtin = b;
  op.axis = static_cast<std::uint8_t>(axis);
  return Tracer::current().emit(std::move(op), true);
}

void emit_barrier() { Tracer::current().emit(make(ir::OpKind::Barrier, DType::U32, {}), false); }

ir::ValueId emit_var_decl(ir::ValueId init, DType type) {
  return Tracer::current().emit(make(ir::OpKind::VarDecl, type, {init}), true);
}

ir::ValueId emit_var_load(ir::ValueId var, DType type) {
  return Tracer::current().emit(make(ir::OpKind::VarLoad, type, {var}), true);
}

void emit_var_store(ir::ValueId var, ir::ValueId value) {
  Tracer& t = Tracer::current();
  t.emit(make(ir::OpKind::VarStore, t.type_of(var), {var, value}), false);
}

ir::ValueId emit_constexpr_ref(int param, DType type) {
  ir::Op op = make(ir::OpKind::ConstexprRef, type, {});
  op.param = param;
  return Tracer::current().emit(std::move(op), true);
}

ir::ValueId emit_load(int param, int shared, ir::ValueId index, DType type) {
  ir::Op op = make(shared >= 0 ? ir::OpKind::SharedLoad : ir::OpKind::Load, type, {index});
  op.param = param;
  op.shared = shared;
  return Tracer::current().emit(std::move(op), true);
}

void emit_store(int param, int shared, ir::ValueId index, ir::ValueId value, DType type) {
  Tracer& t = Tracer::current();
  check_write_target(t, param);
  ir::Op op = make(shared >= 0 ? ir::OpKind::SharedStore : ir::OpKind::Store, type, {index, value});
  op.param = param;
  op.shared = shared;
  t.emit(std::move(op), false);
}

ir::ValueId emit_atomic(ir::OpKind kind, int param, int shared, ir::ValueId index,
                        ir::ValueId value, DType type) {
  Tracer& t = Tracer::current();
  check_write_target(t, param);
  ir::Op op = make(kind, type, {index, value});
  op.param = param;
  op.shared = shared;
  return t.emit(std::move(op), true);
}

}  // namespace iron::dsl::detail
