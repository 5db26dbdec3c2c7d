/// MSL emission: header comment with the buffer ABI, prelude, signature, body.
#include <fmt/format.h>

#include "../c_like/body_writer.hpp"
#include "../c_like/expressions.hpp"
#include "../c_like/kernel_abi.hpp"
#include "iron/codegen/emit.hpp"
#include "iron/core/error.hpp"
#include "msl_dialect.hpp"
#include "msl_prelude.hpp"

namespace iron::codegen {
namespace {

/// Names a parameter must not take: Metal's keywords, address spaces and scalar types, and the
/// functions the emitted code calls.
constexpr std::string_view kReserved =
    "kernel vertex fragment device constant threadgroup thread half bfloat uint uchar ushort "
    "metal as_type sqrt rsqrt exp exp2 log log2 sin cos tanh fabs floor ceil fmod fmin fmax pow "
    "atan2 fma clamp simd_sum simd_max simd_min simd_prefix_inclusive_sum "
    "simd_prefix_exclusive_sum simd_shuffle simd_shuffle_xor simd_shuffle_up simd_shuffle_down "
    "simd_broadcast threadgroup_barrier mem_flags memory_order_relaxed atomic_int atomic_uint "
    "atomic_float";

/// The built-in kernel inputs, in signature order: name and declaration.
constexpr std::pair<std::string_view, std::string_view> kInputs[] = {
    {"iron_tid", "uint3 iron_tid [[thread_position_in_threadgroup]]"},
    {"iron_gid", "uint3 iron_gid [[threadgroup_position_in_grid]]"},
    {"iron_tpg", "uint3 iron_tpg [[threads_per_threadgroup]]"},
    {"iron_ngroups", "uint3 iron_ngroups [[threadgroups_per_grid]]"},
    {"iron_lane", "uint iron_lane [[thread_index_in_simdgroup]]"},
    {"iron_sg", "uint iron_sg [[simdgroup_index_in_threadgroup]]"},
    {"iron_nsg", "uint iron_nsg [[simdgroups_per_threadgroup]]"},
};

std::string param_type(const ir::Param& p, const msl::MslDialect& dialect) {
  switch (p.kind) {
    case ir::ParamKind::Input:
      return "device const " + dialect.type(p.dtype) + "*";
    case ir::ParamKind::Output:
    case ir::ParamKind::InOut:
      return "device " + dialect.type(p.dtype) + "*";
    default:
      return "constant " + dialect.type(c_like::constexpr_carrier(p.dtype)) + "&";
  }
}

std::vector<std::string> abi_comment(const ir::Kernel& kernel, const msl::MslDialect& dialect) {
  const std::string shared =
      kernel.shared_bytes > 0 ? fmt::format("{} bytes of threadgroup memory", kernel.shared_bytes)
                              : "no threadgroup memory";
  std::vector<std::string> lines = {
      fmt::format("Dispatch: threadgroups of at most {} threads; {}.",
                  c_like::group_size_bound(kernel), shared),
      "Buffers, in parameter order (see include/iron/codegen/emit.hpp):"};
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    lines.push_back(fmt::format("  [[buffer({})]] {}: {}, as {}", i, p.name, c_like::param_role(p),
                                param_type(p, dialect)));
  }
  return lines;
}

}  // namespace

std::string emit_msl(const ir::Kernel& lowered, const TargetProfile& target) {
  IRON_INTERNAL_ASSERT(target.kind == TargetKind::Msl, "emit_msl needs a Metal target profile");
  IRON_INTERNAL_ASSERT(target.has_bf16_type || !c_like::kernel_uses(lowered, DType::BF16),
                       "bf16 reached the emitter for a target without bfloat: run legalize");
  c_like::check_names(lowered, "Metal Shading Language", kReserved);
  const msl::MslDialect dialect;
  c_like::Needs needs;
  const std::string body = c_like::write_body(lowered, dialect, needs);

  const std::string language = fmt::format("{} (Metal Shading Language {}.{})", target.name,
                                           target.metal_version / 10, target.metal_version % 10);
  std::string text = c_like::header_comment(lowered, language, abi_comment(lowered, dialect));
  text += "\n#include <metal_stdlib>\nusing namespace metal;\n";
  const std::string prelude = msl::msl_prelude(needs, dialect);
  if (!prelude.empty()) text += "\n" + prelude;

  std::vector<std::string> params;
  for (std::size_t i = 0; i < lowered.params.size(); ++i) {
    const ir::Param& p = lowered.params[i];
    params.push_back(fmt::format("{} {} [[buffer({})]]", param_type(p, dialect), p.name, i));
  }
  for (const auto& [name, declaration] : kInputs) {
    if (needs.inputs.count(std::string(name))) params.emplace_back(declaration);
  }
  text += "\nkernel void " + kernel_symbol(lowered) + "(";
  return text + c_like::parameter_list(params) + body + "}\n";
}

}  // namespace iron::codegen
