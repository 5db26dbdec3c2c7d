/// Symbol, group-size bound, name checks and header comment shared by the C-like emitters.
#include "kernel_abi.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "expressions.hpp"
#include "iron/codegen/emit.hpp"
#include "iron/core/error.hpp"
#include "iron/core/size_expr.hpp"

namespace iron::codegen {

std::string kernel_symbol(const ir::Kernel& kernel) {
  return kernel.name + "_" + std::string(dtype_name(kernel.dtype));
}

namespace c_like {
namespace {

constexpr std::string_view kCppKeywords =
    " alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t "
    "char16_t char32_t class compl concept const consteval constexpr constinit const_cast "
    "continue co_await co_return co_yield decltype default delete do double dynamic_cast else "
    "enum explicit export extern false float for friend goto if inline int long mutable "
    "namespace new noexcept not not_eq nullptr operator or or_eq private protected public "
    "register reinterpret_cast requires return short signed sizeof static static_assert "
    "static_cast struct switch template this thread_local throw true try typedef typeid "
    "typename union unsigned using virtual void volatile wchar_t while xor xor_eq min max abs ";

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool is_word_of(std::string_view word, std::string_view words) {
  return words.find(" " + std::string(word) + " ") != std::string_view::npos;
}

/// `v` followed by digits: the emitter's name for values.
bool is_value_name(std::string_view s) {
  return s.size() > 1 && s[0] == 'v' &&
         std::all_of(s.begin() + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string problem(std::string_view name, std::string_view language, std::string_view reserved) {
  if (!is_identifier(name)) return "is not an identifier";
  if (is_value_name(name) || name.starts_with("iron_") || name.starts_with("__")) {
    return "could clash with a name the emitted code uses";
  }
  if (is_word_of(name, kCppKeywords) || is_word_of(name, " " + std::string(reserved) + " ")) {
    return fmt::format("is reserved in {}", language);
  }
  return "";
}

}  // namespace

std::uint32_t group_size_bound(const ir::Kernel& kernel) {
  return static_cast<std::uint32_t>(kernel.dispatch.group_size_cap());
}

bool kernel_uses(const ir::Kernel& kernel, DType t) {
  bool used = std::any_of(kernel.params.begin(), kernel.params.end(),
                          [&](const ir::Param& p) { return p.dtype == t; }) ||
              std::any_of(kernel.shared.begin(), kernel.shared.end(),
                          [&](const ir::SharedAlloc& s) { return s.dtype == t; });
  ir::walk(kernel.body, [&](const ir::Op& op) { used = used || op.type == t; });
  return used;
}

std::string reserved_names(const Dialect& dialect) {
  std::string words(dialect.reserved_words());
  for (std::size_t i = 0; i < ir::kOpTable.size(); ++i) {
    const auto kind = static_cast<ir::OpKind>(i);
    if (!ir::op_info(kind).c_function.empty()) words += " " + dialect.float_function(kind);
  }
  return words;
}

void check_names(const ir::Kernel& kernel, std::string_view language, std::string_view reserved) {
  if (!is_identifier(kernel.name)) {
    throw Error(fmt::format("kernel {}: the name is not an identifier", kernel.name));
  }
  auto check = [&](std::string_view what, std::string_view name) {
    const std::string why = problem(name, language, reserved);
    if (!why.empty()) {
      throw Error(fmt::format("kernel {}: {} '{}' {}: rename it", kernel.name, what, name, why));
    }
  };
  for (const ir::Param& p : kernel.params) check("parameter", p.name);
  for (const ir::SharedAlloc& s : kernel.shared) check("shared allocation", s.name);
}

std::string param_role(const ir::Param& p) {
  const std::string_view dtype = dtype_name(p.dtype);
  switch (p.kind) {
    case ir::ParamKind::Input:
      return fmt::format("input {} tensor", dtype);
    case ir::ParamKind::Output:
      return fmt::format("output {} tensor", dtype);
    case ir::ParamKind::InOut:
      return fmt::format("in-out {} tensor", dtype);
    case ir::ParamKind::Constexpr:
      if (p.dtype == DType::Bool) return "constexpr bool (0 or 1)";
      if (constexpr_carrier(p.dtype) != p.dtype) {
        return fmt::format("constexpr {} (converted in the kernel)", dtype);
      }
      return fmt::format("constexpr {}", dtype);
  }
  return "";
}

std::string param_type(const ir::Param& p, const Dialect& dialect) {
  switch (p.kind) {
    case ir::ParamKind::Input:
      return dialect.pointer_param(p.dtype, false);
    case ir::ParamKind::Output:
    case ir::ParamKind::InOut:
      return dialect.pointer_param(p.dtype, true);
    case ir::ParamKind::Constexpr:
      return dialect.value_param(constexpr_carrier(p.dtype));
  }
  return "";
}

std::vector<std::string> param_declarations(const ir::Kernel& kernel, const Dialect& dialect) {
  std::vector<std::string> declarations;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    const std::string binding = dialect.param_binding(i);
    declarations.push_back(param_type(p, dialect) + " " + p.name +
                           (binding.empty() ? "" : " " + binding));
  }
  for (std::size_t k = 0; k < kernel.tensor_maps.size(); ++k) {
    declarations.push_back(dialect.tensor_map_param(k));
  }
  return declarations;
}

std::vector<std::string> abi_comment(const ir::Kernel& kernel, const Dialect& dialect) {
  std::vector<std::string> lines = {
      dialect.launch_comment(kernel),
      fmt::format("{}, in parameter order (see include/iron/codegen/emit.hpp):",
                  dialect.parameters_heading())};
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    const std::string binding = dialect.param_binding(i);
    lines.push_back(fmt::format("  {}{}: {}, as {}", binding.empty() ? "" : binding + " ", p.name,
                                param_role(p), param_type(p, dialect)));
  }
  for (std::size_t k = 0; k < kernel.tensor_maps.size(); ++k) {
    const ir::TensorMap& m = kernel.tensor_maps[k];
    lines.push_back(fmt::format(
        "  {}: the tensor map (128 bytes, by value) of {} {} in boxes of {}x{}{}",
        dialect.tensor_map_name(k), kernel.params.at(static_cast<std::size_t>(m.param)).name,
        ir::print_size_dims({m.base, m.height, m.width}), m.box_rows, m.box_cols,
        m.swizzle != 0 ? ", 128-byte swizzle" : ""));
  }
  return lines;
}

std::string parameter_list(const std::vector<std::string>& declarations) {
  if (declarations.empty()) return ") {\n";
  std::string text;
  for (std::size_t i = 0; i < declarations.size(); ++i) {
    text += "\n    " + declarations[i] + (i + 1 < declarations.size() ? "," : ") {\n");
  }
  return text;
}

std::string header_comment(const ir::Kernel& kernel, std::string_view target,
                           const std::vector<std::string>& details) {
  const std::string source = kernel.loc.known() ? " (" + format_loc(kernel.loc) + ")" : "";
  std::string text = fmt::format(
      "// {}: Iron kernel {}{} with T = {},\n"
      "// for {}. Generated by Iron \u2014 do not edit.\n//\n",
      kernel_symbol(kernel), kernel.name, source, dtype_name(kernel.dtype), target);
  for (const std::string& line : details) text += line.empty() ? "//\n" : "// " + line + "\n";
  return text;
}

std::string_view host_type(DType t) {
  switch (t) {
    case DType::I32:
      return "std::int32_t";
    case DType::U32:
      return "std::uint32_t";
    case DType::I8:
      return "std::int8_t";
    case DType::U8:
      return "std::uint8_t";
    case DType::U16:
      return "std::uint16_t";
    case DType::Bool:
      return "bool";
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3:
    case DType::F8E5M2:
      return "float";
  }
  return "float";
}

}  // namespace c_like

}  // namespace iron::codegen
