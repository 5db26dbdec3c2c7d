/// Prelude helpers: the functions a dialect defines between the includes and the kernel, each
/// written only when the body (or another helper written) calls it.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace iron::codegen::c_like {

struct Helper {
  std::string name;
  std::vector<std::string> calls;  ///< the helpers it calls, defined before it
  std::string text;
};

/// Appends to `text` the helpers `needed` names and those they call, transitively, in the order
/// of `helpers` (callees first), each after a blank line unless `text` is still empty. An
/// internal error names `language` when `needed` names a helper `helpers` lacks.
void append_helpers(std::string& text, const std::vector<Helper>& helpers,
                    const std::set<std::string>& needed, std::string_view language);

}  // namespace iron::codegen::c_like
