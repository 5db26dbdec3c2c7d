/// CUDA C++ spellings: fp16/bf16 conversions, saturating casts, warp shuffles, atomics, vectors.
#include "cuda_dialect.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../c_like/kernel_abi.hpp"
#include "iron/codegen/target.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen::cuda {
namespace {

using c_like::Access;
using c_like::axis_name;
using c_like::Needs;
using ir::OpKind;

constexpr const char* kFullMask = "0xffffffffu";

/// The warp-level helper of each simd reduction.
constexpr c_like::Spelling kSimdReductions[] = {
    {OpKind::SimdSum, "iron_simd_sum"},
    {OpKind::SimdMax, "iron_simd_max"},
    {OpKind::SimdMin, "iron_simd_min"},
    {OpKind::SimdPrefixSum, "iron_simd_prefix_sum"},
    {OpKind::SimdPrefixExclusiveSum, "iron_simd_prefix_exclusive_sum"},
};

/// The atomic function of each atomic op on i32 and u32, and of add and exchange on f32.
constexpr c_like::Spelling kAtomics[] = {
    {OpKind::AtomicAdd, "atomicAdd"},       {OpKind::AtomicMax, "atomicMax"},
    {OpKind::AtomicMin, "atomicMin"},       {OpKind::AtomicAnd, "atomicAnd"},
    {OpKind::AtomicOr, "atomicOr"},         {OpKind::AtomicXor, "atomicXor"},
    {OpKind::AtomicExchange, "atomicExch"},
};

/// The prelude helper of each approximate op: one PTX instruction each.
constexpr c_like::Spelling kApproximations[] = {
    {OpKind::Exp2Approx, "iron_exp2_approx"},
    {OpKind::RecipApprox, "iron_recip_approx"},
};

/// The prelude helper of f32 atomic max and min, which CUDA lacks.
constexpr c_like::Spelling kFloatAtomics[] = {
    {OpKind::AtomicMax, "iron_atomic_max_f32"},
    {OpKind::AtomicMin, "iron_atomic_min_f32"},
};

std::string static_cast_to(const std::string& type, const std::string& expr) {
  return "static_cast<" + type + ">(" + expr + ")";
}

}  // namespace

std::string CudaDialect::half_type(DType t) const {
  if (header_halves()) return t == DType::F16 ? "__half" : "__nv_bfloat16";
  return t == DType::F16 ? "iron_f16" : "iron_bf16";
}

std::string CudaDialect::to_f32(const std::string& expr, DType from) const {
  if (!is_float(from) || from == DType::F32) return expr;
  if (!header_halves() || is_f8(from)) return "iron_to_f32(" + expr + ")";
  return (from == DType::F16 ? "__half2float(" : "__bfloat162float(") + expr + ")";
}

std::string CudaDialect::from_f32(const std::string& f, DType to) const {
  if (is_f8(to)) return "iron_f32_to_" + std::string(dtype_name(to)) + "(" + f + ")";
  if (to == DType::F16)
    return (header_halves() ? "__float2half_rn(" : "iron_f32_to_f16(") + f + ")";
  if (to == DType::BF16) {
    return (header_halves() ? "__float2bfloat16_rn(" : "iron_f32_to_bf16(") + f + ")";
  }
  return f;
}

std::string CudaDialect::float_function(OpKind k) const {
  if (ir::op_info(k).has(ir::kApproximate))
    return std::string(c_like::spelling_of(k, kApproximations));
  return Dialect::float_function(k);
}

std::string_view CudaDialect::reserved_words() const {
  return "threadIdx blockIdx blockDim gridDim warpSize half atomicAdd atomicMax atomicMin "
         "atomicAnd atomicOr atomicXor atomicExch atomicCAS";
}

std::string CudaDialect::float_bits(std::uint32_t bits) const {
  return fmt::format("__uint_as_float(0x{:08x}u)", bits);
}

