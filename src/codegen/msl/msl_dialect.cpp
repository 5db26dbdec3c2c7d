/// MSL spellings: saturating conversions, simd_* functions, atomics on cast pointers, vec<T, N>.
#include "msl_dialect.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../c_like/kernel_abi.hpp"
#include "iron/codegen/passes/layout_shared_memory.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen::msl {
namespace {

using c_like::Access;
using c_like::axis_name;
using c_like::Needs;
using c_like::Space;
using ir::OpKind;

/// The Metal function of each simd reduction.
constexpr c_like::Spelling kSimdReductions[] = {
    {OpKind::SimdSum, "simd_sum"},
    {OpKind::SimdMax, "simd_max"},
    {OpKind::SimdMin, "simd_min"},
    {OpKind::SimdPrefixSum, "simd_prefix_inclusive_sum"},
    {OpKind::SimdPrefixExclusiveSum, "simd_prefix_exclusive_sum"},
};

/// The function of each approximate op: Metal's fast variant, or a prelude helper where Metal
/// has no function of its own.
constexpr c_like::Spelling kApproximations[] = {
    {OpKind::Exp2Approx, "fast::exp2"},
    {OpKind::RecipApprox, "iron_recip_approx"},
};

std::string to_f32(const std::string& expr, DType from) {
  if (is_f8(from)) return "iron_to_f32(" + expr + ")";
  return from == DType::F32 ? expr : "float(" + expr + ")";
}

std::string address_space(Space s) { return s == Space::Shared ? "threadgroup" : "device"; }

/// Lanes per part of a vector value: Metal's vectors have at most 4.
int part_lanes(int lanes) { return lanes < 4 ? lanes : 4; }

}  // namespace

std::string MslDialect::type(DType t) const {
  if (t == DType::U32) return "uint";
  if (t == DType::U8) return "uchar";
  if (t == DType::I8) return "char";
  if (t == DType::U16) return "ushort";
  return Dialect::type(t);
}

std::string MslDialect::half_type(DType t) const { return t == DType::F16 ? "half" : "bfloat"; }

std::string MslDialect::float_function(OpKind k) const {
  if (ir::op_info(k).has(ir::kApproximate))
    return std::string(c_like::spelling_of(k, kApproximations));
  if (k == OpKind::Erf) return "iron_erf";         // Metal has no erf: a prelude helper
  return std::string(c_like::c_math_function(k));  // Metal overloads them on float
}

std::string_view MslDialect::reserved_words() const {
  return "kernel vertex fragment device constant threadgroup thread half bfloat uint uchar "
         "ushort metal as_type clamp simd_sum simd_max simd_min simd_prefix_inclusive_sum "
         "simd_prefix_exclusive_sum simd_shuffle simd_shuffle_xor simd_shuffle_up "
         "simd_shuffle_down simd_broadcast threadgroup_barrier simdgroup_barrier mem_flags "
         "memory_order_relaxed atomic_int atomic_uint atomic_float";
}

std::string MslDialect::float_bits(std::uint32_t bits) const {
  return fmt::format("as_type<float>(0x{:08x}u)", bits);
}

std::string MslDialect::convert_number(const std::string& expr, DType from, DType to,
                                       Needs& needs) const {
  if (is_float(to)) {
    const std::string f = is_float(from) ? to_f32(expr, from) : "float(" + expr + ")";
    return to == DType::F32 ? f : type(to) + "(" + f + ")";
  }
  if (!is_float(from)) return type(to) + "(" + expr + ")";
  // Metal's conversions do not saturate: the helpers do, and turn NaN into 0.
  const std::string x = to_f32(expr, from);
  if (to == DType::U32) {
    needs.helpers.insert("iron_f32_to_u32");
    return "iron_f32_to_u32(" + x + ")";
  }
  needs.helpers.insert("iron_f32_to_i32");
  std::string i = "iron_f32_to_i32(" + x + ")";
  if (to == DType::I32) return i;
  const IntegerRange range = integer_range(to);
  return fmt::format("{}(clamp({}, {}, {}))", type(to), i, static_cast<int>(range.lo),
                     static_cast<int>(range.hi));
}

