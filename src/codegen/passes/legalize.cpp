/// Target legalization: f16/bf16 arithmetic the target lacks is widened to f32; bf16 is refused.
#include "iron/codegen/passes/legalize.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "iron/codegen/targets.hpp"
#include "iron/core/builder.hpp"
#include "iron/core/error.hpp"
#include "iron/core/rewriter.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;

/// Ops that compute in their operands' element type, rather than move or convert values.
bool computes(const ir::Op& op) {
  switch (ir::op_class(op.kind)) {
    case ir::OpClass::Unary:
    case ir::OpClass::Binary:
    case ir::OpClass::Compare:
    case ir::OpClass::Group:
      return true;
    case ir::OpClass::Simd:  // the reductions and scans, not the moves across lanes
      return ir::op_info(op.kind).types == ir::TypeRule::CollectiveNumber;
    case ir::OpClass::Leaf:
    case ir::OpClass::Atomic:
    case ir::OpClass::Other:
      return op.kind == OpKind::Fma;
  }
  return false;
}

/// The first place the kernel uses bf16, described for the error message; nullopt if none.
std::optional<std::string> first_bf16_use(const ir::Kernel& kernel) {
  for (const ir::Param& p : kernel.params) {
    if (p.dtype == DType::BF16) return fmt::format("parameter '{}'", p.name);
  }
  for (const ir::SharedAlloc& s : kernel.shared) {
    if (s.dtype == DType::BF16) return fmt::format("shared allocation @{}", s.name);
  }
  std::optional<std::string> use;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (!use && op.type == DType::BF16) {
      use = fmt::format("{} at {}", ir::op_name(op.kind), format_loc(op.loc));
    }
  });
  return use;
}

void refuse_missing_bf16(const ir::Kernel& kernel, const TargetProfile& target) {
  if (target.has_bf16_type) return;
  const std::optional<std::string> use = first_bf16_use(kernel);
  if (!use) return;
  const std::string_view first = target_of(target).first_bf16_profile;
  const std::string advice =
      first.empty() ? "use f16" : fmt::format("build it for {} or later, or use f16", first);
  throw Error(
      fmt::format("kernel {}: target {} has no bfloat type, but the kernel uses bf16 ({}); {}",
                  kernel.name, target.name, *use, advice));
}

class Widener {
 public:
  Widener(const ir::Kernel& kernel, const TargetProfile& target)
      : target_(target), types_(kernel.num_values) {
    ir::walk(kernel.body, [&](const ir::Op& op) {
      if (op.result != ir::kNoValue) types_[op.result] = op.type;
    });
  }

  /// Widens `op` when it computes in a type the target emulates.
  ir::Rewrite widen_if_emulated(ir::Op& op, const ir::RewriteSite& site) const {
    // Every operand of a computing op has one element type: the first one's.
    if (!computes(op) || !emulated(types_[op.args.front()])) return ir::Rewrite::keep();
    return widen(op, site);
  }

 private:
  bool emulated(DType t) const {
    return (t == DType::F16 && !target_.native_f16_arithmetic) ||
           (t == DType::BF16 && !target_.native_bf16_arithmetic);
  }

  /// Casts the operands up and, unless `op` is a compare, does it in f32 just before and turns
  /// `op` into the cast back, so that its value keeps its id.
  static ir::Rewrite widen(ir::Op& op, const ir::RewriteSite& site) {
    ir::Builder before = site.before();
    for (ir::ValueId& a : op.args) a = before.make(OpKind::Cast, DType::F32, {a}).result;
    if (ir::op_class(op.kind) == ir::OpClass::Compare) return ir::Rewrite::keep();
    const ir::ValueId wide = before.make(op.kind, DType::F32, op.args).result;
    op.kind = OpKind::Cast;
    op.args = {wide};
    return ir::Rewrite::keep();
  }

  const TargetProfile& target_;
  std::vector<DType> types_;  ///< the type of every value the kernel had on entry
};

}  // namespace

void legalize(ir::Kernel& kernel, const TargetProfile& target) {
  refuse_missing_bf16(kernel, target);
  if (target.native_f16_arithmetic && target.native_bf16_arithmetic) return;
  const Widener widener(kernel, target);
  ir::rewrite(kernel, ir::Order::InnerFirst, [&](ir::Op& op, ir::RewriteSite& site) {
    return widener.widen_if_emulated(op, site);
  });
}

}  // namespace iron::codegen