std::string CudaDialect::convert_number(const std::string& expr, DType from, DType to,
                                        Needs&) const {
  if (is_float(to)) {
    return from_f32(is_float(from) ? to_f32(expr, from) : static_cast_to("float", expr), to);
  }
  if (!is_float(from)) return static_cast_to(type(to), expr);
  // cvt.rzi saturates and turns NaN into 0; narrower types clamp the int result.
  const std::string x = to_f32(expr, from);
  if (to == DType::I32) return "__float2int_rz(" + x + ")";
  if (to == DType::U32) return "__float2uint_rz(" + x + ")";
  const IntegerRange range = integer_range(to);
  return static_cast_to(
      type(to), fmt::format("min(max(__float2int_rz({}), {}), {})", x, static_cast<int>(range.lo),
                            static_cast<int>(range.hi)));
}

std::string CudaDialect::bitcast(const std::string& expr, DType from, DType to) const {
  if (from == DType::F32) {
    return (to == DType::I32 ? "__float_as_int(" : "__float_as_uint(") + expr + ")";
  }
  if (to == DType::F32) {
    return (from == DType::I32 ? "__int_as_float(" : "__uint_as_float(") + expr + ")";
  }
  if (dtype_size(from) != 2) return static_cast_to(type(to), expr);  // i8 <-> u8, i32 <-> u32
  std::string bits = expr;
  if (!header_halves()) {
    if (from == DType::F16 || from == DType::BF16) bits = "(" + expr + ").bits";
    if (to == DType::F16 || to == DType::BF16) return half_type(to) + "_from_bits(" + bits + ")";
    return bits;
  }
  if (from == DType::F16) bits = "__half_as_ushort(" + expr + ")";
  if (from == DType::BF16) bits = "__bfloat16_as_ushort(" + expr + ")";
  if (to == DType::F16) return "__ushort_as_half(" + bits + ")";
  if (to == DType::BF16) return "__ushort_as_bfloat16(" + bits + ")";
  return bits;
}

std::string CudaDialect::builtin(ir::Builtin b, int axis, Needs& needs) const {
  const std::string a = axis_name(axis);
  switch (b) {
    case ir::Builtin::ThreadId:
      return "threadIdx." + a;
    case ir::Builtin::GroupId:
      return "blockIdx." + a;
    case ir::Builtin::GroupSize:
      return "blockDim." + a;
    case ir::Builtin::GridGroups:
      return "gridDim." + a;
    case ir::Builtin::GlobalId:
      return "blockIdx." + a + " * blockDim." + a + " + threadIdx." + a;
    case ir::Builtin::Lane:
      needs.helpers.insert("iron_linear_thread");
      return "iron_linear_thread() & 31u";
    case ir::Builtin::Simdgroup:
      needs.helpers.insert("iron_linear_thread");
      return "iron_linear_thread() >> 5";
    case ir::Builtin::SimdgroupCount:
      return "(blockDim.x * blockDim.y * blockDim.z + 31u) >> 5";
  }
  return "";
}

std::string CudaDialect::simd_reduce(OpKind k, DType, const std::string& v, Needs& needs) const {
  const std::string helper(c_like::spelling_of(k, kSimdReductions));
  needs.helpers.insert(helper);
  return helper + "(" + v + ")";
}

std::string CudaDialect::simd_move(OpKind k, DType, const std::string& v, int operand,
                                   Needs&) const {
  const char* fn = k == OpKind::SimdShuffleXor    ? "__shfl_xor_sync"
                   : k == OpKind::SimdShuffleUp   ? "__shfl_up_sync"
                   : k == OpKind::SimdShuffleDown ? "__shfl_down_sync"
                                                  : "__shfl_sync";
  return fmt::format("{}({}, {}, {})", fn, kFullMask, v, operand);
}

std::string CudaDialect::atomic(OpKind k, const Access& a, const std::string& v,
                                Needs& needs) const {
  IRON_INTERNAL_ASSERT(a.space != c_like::Space::Input, "atomic on an input tensor");
  const std::string address = "&" + a.base + "[" + a.index + "]";
  const bool float_compare =
      a.type == DType::F32 && (k == OpKind::AtomicMax || k == OpKind::AtomicMin);
  const std::string fn(float_compare ? c_like::spelling_of(k, kFloatAtomics)
                                     : c_like::spelling_of(k, kAtomics));
  if (float_compare) needs.helpers.insert(fn);
  return fn + "(" + address + ", " + v + ")";
}