std::string MslDialect::float_arithmetic(const std::string& expr, DType t) const {
  // bfloat operands may compute in float: the result is rounded back explicitly.
  return t == DType::BF16 ? "bfloat(" + expr + ")" : expr;
}

std::string MslDialect::bitcast(const std::string& expr, DType, DType to) const {
  return "as_type<" + type(to) + ">(" + expr + ")";
}

std::string MslDialect::builtin(ir::Builtin b, int axis, Needs& needs) const {
  const std::string a = axis_name(axis);
  auto input = [&](const char* name) {
    needs.inputs.insert(name);
    return std::string(name);
  };
  switch (b) {
    case ir::Builtin::ThreadId:
      return input("iron_tid") + "." + a;
    case ir::Builtin::GroupId:
      return input("iron_gid") + "." + a;
    case ir::Builtin::GroupSize:
      return input("iron_tpg") + "." + a;
    case ir::Builtin::GridGroups:
      return input("iron_ngroups") + "." + a;
    case ir::Builtin::GlobalId:
      return input("iron_gid") + "." + a + " * " + input("iron_tpg") + "." + a + " + " +
             input("iron_tid") + "." + a;
    case ir::Builtin::Lane:
      return input("iron_lane");
    case ir::Builtin::Simdgroup:
      return input("iron_sg");
    case ir::Builtin::SimdgroupCount:
      return input("iron_nsg");
  }
  return "";
}

std::string MslDialect::simd_reduce(OpKind k, DType, const std::string& v, Needs&) const {
  return std::string(c_like::spelling_of(k, kSimdReductions)) + "(" + v + ")";
}

std::string MslDialect::simd_move(OpKind k, DType, const std::string& v, int operand,
                                  Needs&) const {
  const char* fn = k == OpKind::SimdShuffleXor    ? "simd_shuffle_xor"
                   : k == OpKind::SimdShuffleUp   ? "simd_shuffle_up"
                   : k == OpKind::SimdShuffleDown ? "simd_shuffle_down"
                   : k == OpKind::SimdBroadcast   ? "simd_broadcast"
                                                  : "simd_shuffle";
  return fmt::format("{}({}, {})", fn, v, operand);
}

std::string MslDialect::atomic(OpKind k, const Access& a, const std::string& v,
                               Needs& needs) const {
  IRON_INTERNAL_ASSERT(a.space != Space::Input, "atomic on an input tensor");
  const std::string space = address_space(a.space);
  const std::string address = "&" + a.base + "[" + a.index + "]";
  if (a.type == DType::F32 && k != OpKind::AtomicExchange) {
    if (k == OpKind::AtomicAdd && a.space != Space::Shared) {
      return "atomic_fetch_add_explicit((device atomic_float*)" + address + ", " + v +
             ", memory_order_relaxed)";
    }
    // Threadgroup float atomics and float max/min: compare-and-swap on the bits.
    const std::string fn = fmt::format("iron_atomic_{}_f32_{}",
                                       k == OpKind::AtomicAdd   ? "add"
                                       : k == OpKind::AtomicMax ? "max"
                                                                : "min",
                                       space);
    needs.helpers.insert(fn);
    return fn + "(" + address + ", " + v + ")";
  }
  const std::string atomic_type = a.type == DType::I32 ? "atomic_int" : "atomic_uint";
  const std::string object = "(" + space + " " + atomic_type + "*)" + address;
  const char* fn = k == OpKind::AtomicAdd   ? "atomic_fetch_add_explicit"
                   : k == OpKind::AtomicMax ? "atomic_fetch_max_explicit"
                   : k == OpKind::AtomicMin ? "atomic_fetch_min_explicit"
                   : k == OpKind::AtomicAnd ? "atomic_fetch_and_explicit"
                   : k == OpKind::AtomicOr  ? "atomic_fetch_or_explicit"
                   : k == OpKind::AtomicXor ? "atomic_fetch_xor_explicit"
                                            : "atomic_exchange_explicit";
  if (a.type == DType::F32) {  // an exchange: on the bits
    return fmt::format("as_type<float>({}({}, as_type<uint>({}), memory_order_relaxed))", fn,
                       object, v);
  }
  return fmt::format("{}({}, {}, memory_order_relaxed)", fn, object, v);
}

