/// MSL emission: header comment with the buffer ABI, prelude, signature, body.
#include <fmt/format.h>

#include "../c_like/body_writer.hpp"
#include "../c_like/fp8_types.hpp"
#include "../c_like/kernel_abi.hpp"
#include "iron/codegen/emit.hpp"
#include "iron/core/error.hpp"
#include "msl_dialect.hpp"
#include "msl_prelude.hpp"

namespace iron::codegen {
namespace {

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

/// The 8-bit floats' types, as Metal spells them.
constexpr c_like::Fp8Spelling kMslFp8{"inline", "",      "as_type<uint>", "as_type<float>",
                                      "uint",   "uchar", "rint"};

}  // namespace

std::string emit_msl(const ir::Kernel& lowered, const TargetProfile& target) {
  IRON_INTERNAL_ASSERT(target.kind == TargetKind::Msl, "emit_msl needs a Metal target profile");
  IRON_INTERNAL_ASSERT(target.has_bf16_type || !c_like::kernel_uses(lowered, DType::BF16),
                       "bf16 reached the emitter for a target without bfloat: run legalize");
  const msl::MslDialect dialect;
  c_like::check_names(lowered, "Metal Shading Language", c_like::reserved_names(dialect));
  c_like::Needs needs;
  const std::string body = c_like::write_body(lowered, dialect, needs);

  const std::string language = fmt::format("{} (Metal Shading Language {}.{})", target.name,
                                           target.metal_version / 10, target.metal_version % 10);
  std::string text =
      c_like::header_comment(lowered, language, c_like::abi_comment(lowered, dialect));
  text += "\n#include <metal_stdlib>\nusing namespace metal;\n";
  const std::string fp8 =
      c_like::fp8_types_prelude(c_like::kernel_uses(lowered, DType::F8E4M3),
                                c_like::kernel_uses(lowered, DType::F8E5M2), kMslFp8);
  if (!fp8.empty()) text += "\n" + fp8;
  const std::string prelude = msl::msl_prelude(needs, dialect);
  if (!prelude.empty()) text += "\n" + prelude;

  std::vector<std::string> params = c_like::param_declarations(lowered, dialect);
  for (const auto& [name, declaration] : kInputs) {
    if (needs.inputs.contains(std::string(name))) params.emplace_back(declaration);
  }
  text += "\nkernel void " + kernel_symbol(lowered) + "(";
  return text + c_like::parameter_list(params) + body + "}\n";
}

}  // namespace iron::codegen
