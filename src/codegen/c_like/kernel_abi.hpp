/// What the C-like emitters say about a kernel outside its body: symbol, bounds, names, header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dialect.hpp"
#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen::c_like {

/// The smallest `exactly` or `at_most` literal bound of the dispatch contract, else 1024.
std::uint32_t group_size_bound(const ir::Kernel& kernel);

/// Whether the kernel has a parameter, allocation or value of type `t`.
bool kernel_uses(const ir::Kernel& kernel, DType t);

/// Throws Error naming the kernel and `language` when a parameter or shared-allocation name is
/// not a plain identifier, looks like a name the emitter makes (`vN`, `iron_…`, `__…`), or is
/// reserved: a C++ keyword or one of `reserved` (space-separated).
void check_names(const ir::Kernel& kernel, std::string_view language, std::string_view reserved);

/// The names a parameter must not take in the dialect's code, space-separated: its
/// reserved_words() and the names of its float functions.
std::string reserved_names(const Dialect& dialect);

/// The host C++ type generated host code (launch wrappers, AOT bundles) takes a constexpr of
/// type `t` as: float for f32, f16 and bf16, std::int32_t, std::uint32_t, std::int8_t,
/// std::uint8_t, std::uint16_t, bool.
std::string_view host_type(DType t);

/// What a parameter is, for the ABI comment: "input bf16 tensor", "constexpr bool (0 or 1)".
std::string param_role(const ir::Param& p);

/// The type of parameter `p` in the signature: the dialect's pointer to its elements for a
/// tensor, its value_param() of the constexpr's carrier for a constexpr.
std::string param_type(const ir::Param& p, const Dialect& dialect);

/// The declarations of the kernel's parameters in the signature: "TYPE NAME", then the
/// dialect's binding where it has one.
std::vector<std::string> param_declarations(const ir::Kernel& kernel, const Dialect& dialect);

/// The launch ABI for the header comment: the dialect's launch line, then one line per
/// parameter with its binding, role and type.
std::vector<std::string> abi_comment(const ir::Kernel& kernel, const Dialect& dialect);

/// The signature's parameter list: `declarations` one per line, closed by ") {".
std::string parameter_list(const std::vector<std::string>& declarations);

/// The comment a file starts with: symbol, kernel, source, dtype and `target` (the profile and
/// the language), the "generated" note, then `details` (the launch ABI), each line as "// …".
std::string header_comment(const ir::Kernel& kernel, std::string_view target,
                           const std::vector<std::string>& details);

}  // namespace iron::codegen::c_like
