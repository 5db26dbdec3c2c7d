/// CUDA helper functions: warp reductions and scans, guarded warp reads, the approximate ops'
/// instructions, float atomic max/min.
#include "cuda_prelude.hpp"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "../c_like/prelude.hpp"
#include "cuda_fragments.hpp"
#include "cuda_tensor_copies.hpp"
#include "cuda_warpgroup.hpp"
#include "cuda_wmma_helpers.hpp"

namespace iron::codegen::cuda {
namespace {

using c_like::Helper;

/// Every helper, in the order they are emitted (callees first).
const std::vector<Helper>& helpers() {
  static const std::vector<Helper> all = {
      {"iron_linear_thread",
       {},
       R"(// The thread's index in its block, x fastest; a warp is 32 consecutive ones.
__device__ __forceinline__ unsigned int iron_linear_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
)"},
      {"iron_simd_sum",
       {},
       R"(// Sum over the warp (butterfly): every lane gets the same result.
template <class T>
__device__ __forceinline__ T iron_simd_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
)"},
      {"iron_simd_max",
       {},
       R"(// Maximum over the warp (butterfly): every lane gets the result.
template <class T>
__device__ __forceinline__ T iron_simd_max(T v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v = max(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}
)"},
      {"iron_simd_min",
       {},
       R"(// Minimum over the warp (butterfly): every lane gets the result.
template <class T>
__device__ __forceinline__ T iron_simd_min(T v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v = min(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}
)"},
      {"iron_simd_prefix_sum",
       {"iron_linear_thread"},
       R"(// Inclusive prefix sum over the lanes of the warp.
template <class T>
__device__ __forceinline__ T iron_simd_prefix_sum(T v) {
  const unsigned int lane = iron_linear_thread() & 31u;
  for (unsigned int offset = 1; offset < 32u; offset *= 2) {
    const T below = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= offset) v += below;
  }
  return v;
}
)"},
      {"iron_simd_prefix_exclusive_sum",
       {"iron_linear_thread", "iron_simd_prefix_sum"},
       R"(// Exclusive prefix sum over the lanes of the warp: lane 0 gets 0.
template <class T>
__device__ __forceinline__ T iron_simd_prefix_exclusive_sum(T v) {
  const T below = __shfl_up_sync(0xffffffffu, iron_simd_prefix_sum(v), 1);
  return (iron_linear_thread() & 31u) == 0u ? T(0) : below;
}
)"},
      {"iron_simd_read",
       {},
       R"(// v as lane `source` holds it; a lane whose source is not in 0..31 keeps its own v.
template <class T>
__device__ __forceinline__ T iron_simd_read(T v, unsigned int source) {
  const T read = __shfl_sync(0xffffffffu, v, static_cast<int>(source & 31u));
  return source < 32u ? read : v;
}
)"},
      {"iron_exp2_approx",
       {},
       R"(// 2^x by ex2.approx.ftz.f32 (PTX ISA, ex2): within 2 ulp of the correctly rounded result,
// subnormal operands and results flushed to zero. One MUFU.EX2, whatever the compile flags.
__device__ __forceinline__ float iron_exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
)"},
      {"iron_recip_approx",
       {},
       R"(// 1/x by rcp.approx.ftz.f32 (PTX ISA, rcp): within 1 ulp, subnormal operands and results
// flushed to zero. One MUFU.RCP, whatever the compile flags.
__device__ __forceinline__ float iron_recip_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
)"},
      {"iron_atomic_max_f32",
       {},
       R"(// Atomic float maximum (fmaxf semantics) by compare-and-swap; returns the previous value.
__device__ __forceinline__ float iron_atomic_max_f32(float* address, float value) {
  unsigned int* bits = reinterpret_cast<unsigned int*>(address);
  unsigned int old = *bits;
  for (;;) {
    const unsigned int next = __float_as_uint(fmaxf(__uint_as_float(old), value));
    if (next == old) return __uint_as_float(old);
    const unsigned int seen = atomicCAS(bits, old, next);
    if (seen == old) return __uint_as_float(old);
    old = seen;
  }
}
)"},
      {"iron_atomic_min_f32",
       {},
       R"(// Atomic float minimum (fminf semantics) by compare-and-swap; returns the previous value.
__device__ __forceinline__ float iron_atomic_min_f32(float* address, float value) {
  unsigned int* bits = reinterpret_cast<unsigned int*>(address);
  unsigned int old = *bits;
  for (;;) {
    const unsigned int next = __float_as_uint(fminf(__uint_as_float(old), value));
    if (next == old) return __uint_as_float(old);
    const unsigned int seen = atomicCAS(bits, old, next);
    if (seen == old) return __uint_as_float(old);
    old = seen;
  }
}
)"},
  };
  return all;
}

}  // namespace

std::string cuda_prelude(const c_like::Needs& needs, const CudaDialect& dialect) {
  std::string text;
  if (!needs.vectors.empty()) {
    text += "// Vector types: each moves in one load or store.\n";
    for (const auto& [t, lanes] : needs.vectors) {
      text += fmt::format("struct alignas({}) {} {{\n  {} v[{}];\n}};\n",
                          dtype_size(t) * static_cast<std::size_t>(lanes),
                          CudaDialect::vector_name(t, lanes), dialect.type(t), lanes);
    }
  }
  std::vector<c_like::Helper> all = helpers();
  all.insert(all.end(), fragment_helpers().begin(), fragment_helpers().end());
  all.insert(all.end(), wmma_helpers().begin(), wmma_helpers().end());
  all.insert(all.end(), warpgroup_helpers().begin(), warpgroup_helpers().end());
  all.insert(all.end(), tensor_copy_helpers().begin(), tensor_copy_helpers().end());
  c_like::append_helpers(text, all, needs.helpers, "CUDA");
  return text;
}

}  // namespace iron::codegen::cuda
