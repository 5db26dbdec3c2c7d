/// Threadgroup-reduction lowering: reduce.* becomes simd reductions around shared partials.
#include "iron/codegen/passes/lower_reductions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "iron/core/builder.hpp"
#include "iron/core/op_views.hpp"
#include "iron/core/rewriter.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

/// One partial per simdgroup: a group has at most 1024 threads, 32 simdgroups of 32 lanes.
constexpr std::uint32_t kMaxSimdgroups = 32;

/// The simdgroup op that combines what `reduce` combines.
OpKind simd_kind_of(OpKind reduce) {
  if (reduce == OpKind::ReduceSum) return OpKind::SimdSum;
  return reduce == OpKind::ReduceMax ? OpKind::SimdMax : OpKind::SimdMin;
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

/// The ops that replace `reduce`; the last one defines the reduction's value.
std::vector<ir::Op> lower(ir::Kernel& kernel, ir::Op reduce) {
  const DType t = reduce.type;
  const OpKind simd_kind = simd_kind_of(reduce.kind);
  const int partials = static_cast<int>(kernel.shared.size());
  kernel.shared.push_back({fresh_name(kernel), t, kMaxSimdgroups});
  std::vector<ir::Op> out;
  ir::Builder b(kernel, out);
  b.at(reduce.loc);

  const ir::ValueId lane = b.builtin(ir::Builtin::Lane);
  const ir::ValueId simdgroup = b.builtin(ir::Builtin::Simdgroup);
  const ir::ValueId simdgroups = b.builtin(ir::Builtin::SimdgroupCount);
  const ir::ValueId partial = b.make(simd_kind, t, {ir::CollectiveOp(reduce).value()}).result;
  const ir::ValueId zero = b.constant(DType::U32, 0);
  const ir::ValueId first_lane = b.make(OpKind::Eq, DType::Bool, {lane, zero}).result;
  ir::Op& branch = b.branch(first_lane);
  ir::Builder(kernel, ir::IfOp(branch).then_block().ops)
      .at(reduce.loc)
      .make(OpKind::SharedStore, t, {simdgroup, partial})
      .shared = partials;
  b.make(OpKind::Barrier, DType::U32);

  // Lanes past the last simdgroup read a valid index but contribute the identity.
  const ir::ValueId one = b.constant(DType::U32, 1);
  const ir::ValueId last = b.make(OpKind::Sub, DType::U32, {simdgroups, one}).result;
  const ir::ValueId index = b.make(OpKind::Min, DType::U32, {lane, last}).result;
  ir::Op& load = b.make(OpKind::SharedLoad, t, {index});
  load.shared = partials;
  const ir::ValueId loaded = load.result;
  const ir::ValueId in_range = b.make(OpKind::Lt, DType::Bool, {lane, simdgroups}).result;
  const ir::ValueId identity_value = b.constant(t, identity(reduce.kind, t));
  const ir::ValueId value = b.make(OpKind::Select, t, {in_range, loaded, identity_value}).result;
  reduce.kind = simd_kind;
  reduce.args = {value};
  b.insert(std::move(reduce));
  // No simdgroup may store the next reduction's partials while another still reads these.
  b.make(OpKind::Barrier, DType::U32);
  return out;
}

}  // namespace

void lower_reductions(ir::Kernel& kernel, const TargetProfile& /*target*/) {
  ir::rewrite(kernel, ir::Order::InnerFirst, [&](ir::Op& op, ir::RewriteSite&) {
    if (ir::op_class(op.kind) != ir::OpClass::Group) return ir::Rewrite::keep();
    return ir::Rewrite::replace_with_ops(lower(kernel, std::move(op)));
  });
}

}  // namespace iron::codegen
