/// The C-like spellings every dialect starts from: C++'s type names, C's f32 math functions,
/// bool conversions, pointer parameters.
#include "dialect.hpp"

#include <fmt/format.h>

#include "iron/core/error.hpp"

namespace iron::codegen::c_like {

std::string_view spelling_of(ir::OpKind k, std::span<const Spelling> table) {
  for (const Spelling& s : table) {
    if (s.kind == k) return s.text;
  }
  IRON_INTERNAL_ERROR(fmt::format("no spelling for {}", ir::op_name(k)));
}

std::string Dialect::type(DType t) const {
  switch (t) {
    case DType::F32:
      return "float";
    case DType::F16:
    case DType::BF16:
      return half_type(t);
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
    case DType::F8E4M3:
      return "iron_f8e4m3";
    case DType::F8E5M2:
      return "iron_f8e5m2";
  }
  return "";
}

std::string Dialect::barrier_among(std::uint32_t) const { return ""; }

std::string Dialect::rolled_loop() const { return ""; }

namespace {
[[noreturn]] void no_warpgroup_products() {
  IRON_INTERNAL_ERROR(
      "a warpgroup product reached a dialect that has none: lower_warpgroup_products lowers them");
}
}  // namespace

std::string Dialect::warpgroup_product(const WarpgroupProduct&, Needs&) const {
  no_warpgroup_products();
}
std::string Dialect::warpgroup_commit(Needs&) const { no_warpgroup_products(); }
std::string Dialect::warpgroup_wait(const std::string&, std::uint32_t, int, Needs&) const {
  no_warpgroup_products();
}
std::string Dialect::proxy_fence(Needs&) const { no_warpgroup_products(); }
std::string Dialect::turn(ir::TurnStep, std::uint32_t, Needs&) const { no_warpgroup_products(); }
std::string Dialect::register_budget(std::int64_t, bool, Needs&) const {
  IRON_INTERNAL_ERROR(
      "a register budget reached a target without them (only sm_90a's pipelines "
      "on tensor maps set one)");
}

std::string_view c_math_function(ir::OpKind k) {
  const std::string_view name = ir::op_info(k).c_function;
  IRON_INTERNAL_ASSERT(!name.empty(), fmt::format("{} has no f32 function", ir::op_name(k)));
  return name;
}

std::string axis_name(int axis) { return {"xyz"[axis]}; }

std::string Dialect::float_function(ir::OpKind k) const {
  return std::string(c_math_function(k)) + "f";
}

std::string Dialect::convert(const std::string& expr, DType from, DType to, Needs& needs) const {
  if (to != DType::Bool) return convert_number(expr, from, to, needs);
  if (is_float(from)) {
    const std::string f = from == DType::F32 ? expr : convert_number(expr, from, DType::F32, needs);
    return f + " != 0.0f";
  }
  return expr + (is_signed_int(from) ? " != 0" : " != 0u");
}

std::string Dialect::float_arithmetic(const std::string& expr, DType) const { return expr; }

std::string Dialect::simd_read(DType, const std::string& v, const std::string& source,
                               Needs& needs) const {
  needs.helpers.insert("iron_simd_read");
  return "iron_simd_read(" + v + ", " + source + ")";
}

std::string Dialect::tensor_map_param(std::size_t) const {
  IRON_INTERNAL_ERROR("tensor maps reached a target without them");
}
std::string Dialect::tensor_map_name(std::size_t) const {
  IRON_INTERNAL_ERROR("tensor maps reached a target without them");
}
std::string Dialect::tensor_copy(const std::string&, std::size_t, const std::vector<std::string>&,
                                 const std::string&, Needs&) const {
  IRON_INTERNAL_ERROR("copy.tensor reached a target without tensor maps");
}
std::string Dialect::mbarrier(ir::OpKind, const std::string&, std::int64_t, const std::string&,
                              Needs&) const {
  IRON_INTERNAL_ERROR("an mbarrier reached a target without them");
}

std::string Dialect::pointer_param(DType t, bool writes) const {
  return (writes ? "" : "const ") + type(t) + "*";
}

std::string Dialect::value_param(DType carrier) const { return type(carrier); }

std::string Dialect::param_binding(std::size_t) const { return ""; }

std::string_view Dialect::parameters_heading() const { return "Arguments"; }

}  // namespace iron::codegen::c_like