std::string MslDialect::barrier() const {
  return "threadgroup_barrier(mem_flags::mem_threadgroup);";
}
std::string MslDialect::simdgroup_barrier() const {
  return "simdgroup_barrier(mem_flags::mem_threadgroup);";
}

std::vector<std::string> MslDialect::shared_declaration(const ir::Kernel& kernel, std::size_t index,
                                                        bool vector_access) const {
  const ir::SharedAlloc& s = kernel.shared[index];
  if (allocations_share_bytes(kernel)) {  // views at layout_shared_memory's offsets into a block
    std::vector<std::string> lines;
    if (index == 0) {
      lines.push_back(
          fmt::format("alignas(16) threadgroup uchar iron_shared[{}];", kernel.shared_bytes));
    }
    lines.push_back(
        fmt::format("threadgroup {}* {} = reinterpret_cast<threadgroup {}*>(iron_shared + {});",
                    type(s.dtype), s.name, type(s.dtype), s.offset));
    return lines;
  }
  if (s.overlays >= 0) {  // a view of its base's bytes, which are 16-byte aligned
    return {fmt::format("threadgroup {}* {} = reinterpret_cast<threadgroup {}*>({});",
                        type(s.dtype), s.name, type(s.dtype), kernel.shared[s.overlays].name)};
  }
  bool overlaid = false;
  for (const ir::SharedAlloc& other : kernel.shared) {
    overlaid |= other.overlays == static_cast<int>(index);
  }
  return {fmt::format("{}threadgroup {} {}[{}];", vector_access || overlaid ? "alignas(16) " : "",
                      type(s.dtype), s.name, s.size)};
}

std::string MslDialect::vector_name(DType t, int lanes) const {
  if (lanes <= 4) return type(t) + std::to_string(lanes);
  return fmt::format("iron_{}x{}", dtype_name(t), lanes);
}

std::string MslDialect::vector_type(DType t, int lanes, Needs& needs) const {
  if (lanes > 4) needs.vectors.insert({t, lanes});
  return vector_name(t, lanes);
}

std::string MslDialect::vector_load(const Access& a, Needs& needs) const {
  return fmt::format("*({} const {}*)({} + {})", address_space(a.space),
                     vector_type(a.type, a.lanes, needs), a.base, a.index);
}

std::vector<std::string> MslDialect::vector_store(const Access& a,
                                                  const std::vector<std::string>& values,
                                                  Needs& needs) const {
  const std::string t = vector_type(a.type, a.lanes, needs);
  const int width = part_lanes(a.lanes);
  const std::string part = vector_name(a.type, width);
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < values.size(); i += static_cast<std::size_t>(width)) {
    const auto first = values.begin() + static_cast<std::ptrdiff_t>(i);
    parts.push_back(fmt::format("{}({})", part, fmt::join(first, first + width, ", ")));
  }
  const std::string value =
      a.lanes <= 4 ? parts[0] : fmt::format("{}{{{{{}}}}}", t, fmt::join(parts, ", "));
  return {
      fmt::format("*({} {}*)({} + {}) = {};", address_space(a.space), t, a.base, a.index, value)};
}

std::string MslDialect::extract(const std::string& v, int lanes, int lane) const {
  if (lanes <= 4) return fmt::format("{}[{}]", v, lane);
  return fmt::format("{}.part[{}][{}]", v, lane / 4, lane % 4);
}

std::string MslDialect::pointer_param(DType t, bool writes) const {
  return "device " + Dialect::pointer_param(t, writes);
}

std::string MslDialect::value_param(DType carrier) const {
  return "constant " + type(carrier) + "&";
}

std::string MslDialect::param_binding(std::size_t index) const {
  return fmt::format("[[buffer({})]]", index);
}

std::string MslDialect::launch_comment(const ir::Kernel& kernel) const {
  const std::string shared =
      kernel.shared_bytes > 0 ? fmt::format("{} bytes of threadgroup memory", kernel.shared_bytes)
                              : "no threadgroup memory";
  return fmt::format("Dispatch: threadgroups of at most {} threads; {}.",
                     c_like::group_size_bound(kernel), shared);
}

std::string_view MslDialect::parameters_heading() const { return "Buffers"; }

}  // namespace iron::codegen::msl
