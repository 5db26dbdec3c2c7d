/// CUDA C++ spellings: fp16/bf16 conversions, saturating casts, warp shuffles, atomics, vectors.
#include "cuda_dialect.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "iron/core/error.hpp"

namespace iron::codegen::cuda {
namespace {

using c_like::Access;
using c_like::Needs;
using ir::OpKind;

constexpr const char* kFullMask = "0xffffffffu";

/// `expr` of the float type `from` as an f32 expression.
std::string to_f32(const std::string& expr, DType from) {
  if (from == DType::F16) return "__half2float(" + expr + ")";
  if (from == DType::BF16) return "__bfloat162float(" + expr + ")";
  return expr;
}

/// The f32 expression `f` rounded once to the float type `to`.
std::string from_f32(const std::string& f, DType to) {
  if (to == DType::F16) return "__float2half_rn(" + f + ")";
  if (to == DType::BF16) return "__float2bfloat16_rn(" + f + ")";
  return f;
}

std::string static_cast_to(const std::string& type, const std::string& expr) {
  return "static_cast<" + type + ">(" + expr + ")";
}

std::string axis_name(int axis) { return std::string(1, "xyz"[axis]); }

}  // namespace

std::string CudaDialect::type(DType t) const {
  switch (t) {
    case DType::F32:
      return "float";
    case DType::F16:
      return "__half";
    case DType::BF16:
      return "__nv_bfloat16";
    case DType::I32:
      return "int";
    case DType::U32:
      return "unsigned int";
    case DType::U8:
      return "unsigned char";
    case DType::I8:
      return "signed char";
    case DType::U16:
      return "unsigned short";
    case DType::Bool:
      return "bool";
  }
  return "";
}

std::string CudaDialect::float_bits(std::uint32_t bits) const {
  return fmt::format("__uint_as_float(0x{:08x}u)", bits);
}

std::string CudaDialect::convert(const std::string& expr, DType from, DType to, Needs&) const {
  if (to == DType::Bool) {
    if (is_float(from)) return to_f32(expr, from) + " != 0.0f";
    return expr + (is_signed_int(from) ? " != 0" : " != 0u");
  }
  if (is_float(to)) {
    return from_f32(is_float(from) ? to_f32(expr, from) : static_cast_to("float", expr), to);
  }
  if (!is_float(from)) return static_cast_to(type(to), expr);
  // cvt.rzi saturates and turns NaN into 0; narrower types clamp the int result.
  const std::string x = to_f32(expr, from);
  switch (to) {
    case DType::I32:
      return "__float2int_rz(" + x + ")";
    case DType::U32:
      return "__float2uint_rz(" + x + ")";
    case DType::U8:
      return static_cast_to(type(to), "min(max(__float2int_rz(" + x + "), 0), 255)");
    case DType::I8:
      return static_cast_to(type(to), "min(max(__float2int_rz(" + x + "), -128), 127)");
    default:
      return static_cast_to(type(to), "min(max(__float2int_rz(" + x + "), 0), 65535)");
  }
}

std::string CudaDialect::float_arithmetic(const std::string& expr, DType) const {
  return expr;  // cuda_fp16 and cuda_bf16 define the operators on __half and __nv_bfloat16
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
  if (from == DType::F16) bits = "__half_as_ushort(" + expr + ")";
  if (from == DType::BF16) bits = "__bfloat16_as_ushort(" + expr + ")";
  if (to == DType::F16) return "__ushort_as_half(" + bits + ")";
  if (to == DType::BF16) return "__ushort_as_bfloat16(" + bits + ")";
  return bits;
}

std::string_view CudaDialect::float_function(OpKind k) const {
  switch (k) {
    case OpKind::Sqrt:
      return "sqrtf";
    case OpKind::Rsqrt:
      return "rsqrtf";
    case OpKind::Exp:
      return "expf";
    case OpKind::Exp2:
      return "exp2f";
    case OpKind::Log:
      return "logf";
    case OpKind::Log2:
      return "log2f";
    case OpKind::Sin:
      return "sinf";
    case OpKind::Cos:
      return "cosf";
    case OpKind::Tanh:
      return "tanhf";
    case OpKind::Erf:
      return "erff";
    case OpKind::Abs:
      return "fabsf";
    case OpKind::Floor:
      return "floorf";
    case OpKind::Ceil:
      return "ceilf";
    case OpKind::Rem:
      return "fmodf";
    case OpKind::Min:
      return "fminf";
    case OpKind::Max:
      return "fmaxf";
    case OpKind::Pow:
      return "powf";
    case OpKind::Atan2:
      return "atan2f";
    case OpKind::Fma:
      return "fmaf";
    default:
      IRON_INTERNAL_ASSERT(false, "op without an f32 function");
  }
  return "";
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
  std::string helper;
  switch (k) {
    case OpKind::SimdSum:
      helper = "iron_simd_sum";
      break;
    case OpKind::SimdMax:
      helper = "iron_simd_max";
      break;
    case OpKind::SimdMin:
      helper = "iron_simd_min";
      break;
    case OpKind::SimdPrefixSum:
      helper = "iron_simd_prefix_sum";
      break;
    case OpKind::SimdPrefixExclusiveSum:
      helper = "iron_simd_prefix_exclusive_sum";
      break;
    default:
      IRON_INTERNAL_ASSERT(false, "simd reduction expected");
  }
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

std::string CudaDialect::simd_read(DType, const std::string& v, const std::string& source,
                                   Needs& needs) const {
  needs.helpers.insert("iron_simd_read");
  return "iron_simd_read(" + v + ", " + source + ")";
}

std::string CudaDialect::atomic(OpKind k, const Access& a, const std::string& v,
                                Needs& needs) const {
  IRON_INTERNAL_ASSERT(a.space != c_like::Space::Input, "atomic on an input tensor");
  const std::string address = "&" + a.base + "[" + a.index + "]";
  std::string fn;
  switch (k) {
    case OpKind::AtomicAdd:
      fn = "atomicAdd";
      break;
    case OpKind::AtomicMax:
      fn = a.type == DType::F32 ? "iron_atomic_max_f32" : "atomicMax";
      break;
    case OpKind::AtomicMin:
      fn = a.type == DType::F32 ? "iron_atomic_min_f32" : "atomicMin";
      break;
    case OpKind::AtomicAnd:
      fn = "atomicAnd";
      break;
    case OpKind::AtomicOr:
      fn = "atomicOr";
      break;
    case OpKind::AtomicXor:
      fn = "atomicXor";
      break;
    default:
      fn = "atomicExch";
      break;
  }
  if (fn.starts_with("iron_")) needs.helpers.insert(fn);
  return fn + "(" + address + ", " + v + ")";
}

std::string CudaDialect::barrier() const { return "__syncthreads();"; }

std::string CudaDialect::shared_declaration(const ir::SharedAlloc& s, bool) const {
  return fmt::format("__shared__ __align__(16) {} {}[{}];", type(s.dtype), s.name, s.size);
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

}  // namespace iron::codegen::cuda
