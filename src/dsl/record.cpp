/// Recording of DSL operations into the current trace, with the checks C++ types cannot make.
#include <fmt/format.h>

#include "iron/dsl/fragments.hpp"
#include "iron/dsl/intrinsics.hpp"
#include "iron/dsl/memory.hpp"
#include "iron/dsl/target_query.hpp"
#include "iron/dsl/tile_copy.hpp"
#include "iron/dsl/warpgroup.hpp"

namespace iron::dsl::detail {
namespace {

void check_write_target(Tracer& t, int param) {
  if (param < 0) return;
  const ir::Param& p = t.kernel().params.at(static_cast<std::size_t>(param));
  if (!ir::is_output(p.kind)) {
    t.fail(
        fmt::format("'{}' is an input tensor; mark it Out<T> (or InOut<T>) to write it", p.name));
  }
  t.mark_written(param);
}

/// A load, store or atomic of tensor `param` or of threadgroup allocation `shared`.
ir::Op& record_access(Tracer& t, ir::OpKind kind, int param, int shared,
                      std::vector<ir::ValueId> args, DType type) {
  ir::Op& op = t.record(kind, type, std::move(args));
  op.param = param;
  op.shared = shared;
  return op;
}

}  // namespace

ir::ValueId record_const(DType type, double fvalue, std::int64_t ivalue) {
  ir::Op& op = Tracer::current().record(ir::OpKind::Const, type, {});
  op.fvalue = fvalue;
  op.ivalue = ivalue;
  return op.result;
}

ir::ValueId record_unary(ir::OpKind kind, ir::ValueId a, DType type) {
  return Tracer::current().record(kind, type, {a}).result;
}

ir::ValueId record_binary(ir::OpKind kind, ir::ValueId a, ir::ValueId b, DType type) {
  return Tracer::current().record(kind, type, {a, b}).result;
}

ir::ValueId record_convert(ir::OpKind kind, ir::ValueId a, DType to) {
  return Tracer::current().record(kind, to, {a}).result;
}

ir::ValueId record_op(ir::OpKind kind, std::initializer_list<ir::ValueId> args, DType type) {
  return Tracer::current().record(kind, type, args).result;
}

ir::ValueId record_builtin(ir::Builtin b, int axis) {
  ir::Op& op = Tracer::current().record(ir::OpKind::Builtin, DType::U32, {});
  op.builtin = b;
  op.axis = static_cast<std::uint8_t>(axis);
  return op.result;
}

void record_barrier() { Tracer::current().record(ir::OpKind::Barrier, DType::U32, {}); }

void record_barrier_among(std::uint32_t threads) {
  Tracer::current().record(ir::OpKind::BarrierAmong, DType::U32, {}).ivalue = threads;
}

void record_simdgroup_barrier() {
  Tracer::current().record(ir::OpKind::BarrierSimdgroup, DType::U32, {});
}

ir::ValueId record_var_decl(ir::ValueId init, DType type) {
  return Tracer::current().record(ir::OpKind::VarDecl, type, {init}).result;
}

ir::ValueId record_var_load(ir::ValueId var, DType type) {
  return Tracer::current().record(ir::OpKind::VarLoad, type, {var}).result;
}

ir::ValueId record_regs_decl(ir::ValueId init, DType type, std::size_t elements) {
  ir::Op& op = Tracer::current().record(ir::OpKind::RegsDecl, type, {init});
  op.ivalue = static_cast<std::int64_t>(elements);
  return op.result;
}

ir::ValueId record_frag_decl(ir::ValueId init, DType type, const ir::FragmentShape& shape) {
  ir::Op& op = Tracer::current().record(ir::OpKind::FragDecl, type, {init});
  op.fragment = shape;
  return op.result;
}

void record_frag_access(bool store, int param, int shared, ir::ValueId fragment, ir::ValueId offset,
                        ir::ValueId stride, ir::MatrixLayout layout, DType type,
                        std::int64_t window) {
  Tracer& t = Tracer::current();
  if (store) check_write_target(t, param);
  ir::Op& op = record_access(t, store ? ir::OpKind::FragStore : ir::OpKind::FragLoad, param, shared,
                             {offset, fragment, stride}, type);
  op.layout = layout;
  op.ivalue = window;
}

void record_frag_mma(ir::ValueId d, ir::ValueId a, ir::ValueId b) {
  Tracer::current().record(ir::OpKind::FragMma, DType::F32, {d, a, b});
}

void record_copy_async(int shared, ir::ValueId to, int param, ir::ValueId from, ir::ValueId valid,
                       DType type, std::uint8_t lanes) {
  Tracer& t = Tracer::current();
  if (shared < 0) t.fail("copy_async copies into shared memory; its destination is a tensor");
  ir::Op& op = record_access(t, ir::OpKind::CopyAsync, param, shared, {to, from, valid}, type);
  op.lanes = lanes;
}

void record_copy_tile(int shared, ir::ValueId at, int param, ir::ValueId base, ir::ValueId height,
                      ir::ValueId width, ir::ValueId row0, ir::ValueId col0, std::uint32_t rows,
                      std::uint32_t cols, DType type) {
  Tracer& t = Tracer::current();
  ir::Op& op = t.record(ir::OpKind::CopyTile, type, {at, base, height, width, row0, col0});
  op.shared = shared;
  op.param = param;
  op.fragment.rows = rows;
  op.fragment.cols = cols;
}

void record_copy_image_tile(int shared, ir::ValueId at, int param,
                            const std::array<ir::ValueId, 5>& extent, ir::ValueId image,
                            ir::ValueId y0, ir::ValueId x0, ir::ValueId c0, std::uint32_t box_h,
                            std::uint32_t box_w, std::uint32_t cols, DType type) {
  const auto [base, images, height, width, channels] = extent;
  ir::Op& op = Tracer::current().record(
      ir::OpKind::CopyTile, type, {at, base, height, channels, y0, c0, images, width, image, x0});
  op.shared = shared;
  op.param = param;
  op.fragment.rows = box_h * box_w;
  op.fragment.cols = cols;
  op.ivalue = box_w;
}

void record_wg_mma(ir::ValueId d, int a_alloc, ir::ValueId a_offset, ir::ValueId a_stride,
                   int b_alloc, ir::ValueId b_offset, ir::ValueId b_stride, ir::ValueId b_panel,
                   ir::MatrixLayout b_layout, std::uint32_t k) {
  std::vector<ir::ValueId> args = {d, a_offset, a_stride, b_offset, b_stride};
  if (b_layout == ir::MatrixLayout::RowMajor) args.push_back(b_panel);
  ir::Op& op = Tracer::current().record(ir::OpKind::WgMma, DType::F32, std::move(args));
  op.shared = a_alloc;
  op.shared_b = b_alloc;
  op.layout = b_layout;
  op.ivalue = k;
}

void record_wg_mma_registers(ir::ValueId d, ir::ValueId a, int b_alloc, ir::ValueId b_offset,
                             ir::ValueId b_stride, ir::ValueId b_panel, ir::MatrixLayout b_layout,
                             std::uint32_t k) {
  std::vector<ir::ValueId> args = {d, a, b_offset, b_stride};
  if (b_layout == ir::MatrixLayout::RowMajor) args.push_back(b_panel);
  ir::Op& op = Tracer::current().record(ir::OpKind::WgMma, DType::F32, std::move(args));
  op.shared_b = b_alloc;
  op.layout = b_layout;
  op.ivalue = k;
}

void record_wg_commit() { Tracer::current().record(ir::OpKind::WgCommit, DType::U32, {}); }

void record_wg_wait(ir::ValueId d, std::int64_t pending) {
  Tracer::current().record(ir::OpKind::WgWait, DType::U32, {d}).ivalue = pending;
}

void record_wg_turn(ir::TurnStep step, std::uint32_t warpgroups) {
  ir::Op& op = Tracer::current().record(ir::OpKind::WgTurn, DType::U32, {});
  op.axis = static_cast<std::uint8_t>(step);
  op.ivalue = warpgroups;
}

ir::ValueId record_target_has(ir::TargetFeature feature) {
  ir::Op& op = Tracer::current().record(ir::OpKind::TargetHas, DType::Bool, {});
  op.ivalue = static_cast<std::int64_t>(feature);
  return op.result;
}

ir::ValueId record_specialize(ir::ValueId condition) {
  return Tracer::current().record(ir::OpKind::Specialize, DType::Bool, {condition}).result;
}

void record_fence_proxy_async() {
  Tracer::current().record(ir::OpKind::FenceProxyAsync, DType::U32, {});
}

void record_async_group(bool wait, std::int64_t pending) {
  ir::Op& op = Tracer::current().record(wait ? ir::OpKind::AsyncWait : ir::OpKind::AsyncCommit,
                                        DType::U32, {});
  op.ivalue = pending;
}

ir::ValueId record_frag_get(ir::ValueId fragment, std::uint32_t slot, DType type) {
  ir::Op& op = Tracer::current().record(ir::OpKind::FragGet, type, {fragment});
  op.ivalue = slot;
  return op.result;
}

void record_frag_set(ir::ValueId fragment, std::uint32_t slot, ir::ValueId value) {
  Tracer& t = Tracer::current();
  ir::Op& op = t.record(ir::OpKind::FragSet, t.type_of(value), {fragment, value});
  op.ivalue = slot;
}

ir::ValueId record_frag_coord(ir::ValueId fragment, std::uint32_t slot, bool column) {
  ir::Op& op = Tracer::current().record(ir::OpKind::FragCoord, DType::U32, {fragment});
  op.ivalue = slot;
  op.axis = column ? 1 : 0;
  return op.result;
}

ir::ValueId record_frag_row_value(ir::ValueId fragment, std::uint32_t slot, ir::ValueId rows) {
  ir::Op& op = Tracer::current().record(ir::OpKind::FragRowValue, DType::F32, {fragment, rows});
  op.ivalue = slot;
  return op.result;
}

void record_frag_row_reduce(ir::ValueId rows, ir::ValueId fragment, ir::RowReduction reduction) {
  ir::Op& op = Tracer::current().record(ir::OpKind::FragRowReduce, DType::F32, {rows, fragment});
  op.ivalue = static_cast<std::int64_t>(reduction);
}

void record_frag_convert(ir::ValueId a, ir::ValueId fragment, DType type) {
  Tracer::current().record(ir::OpKind::FragConvert, type, {a, fragment});
}

ir::ValueId record_regs_load(ir::ValueId array, ir::ValueId index, DType type) {
  return Tracer::current().record(ir::OpKind::RegsLoad, type, {array, index}).result;
}

void record_regs_store(ir::ValueId array, ir::ValueId index, ir::ValueId value) {
  Tracer& t = Tracer::current();
  t.record(ir::OpKind::RegsStore, t.type_of(value), {array, index, value});
}

void record_var_store(ir::ValueId var, ir::ValueId value) {
  Tracer& t = Tracer::current();
  t.record(ir::OpKind::VarStore, t.type_of(var), {var, value});
}

ir::ValueId record_constexpr_ref(int param, DType type) {
  ir::Op& op = Tracer::current().record(ir::OpKind::ConstexprRef, type, {});
  op.param = param;
  return op.result;
}

ir::ValueId record_load(int param, int shared, ir::ValueId index, DType type) {
  const ir::OpKind kind = shared >= 0 ? ir::OpKind::SharedLoad : ir::OpKind::Load;
  return record_access(Tracer::current(), kind, param, shared, {index}, type).result;
}

std::vector<ir::ValueId> record_lanes_load(int param, int shared, ir::ValueId index, DType type,
                                           std::uint8_t lanes) {
  Tracer& t = Tracer::current();
  const ir::OpKind kind = shared >= 0 ? ir::OpKind::SharedLoad : ir::OpKind::Load;
  ir::Op& load = record_access(t, kind, param, shared, {index}, type);
  load.lanes = lanes;
  const ir::ValueId vector = load.result;
  std::vector<ir::ValueId> values;
  for (std::uint8_t lane = 0; lane < lanes; ++lane) {
    ir::Op& extract = t.record(ir::OpKind::Extract, type, {vector});
    extract.ivalue = lane;
    values.push_back(extract.result);
  }
  return values;
}

void record_lanes_store(int param, int shared, ir::ValueId index,
                        const std::vector<ir::ValueId>& values, DType type) {
  Tracer& t = Tracer::current();
  check_write_target(t, param);
  const ir::OpKind kind = shared >= 0 ? ir::OpKind::SharedStore : ir::OpKind::Store;
  std::vector<ir::ValueId> args = {index};
  args.insert(args.end(), values.begin(), values.end());
  record_access(t, kind, param, shared, std::move(args), type).lanes =
      static_cast<std::uint8_t>(values.size());
}

void record_store(int param, int shared, ir::ValueId index, ir::ValueId value, DType type) {
  Tracer& t = Tracer::current();
  check_write_target(t, param);
  const ir::OpKind kind = shared >= 0 ? ir::OpKind::SharedStore : ir::OpKind::Store;
  record_access(t, kind, param, shared, {index, value}, type);
}

ir::ValueId record_atomic(ir::OpKind kind, int param, int shared, ir::ValueId index,
                          ir::ValueId value, DType type) {
  Tracer& t = Tracer::current();
  check_write_target(t, param);
  return record_access(t, kind, param, shared, {index, value}, type).result;
}

}  // namespace iron::dsl::detail
