/// Target legalization: f16/bf16 arithmetic the target lacks is widened to f32; bf16 is refused.
#include "iron/codegen/passes/legalize.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "iron/codegen/ir_utils.hpp"
#include "iron/core/error.hpp"

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
    case ir::OpClass::Simd:
      return op.kind == OpKind::SimdSum || op.kind == OpKind::SimdMax ||
             op.kind == OpKind::SimdMin || op.kind == OpKind::SimdPrefixSum ||
             op.kind == OpKind::SimdPrefixExclusiveSum;
    default:
      return op.kind == OpKind::Fma;
  }
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
  const std::string_view advice =
      target.kind == TargetKind::Msl ? "build it for metal3.1 or later, or use f16" : "use f16";
  throw Error(
      fmt::format("kernel {}: target {} has no bfloat type, but the kernel uses bf16 ({}); {}",
                  kernel.name, target.name, *use, advice));
}

class Widener {
 public:
  Widener(ir::Kernel& kernel, const TargetProfile& target)
      : kernel_(kernel), target_(target), types_(kernel.num_values) {
    ir::walk(kernel.body, [&](const ir::Op& op) {
      if (op.result != ir::kNoValue) types_[op.result] = op.type;
    });
  }

  void block(ir::Block& b) {
    std::vector<ir::Op> out;
    out.reserve(b.ops.size());
    for (ir::Op& op : b.ops) {
      for (ir::Block& nested : op.blocks) block(nested);
      if (computes(op) && emulated(types_[op.args[0]])) {
        widen(std::move(op), out);
      } else {
        out.push_back(std::move(op));
      }
    }
    b.ops = std::move(out);
  }

 private:
  bool emulated(DType t) const {
    return (t == DType::F16 && !target_.native_f16_arithmetic) ||
           (t == DType::BF16 && !target_.native_bf16_arithmetic);
  }

  /// Casts the operands up, does `op` in f32 and, unless it is a compare, casts the result back
  /// into the op's original value.
  void widen(ir::Op op, std::vector<ir::Op>& out) {
    const DType narrow = types_[op.args[0]];
    for (ir::ValueId& a : op.args) {
      ir::Op up = make_op(kernel_, OpKind::Cast, DType::F32, {a});
      up.loc = op.loc;
      a = up.result;
      out.push_back(std::move(up));
    }
    if (ir::op_class(op.kind) == ir::OpClass::Compare) {
      out.push_back(std::move(op));
      return;
    }
    const ir::ValueId result = op.result;
    const ir::SourceLoc loc = op.loc;
    op.type = DType::F32;
    op.result = new_value(kernel_);
    ir::Op down;
    down.kind = OpKind::Cast;
    down.type = narrow;
    down.args = {op.result};
    down.result = result;
    down.loc = loc;
    out.push_back(std::move(op));
    out.push_back(std::move(down));
  }

  ir::Kernel& kernel_;
  const TargetProfile& target_;
  std::vector<DType> types_;  ///< the type of every value the kernel had on entry
};

}  // namespace

void legalize(ir::Kernel& kernel, const TargetProfile& target) {
  refuse_missing_bf16(kernel, target);
  if (target.native_f16_arithmetic && target.native_bf16_arithmetic) return;
  Widener(kernel, target).block(kernel.body);
}

}  // namespace iron::codegen
