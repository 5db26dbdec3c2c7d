/// Threadgroup-reduction lowering: reduce.* becomes simd reductions around shared partials.
#include "iron/codegen/passes/lower_reductions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "iron/codegen/ir_utils.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

/// One partial per simdgroup: a group has at most 1024 threads, 32 simdgroups of 32 lanes.
constexpr std::uint32_t kMaxSimdgroups = 32;

OpKind simd_kind_of(OpKind reduce) {
  switch (reduce) {
    case OpKind::ReduceSum:
      return OpKind::SimdSum;
    case OpKind::ReduceMax:
      return OpKind::SimdMax;
    default:
      return OpKind::SimdMin;
  }
}

/// The value that leaves the reduction unchanged: 0 for sum, the lowest value of `t` for max
/// and the highest for min.
double identity(OpKind reduce, DType t) {
  if (reduce == OpKind::ReduceSum) return 0.0;
  const bool lowest = reduce == OpKind::ReduceMax;
  if (is_float(t)) {
    return lowest ? -std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::infinity();
  }
  const int bits = static_cast<int>(dtype_size(t)) * 8;
  if (is_signed_int(t)) return lowest ? -std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits - 1) - 1;
  return lowest ? 0.0 : std::ldexp(1.0, bits) - 1;
}

/// A shared-allocation name no allocation of the kernel has yet.
std::string fresh_name(const ir::Kernel& kernel) {
  for (int n = 0;; ++n) {
    std::string name = fmt::format("reduce_partials{}", n);
    if (std::none_of(kernel.shared.begin(), kernel.shared.end(),
                     [&](const ir::SharedAlloc& s) { return s.name == name; })) {
      return name;
    }
  }
}

/// Appends ops to `out`, each carrying the location of the reduction being lowered.
class Emitter {
 public:
  Emitter(ir::Kernel& kernel, ir::SourceLoc loc, std::vector<ir::Op>& out)
      : kernel_(kernel), loc_(std::move(loc)), out_(out) {}

  ir::ValueId op(OpKind kind, DType type, std::vector<ir::ValueId> args) {
    return add(make_op(kernel_, kind, type, std::move(args)));
  }
  ir::ValueId constant(DType type, double value) { return add(make_const(kernel_, type, value)); }
  ir::ValueId builtin(ir::Builtin b) {
    ir::Op op = make_op(kernel_, OpKind::Builtin, DType::U32, {});
    op.builtin = b;
    return add(std::move(op));
  }
  /// A shared.load (with a fresh result) or shared.store of allocation `shared`.
  ir::ValueId shared_access(OpKind kind, DType type, int shared, std::vector<ir::ValueId> args) {
    ir::Op op;
    op.kind = kind;
    op.type = type;
    op.shared = shared;
    op.args = std::move(args);
    if (kind == OpKind::SharedLoad) op.result = new_value(kernel_);
    return add(std::move(op));
  }
  void barrier() {
    ir::Op op;
    op.kind = OpKind::Barrier;
    add(std::move(op));
  }
  ir::ValueId add(ir::Op op) {
    op.loc = loc_;
    out_.push_back(std::move(op));
    return out_.back().result;
  }

 private:
  ir::Kernel& kernel_;
  ir::SourceLoc loc_;
  std::vector<ir::Op>& out_;
};

/// Appends the lowering of `reduce` to `out`; its last op defines the reduction's value.
void lower(ir::Kernel& kernel, ir::Op reduce, std::vector<ir::Op>& out) {
  const DType t = reduce.type;
  const OpKind simd_kind = simd_kind_of(reduce.kind);
  const int partials = static_cast<int>(kernel.shared.size());
  kernel.shared.push_back({fresh_name(kernel), t, kMaxSimdgroups});
  Emitter e(kernel, reduce.loc, out);

  const ir::ValueId lane = e.builtin(ir::Builtin::Lane);
  const ir::ValueId simdgroup = e.builtin(ir::Builtin::Simdgroup);
  const ir::ValueId simdgroups = e.builtin(ir::Builtin::SimdgroupCount);
  const ir::ValueId partial = e.op(simd_kind, t, {reduce.args[0]});
  const ir::ValueId first_lane = e.op(OpKind::Eq, DType::Bool, {lane, e.constant(DType::U32, 0)});
  std::vector<ir::Op> store_partial;
  Emitter(kernel, reduce.loc, store_partial)
      .shared_access(OpKind::SharedStore, t, partials, {simdgroup, partial});
  ir::Op branch;
  branch.kind = OpKind::If;
  branch.args = {first_lane};
  branch.blocks = {ir::Block{std::move(store_partial)}, ir::Block{}};
  e.add(std::move(branch));
  e.barrier();

  // Lanes past the last simdgroup read a valid index but contribute the identity.
  const ir::ValueId last = e.op(OpKind::Sub, DType::U32, {simdgroups, e.constant(DType::U32, 1)});
  const ir::ValueId index = e.op(OpKind::Min, DType::U32, {lane, last});
  const ir::ValueId loaded = e.shared_access(OpKind::SharedLoad, t, partials, {index});
  const ir::ValueId in_range = e.op(OpKind::Lt, DType::Bool, {lane, simdgroups});
  const ir::ValueId value =
      e.op(OpKind::Select, t, {in_range, loaded, e.constant(t, identity(reduce.kind, t))});
  reduce.kind = simd_kind;
  reduce.args = {value};
  e.add(std::move(reduce));
  // No simdgroup may store the next reduction's partials while another still reads these.
  e.barrier();
}

void lower_block(ir::Kernel& kernel, ir::Block& block) {
  std::vector<ir::Op> out;
  out.reserve(block.ops.size());
  for (ir::Op& op : block.ops) {
    for (ir::Block& nested : op.blocks) lower_block(kernel, nested);
    if (ir::op_class(op.kind) == ir::OpClass::Group) {
      lower(kernel, std::move(op), out);
    } else {
      out.push_back(std::move(op));
    }
  }
  block.ops = std::move(out);
}

}  // namespace

void lower_reductions(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  lower_block(kernel, kernel.body);
}

}  // namespace iron::codegen
