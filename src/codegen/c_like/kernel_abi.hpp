/// What the C-like emitters say about a kernel outside its body: symbol, bounds, names, header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "iron/codegen/target.hpp"
#include "iron/core/ir.hpp"

namespace iron::codegen::c_like {

/// The smallest `exactly` or `at_most` literal bound of the dispatch contract, else 1024.
std::uint32_t group_size_bound(const ir::Kernel& kernel);

/// Whether the kernel has a parameter, allocation or value of type `t`.
bool kernel_uses(const ir::Kernel& kernel, DType t);

/// Throws Error naming the kernel when a parameter or shared-allocation name is not a plain
/// identifier, is one of `reserved` (space-separated words the language or the emitted code
/// uses besides the C++ keywords), or looks like a name the emitter makes (`vN`, `iron_…`).
void check_names(const ir::Kernel& kernel, std::string_view language, std::string_view reserved);

/// What a parameter is, for the ABI comment: "input bf16 tensor", "constexpr bool (0 or 1)".
std::string param_role(const ir::Param& p);

/// The signature's parameter list: `declarations` one per line, closed by ") {".
std::string parameter_list(const std::vector<std::string>& declarations);

/// The comment a file starts with: symbol, kernel, source, dtype and `target` (the profile and
/// the language), the "generated" note, then `details` (the launch ABI), each line as "// …".
std::string header_comment(const ir::Kernel& kernel, std::string_view target,
                           const std::vector<std::string>& details);

}  // namespace iron::codegen::c_like
