/// CUDA C++ emission: header comment with the launch ABI, includes, prelude, signature, body.
#include <fmt/format.h>

#include "../c_like/body_writer.hpp"
#include "../c_like/fp8_types.hpp"
#include "../c_like/kernel_abi.hpp"
#include "cuda_dialect.hpp"
#include "cuda_halves.hpp"
#include "cuda_prelude.hpp"
#include "cuda_wmma.hpp"
#include "iron/codegen/emit.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen {
namespace {

/// The 8-bit floats' types, as CUDA spells them.
constexpr c_like::Fp8Spelling kCudaFp8{"__device__ __forceinline__",
                                       "__device__ ",
                                       "__float_as_uint",
                                       "__uint_as_float",
                                       "unsigned int",
                                       "unsigned char",
                                       "rintf",
                                       true};

/// The toolkit headers (wmma only), or the prelude's own f16/bf16 types; the 8-bit floats' own.
std::string includes(const ir::Kernel& kernel, const cuda::CudaDialect& dialect, bool wmma) {
  const bool f16 = c_like::kernel_uses(kernel, DType::F16);
  const bool bf16 = c_like::kernel_uses(kernel, DType::BF16);
  const std::string fp8 =
      c_like::fp8_types_prelude(c_like::kernel_uses(kernel, DType::F8E4M3),
                                c_like::kernel_uses(kernel, DType::F8E5M2), kCudaFp8);
  if (!dialect.header_halves()) return cuda::half_types_prelude(f16, bf16) + fp8;
  std::string text = fp8;
  if (f16) text += "#include <cuda_fp16.h>\n";
  if (bf16) text += "#include <cuda_bf16.h>\n";
  if (wmma) text += "#include <mma.h>\n";
  return text;
}

/// The strategy `kernel`'s fragments are lowered with: the profile's, except that a kernel wmma
/// cannot lower goes the software way.
MmaStrategy kernel_strategy(const ir::Kernel& kernel, MmaStrategy profile) {
  if (profile != MmaStrategy::Wmma || cuda::wmma_fits(kernel)) return profile;
  return MmaStrategy::Software;
}

}  // namespace

std::string emit_cuda(const ir::Kernel& lowered, const TargetProfile& target) {
  IRON_INTERNAL_ASSERT(target.kind == TargetKind::Cuda, "emit_cuda needs a CUDA target profile");
  const MmaStrategy mma = kernel_strategy(lowered, target.mma);
  const cuda::CudaDialect dialect(mma, mma == MmaStrategy::Wmma && cuda::wmma_row_major_b(lowered));
  c_like::check_names(lowered, "CUDA C++", c_like::reserved_names(dialect));
  c_like::Needs needs;
  if (mma == MmaStrategy::Wmma) cuda::wmma_kernel_needs(lowered, needs);
  std::string body = c_like::write_body(lowered, dialect, needs);
  body = cuda::wmma_prologue(lowered, needs) + body;

  std::string text = c_like::header_comment(lowered, target.name + " (CUDA C++ for NVRTC)",
                                            c_like::abi_comment(lowered, dialect));
  for (const std::string& part :
       {includes(lowered, dialect, cuda::uses_wmma(needs)), cuda::cuda_prelude(needs, dialect)}) {
    if (!part.empty()) text += "\n" + part;
  }
  std::string bounds = std::to_string(c_like::group_size_bound(lowered));
  if (lowered.dispatch.occupancy != 0) bounds += fmt::format(", {}", lowered.dispatch.occupancy);
  text += fmt::format("\nextern \"C\" __global__ void __launch_bounds__({}) {}(", bounds,
                      kernel_symbol(lowered));
  return text + c_like::parameter_list(c_like::param_declarations(lowered, dialect)) + body + "}\n";
}

}  // namespace iron::codegen
