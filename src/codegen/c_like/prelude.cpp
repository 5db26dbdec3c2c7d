/// Prelude helpers: the ones the body calls, with their callees, in the dialect's order.
#include "prelude.hpp"

#include <fmt/format.h>

#include "iron/core/error.hpp"

namespace iron::codegen::c_like {
namespace {

/// `names` with every helper they call, transitively.
std::set<std::string> with_callees(const std::vector<Helper>& helpers,
                                   const std::set<std::string>& names) {
  std::set<std::string> out = names;
  for (std::size_t i = helpers.size(); i-- > 0;) {  // callers after callees: walk back
    if (out.contains(helpers[i].name)) out.insert(helpers[i].calls.begin(), helpers[i].calls.end());
  }
  return out;
}

}  // namespace

void append_helpers(std::string& text, const std::vector<Helper>& helpers,
                    const std::set<std::string>& needed, std::string_view language) {
  const std::set<std::string> used = with_callees(helpers, needed);
  std::size_t defined = 0;
  for (const Helper& h : helpers) {
    if (!used.contains(h.name)) continue;
    text += (text.empty() ? "" : "\n") + h.text;
    defined += needed.count(h.name);
  }
  IRON_INTERNAL_ASSERT(defined == needed.size(),
                       fmt::format("the body calls an unknown {} helper", language));
}

}  // namespace iron::codegen::c_like
