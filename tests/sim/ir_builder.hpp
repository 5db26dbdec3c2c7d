/// A tiny builder of Iron IR for the simulator's tests: appends ops to the current block, with
/// the source line set by at(), so the tests do not depend on the DSL or the parser.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::sim_test {

class IrBuilder {
 public:
  using ValueId = ir::ValueId;

  explicit IrBuilder(std::string name, std::string file = "tests/sim/kernels.cpp")
      : file_(std::move(file)) {
    k_.name = std::move(name);
    blocks_.push_back(&k_.body);
  }

  /// Ops added from now on carry `file:line`.
  IrBuilder& at(std::uint32_t line) {
    line_ = line;
    return *this;
  }

  int input(const std::string& name, DType t) { return param(name, ir::ParamKind::Input, t); }
  int output(const std::string& name, DType t) { return param(name, ir::ParamKind::Output, t); }
  int inout(const std::string& name, DType t) { return param(name, ir::ParamKind::InOut, t); }
  int constexpr_param(const std::string& name, DType t) {
    return param(name, ir::ParamKind::Constexpr, t);
  }
  int shared(const std::string& name, DType t, std::uint32_t size) {
    k_.shared.push_back({name, t, size, 0});
    return static_cast<int>(k_.shared.size()) - 1;
  }
  void mode(ir::DispatchMode m) { k_.dispatch.mode = m; }
  /// The dispatch contract the verifier asks of a kernel with simdgroup or threadgroup ops (and
  /// the simulator runs only verified kernels): not elementwise, groups of a multiple of 32.
  void group_contract() {
    mode(ir::DispatchMode::Reduction);
    rule(ir::SizeRule::Kind::MultipleOf, 32);
  }
  void rule(ir::SizeRule::Kind kind, std::int64_t value) {
    k_.dispatch.group_size_rules.push_back({kind, value, "", 1});
  }
  void rule(ir::SizeRule::Kind kind, const std::string& constexpr_name, std::int64_t divisor) {
    k_.dispatch.group_size_rules.push_back({kind, 0, constexpr_name, divisor});
  }

  ValueId constant(DType t, double v) {
    ir::Op op = make(ir::OpKind::Const, t);
    if (is_float(t)) {
      op.fvalue = v;
    } else {
      op.ivalue = static_cast<std::int64_t>(v);
    }
    return emit(std::move(op));
  }
  ValueId u32(std::uint32_t v) { return constant(DType::U32, v); }
  ValueId i32(std::int32_t v) { return constant(DType::I32, v); }
  ValueId constexpr_ref(int param_index) {
    ir::Op op = make(ir::OpKind::ConstexprRef, k_.params[param_index].dtype);
    op.param = param_index;
    return emit(std::move(op));
  }
  ValueId builtin(ir::Builtin b, std::uint8_t axis = 0) {
    ir::Op op = make(ir::OpKind::Builtin, DType::U32);
    op.builtin = b;
    op.axis = axis;
    return emit(std::move(op));
  }
  ValueId tid() { return builtin(ir::Builtin::ThreadId); }
  ValueId gid() { return builtin(ir::Builtin::GlobalId); }

  /// Unary and binary ops take their type from the first operand; compares give bool.
  ValueId op(ir::OpKind kind, std::vector<ValueId> args) {
    const DType t = ir::op_class(kind) == ir::OpClass::Compare ? DType::Bool : type(args[0]);
    return emit(make(kind, t, std::move(args)));
  }
  ValueId select(ValueId c, ValueId a, ValueId b) {
    return emit(make(ir::OpKind::Select, type(a), {c, a, b}));
  }
  ValueId cast(DType to, ValueId v) { return emit(make(ir::OpKind::Cast, to, {v})); }
  ValueId bitcast(DType to, ValueId v) { return emit(make(ir::OpKind::Bitcast, to, {v})); }

