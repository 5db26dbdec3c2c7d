/// CUDA C++ emission: header comment with the launch ABI, includes, prelude, signature, body.
#include <fmt/format.h>

#include "../c_like/body_writer.hpp"
#include "../c_like/expressions.hpp"
#include "../c_like/kernel_abi.hpp"
#include "cuda_dialect.hpp"
#include "cuda_prelude.hpp"
#include "iron/codegen/emit.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen {
namespace {

/// Names a parameter must not take: CUDA's built-in variables and types, and the functions the
/// emitted code calls.
constexpr std::string_view kReserved =
    "threadIdx blockIdx blockDim gridDim warpSize half sqrtf rsqrtf expf exp2f logf log2f sinf "
    "cosf tanhf erff fabsf floorf ceilf fmodf fminf fmaxf powf atan2f fmaf atomicAdd atomicMax "
    "atomicMin atomicAnd atomicOr atomicXor atomicExch atomicCAS";

std::string param_type(const ir::Param& p, const cuda::CudaDialect& dialect) {
  switch (p.kind) {
    case ir::ParamKind::Input:
      return "const " + dialect.type(p.dtype) + "* __restrict__";
    case ir::ParamKind::Output:
    case ir::ParamKind::InOut:
      return dialect.type(p.dtype) + "* __restrict__";
    default:
      return dialect.type(c_like::constexpr_carrier(p.dtype));
  }
}

std::vector<std::string> abi_comment(const ir::Kernel& kernel, const cuda::CudaDialect& dialect) {
  const std::string shared =
      kernel.shared_bytes > 0 ? fmt::format("{} bytes of static shared memory", kernel.shared_bytes)
                              : "no shared memory";
  std::vector<std::string> lines = {
      fmt::format("Launch: one block per threadgroup, at most {} threads each; {}.",
                  c_like::group_size_bound(kernel), shared),
      "Arguments, in parameter order (see include/iron/codegen/emit.hpp):"};
  for (const ir::Param& p : kernel.params) {
    lines.push_back(
        fmt::format("  {}: {}, as {}", p.name, c_like::param_role(p), param_type(p, dialect)));
  }
  return lines;
}

std::string includes(const ir::Kernel& kernel) {
  std::string text;
  if (c_like::kernel_uses(kernel, DType::F16)) text += "#include <cuda_fp16.h>\n";
  if (c_like::kernel_uses(kernel, DType::BF16)) text += "#include <cuda_bf16.h>\n";
  return text;
}

}  // namespace

std::string emit_cuda(const ir::Kernel& lowered, const TargetProfile& target) {
  IRON_INTERNAL_ASSERT(target.kind == TargetKind::Cuda, "emit_cuda needs a CUDA target profile");
  c_like::check_names(lowered, "CUDA C++", kReserved);
  const cuda::CudaDialect dialect;
  c_like::Needs needs;
  const std::string body = c_like::write_body(lowered, dialect, needs);

  std::string text = c_like::header_comment(lowered, target.name + " (CUDA C++ for NVRTC)",
                                            abi_comment(lowered, dialect));
  for (const std::string& part : {includes(lowered), cuda::cuda_prelude(needs, dialect)}) {
    if (!part.empty()) text += "\n" + part;
  }
  std::vector<std::string> params;
  for (const ir::Param& p : lowered.params) params.push_back(param_type(p, dialect) + " " + p.name);
  text += fmt::format("\nextern \"C\" __global__ void __launch_bounds__({}) {}(",
                      c_like::group_size_bound(lowered), kernel_symbol(lowered));
  return text + c_like::parameter_list(params) + body + "}\n";
}

}  // namespace iron::codegen