std::string CudaDialect::barrier() const { return "__syncthreads();"; }
std::string CudaDialect::simdgroup_barrier() const { return "__syncwarp();"; }

std::string CudaDialect::rolled_loop() const { return "#pragma unroll 1"; }

std::string CudaDialect::barrier_among(std::uint32_t threads) const {
  return fmt::format(R"(asm volatile("bar.sync {}, {};" ::: "memory");)", ir::kAmongBarrier,
                     threads);
}

std::vector<std::string> CudaDialect::shared_declaration(const ir::Kernel& kernel,
                                                         std::size_t index, bool) const {
  const ir::SharedAlloc& s = kernel.shared[index];
  // wmma loads and stores straight from shared memory at 32-byte aligned addresses only; wgmma
  // reads swizzled tiles whose pattern repeats every 1024 bytes from the allocation's start.
  const int align = mma_ == MmaStrategy::Wmma                      ? 32
                    : mma_ == MmaStrategy::Wgmma && s.swizzle != 0 ? 1024
                                                                   : 16;
  if (!uses_dynamic_shared(kernel.shared_bytes)) {
    if (s.overlays >= 0) {  // a view of its base's bytes (16-byte aligned, as every array here)
      return {fmt::format("{}* const {} = reinterpret_cast<{}*>({});", type(s.dtype), s.name,
                          type(s.dtype), kernel.shared[s.overlays].name)};
    }
    return {
        fmt::format("__shared__ __align__({}) {} {}[{}];", align, type(s.dtype), s.name, s.size)};
  }
  // Past the static limit every allocation is a view of the launch's dynamic shared memory, at
  // the offset layout_shared_memory gave it (16-byte aligned; wmma checks its alignment at run
  // time and falls back to element copies).
  std::vector<std::string> lines;
  if (index == 0) {
    lines.push_back(fmt::format("extern __shared__ __align__({}) unsigned char iron_shared[];",
                                mma_ == MmaStrategy::Wgmma ? 1024 : align));
  }
  lines.push_back(fmt::format("{}* const {} = reinterpret_cast<{}*>(iron_shared + {});",
                              type(s.dtype), s.name, type(s.dtype), s.offset));
  return lines;
}

std::string CudaDialect::vector_type(DType t, int lanes, Needs& needs) const {
  needs.vectors.insert({t, lanes});
  return vector_name(t, lanes);
}

std::string CudaDialect::vector_name(DType t, int lanes) {
  return fmt::format("iron_{}x{}", dtype_name(t), lanes);
}

std::string CudaDialect::vector_load(const Access& a, Needs& needs) const {
  return fmt::format("*reinterpret_cast<const {}*>({} + {})", vector_type(a.type, a.lanes, needs),
                     a.base, a.index);
}

std::vector<std::string> CudaDialect::vector_store(const Access& a,
                                                   const std::vector<std::string>& values,
                                                   Needs& needs) const {
  const std::string t = vector_type(a.type, a.lanes, needs);
  return {fmt::format("*reinterpret_cast<{}*>({} + {}) = {}{{{{{}}}}};", t, a.base, a.index, t,
                      fmt::join(values, ", "))};
}

std::string CudaDialect::extract(const std::string& v, int, int lane) const {
  return fmt::format("{}.v[{}]", v, lane);
}

std::string CudaDialect::pointer_param(DType t, bool writes) const {
  return Dialect::pointer_param(t, writes) + " __restrict__";
}

std::string CudaDialect::launch_comment(const ir::Kernel& kernel) const {
  const std::string shared =
      kernel.shared_bytes == 0 ? std::string("no shared memory")
      : uses_dynamic_shared(kernel.shared_bytes)
          ? fmt::format(
                "{} bytes of dynamic shared memory (launch with that many, after "
                "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES))",
                kernel.shared_bytes)
          : fmt::format("{} bytes of static shared memory", kernel.shared_bytes);
  return fmt::format("Launch: one block per threadgroup, at most {} threads each; {}.",
                     c_like::group_size_bound(kernel), shared);
}

}  // namespace iron::codegen::cuda