  ValueId load(int param_index, ValueId index) {
    ir::Op op = make(ir::OpKind::Load, k_.params[param_index].dtype, {index});
    op.param = param_index;
    return emit(std::move(op));
  }
  void store(int param_index, ValueId index, ValueId v) {
    ir::Op op = make(ir::OpKind::Store, type(v), {index, v});
    op.param = param_index;
    emit(std::move(op), false);
  }
  ValueId shared_load(int alloc, ValueId index) {
    ir::Op op = make(ir::OpKind::SharedLoad, k_.shared[alloc].dtype, {index});
    op.shared = alloc;
    return emit(std::move(op));
  }
  void shared_store(int alloc, ValueId index, ValueId v) {
    ir::Op op = make(ir::OpKind::SharedStore, type(v), {index, v});
    op.shared = alloc;
    emit(std::move(op), false);
  }
  /// A vector load of `lanes` elements; read its lanes with extract().
  ValueId vector_load(int param_index, ValueId index, std::uint8_t lanes) {
    ir::Op op = make(ir::OpKind::Load, k_.params[param_index].dtype, {index});
    op.param = param_index;
    op.lanes = lanes;
    return emit(std::move(op));
  }
  ValueId shared_vector_load(int alloc, ValueId index, std::uint8_t lanes) {
    ir::Op op = make(ir::OpKind::SharedLoad, k_.shared[alloc].dtype, {index});
    op.shared = alloc;
    op.lanes = lanes;
    return emit(std::move(op));
  }
  ValueId extract(ValueId vector, std::int64_t lane) {
    ir::Op op = make(ir::OpKind::Extract, type(vector), {vector});
    op.ivalue = lane;
    return emit(std::move(op));
  }
  /// A vector store of one value per lane.
  void vector_store(int param_index, ValueId index, const std::vector<ValueId>& values) {
    ir::Op op = make(ir::OpKind::Store, type(values[0]), {index});
    op.args.insert(op.args.end(), values.begin(), values.end());
    op.param = param_index;
    op.lanes = static_cast<std::uint8_t>(values.size());
    emit(std::move(op), false);
  }
  void shared_vector_store(int alloc, ValueId index, const std::vector<ValueId>& values) {
    ir::Op op = make(ir::OpKind::SharedStore, type(values[0]), {index});
    op.args.insert(op.args.end(), values.begin(), values.end());
    op.shared = alloc;
    op.lanes = static_cast<std::uint8_t>(values.size());
    emit(std::move(op), false);
  }
  ValueId atomic(ir::OpKind kind, int param_index, ValueId index, ValueId v) {
    ir::Op op = make(kind, type(v), {index, v});
    op.param = param_index;
    return emit(std::move(op));
  }
  ValueId shared_atomic(ir::OpKind kind, int alloc, ValueId index, ValueId v) {
    ir::Op op = make(kind, type(v), {index, v});
    op.shared = alloc;
    return emit(std::move(op));
  }
  void barrier() { emit(make(ir::OpKind::Barrier, DType::U32), false); }
  /// simd.* and reduce.*; `operand` is the lane, mask or delta of the shuffles.
  ValueId collective(ir::OpKind kind, ValueId v, ValueId operand = ir::kNoValue) {
    std::vector<ValueId> args = {v};
    if (operand != ir::kNoValue) args.push_back(operand);
    return emit(make(kind, type(v), std::move(args)));
  }

  ValueId var(ValueId init) { return emit(make(ir::OpKind::VarDecl, type(init), {init})); }
  ValueId var_load(ValueId v) { return emit(make(ir::OpKind::VarLoad, type(v), {v})); }
  void var_store(ValueId var, ValueId v) {
    emit(make(ir::OpKind::VarStore, type(var), {var, v}), false);
  }

  /// for (i = start; i < end; i += step) body(i), counting in the type of `start`.
  template <class Body>
  void loop(ValueId start, ValueId end, ValueId step, Body body) {
    const ValueId i = emit(make(ir::OpKind::For, type(start), {start, end, step}));
    ir::Op& op = blocks_.back()->ops.back();
    op.blocks.resize(1);
    nest(op.blocks[0], [&] { body(i); });
  }

  template <class Then, class Else>
  void branch(ValueId cond, Then then_body, Else else_body) {
    emit(make(ir::OpKind::If, DType::Bool, {cond}), false);
    ir::Op& op = blocks_.back()->ops.back();
    op.blocks.resize(2);
    nest(op.blocks[0], then_body);
    nest(op.blocks[1], else_body);
  }
  template <class Then>
  void branch(ValueId cond, Then then_body) {
    branch(cond, then_body, [] {});
  }

  DType type(ValueId v) const { return types_.at(v); }

  ir::Kernel build() const {
    ir::Kernel k = k_;
    k.num_values = static_cast<std::uint32_t>(types_.size());
    k.loc = {file_, 1};
    return k;
  }

 private:
  int param(const std::string& name, ir::ParamKind kind, DType t) {
    k_.params.push_back({name, kind, t});
    return static_cast<int>(k_.params.size()) - 1;
  }

  ir::Op make(ir::OpKind kind, DType t, std::vector<ValueId> args = {}) const {
    ir::Op op;
    op.kind = kind;
    op.type = t;
    op.args = std::move(args);
    op.loc = {file_, line_};
    return op;
  }

  ValueId emit(ir::Op op, bool has_result = true) {
    if (has_result) {
      op.result = static_cast<ValueId>(types_.size());
      types_.push_back(op.type);
    }
    const ValueId result = op.result;
    blocks_.back()->ops.push_back(std::move(op));
    return result;
  }

  // The parent op is not touched while the nested block grows, so the pointer stays valid.
  template <class Body>
  void nest(ir::Block& block, Body body) {
    blocks_.push_back(&block);
    body();
    blocks_.pop_back();
  }

  ir::Kernel k_;
  std::string file_;
  std::uint32_t line_ = 0;
  std::vector<ir::Block*> blocks_;
  std::vector<DType> types_;
};

}  // namespace iron::sim_test
