/// The emitters: lowered Iron IR to CUDA C++ (for NVRTC) or to Metal Shading Language. Each is
/// its target's `emit` in the target registry (iron/codegen/targets.hpp), which compile_kernel
/// calls; they are declared here for the tests that call them directly.
#pragma once

#include <string>

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen {

// Both emitters take the IR after the pass pipeline (reductions lowered, shared memory laid
// out, f16/bf16 legalized for the target) and write one self-contained kernel named
// kernel_symbol(kernel).
//
// ## Launch ABI (what the runtime passes)
//
// One argument per Iron parameter, in parameter order; the grid is counted in threadgroups
// (CUDA blocks) of `group_size` threads. Shared memory up to 48 KB is static; a kernel past it
// (uses_dynamic_shared) declares `extern __shared__` memory, and its launch passes the kernel's
// shared_bytes as the dynamic size after opting the function in.
//
// CUDA, `extern "C" __global__ void SYMBOL(…)`:
// - input tensor: `const T* __restrict__ name`; output tensor: `T* __restrict__ name`
//   (f32 float, f16 __half, bf16 __nv_bfloat16, i32 int, u32 unsigned int, u8 unsigned char,
//   i8 signed char, u16 unsigned short, bool bool: one byte, 0 or 1); 16-byte aligned when the
//   kernel makes vector accesses (cudaMalloc's alignment is enough);
// - constexpr: by value in a 4-byte carrier: f32, f16 and bf16 as float (rounded to the
//   constexpr's type in the kernel), i32 and i8 as int, u32, u8 and u16 as unsigned int, bool as
//   unsigned int 0 or 1 (nonzero is true). Narrower integers are wrapped to their width.
// - `__launch_bounds__(B)`: B is the dispatch contract's `exactly` or `at_most` literal bound
//   (the smaller when both), else 1024; `__launch_bounds__(B, N)` when the contract asks for an
//   occupancy of N groups a multiprocessor.
//
// Metal, `kernel void SYMBOL(…)`: parameter i is bound at `[[buffer(i)]]`, tensors and
// constexprs alike:
// - input tensor: `device const T* name`; output tensor: `device T* name` (f16 half, bf16 bfloat
//   (Metal 3.1+), i8 char, u8 uchar, u16 ushort, the others as in CUDA);
// - constexpr: `constant C& name` with the same 4-byte carrier C as CUDA (float, int or uint;
//   bool as uint 0 or 1), e.g. set with setBytes(&value, 4, i).
// - Built-in inputs follow the buffers, only those the kernel reads.
//
// ## Semantics the emitted code keeps (those of the simulator)
// - f16/bf16 math functions, min/max, rem and fma are computed in f32 and rounded once; simd
//   sums and prefix sums of f16/bf16 accumulate in f32 and round once;
// - float to integer casts truncate toward zero, saturate to the target's range, NaN gives 0;
//   integer to f16/bf16 rounds to f32 first, as the simulator does;
// - shift amounts are taken modulo 32; narrow integers (u8, i8, u16) wrap;
// - float sums across lanes (simd sums and scans) may associate differently from the
//   simulator's sequential sums, so they agree within rounding, exactly for exact sums;
// - simd shuffles whose source lane is outside 0..31 return the lane's own value; lane
//   operands are taken modulo 2^32 (exact for any operand in [-2^31, 2^32 - 32));
// - simdgroups are the 32 consecutive linear thread ids (x fastest), so the group size must be
//   a multiple of 32 for simd ops to have all lanes present (as the dispatch contract requires
//   of kernels that use them).

/// "<kernel name>_<dtype>", e.g. "iron_softmax_bf16": the function name in every language.
std::string kernel_symbol(const ir::Kernel& kernel);

/// CUDA C++ for NVRTC (sm_80 and newer). `lowered` must have been through the pipeline for
/// `target`, a CUDA profile. Throws Error naming the kernel for a name the language reserves.
std::string emit_cuda(const ir::Kernel& lowered, const TargetProfile& target);

/// Metal Shading Language (3.0 and newer). `lowered` must have been through the pipeline for
/// `target`, a Metal profile. Throws Error naming the kernel for a name the language reserves.
std::string emit_msl(const ir::Kernel& lowered, const TargetProfile& target);

}  // namespace iron::codegen
