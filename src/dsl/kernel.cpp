/// The kernel registry, parameter-name extraction, dispatch declarations and kernel tracing.
#include "iron/dsl/kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "iron/core/verifier.hpp"
#include "iron/dsl/registration.hpp"
#include "iron/dsl/tuning.hpp"
#include "tuning_in_force.hpp"

namespace iron::dsl {
namespace {

std::vector<KernelInfo>& registry() {
  static std::vector<KernelInfo> kernels;
  return kernels;
}

ir::SizeRule rule(ir::SizeRule::Kind kind, std::int64_t n) { return {kind, n, {}, 1}; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// Parses a contract expression; a parse error or a name that is not an integer constexpr
/// parameter fails the trace at the declaration's line.
template <class F>
auto contract_expression(detail::Tracer& t, std::string_view call, F&& parse) {
  try {
    auto parsed = parse();
    return parsed;
  } catch (const IrError& e) {
    t.fail(fmt::format("{}: {}", call, e.what()));
  }
}

void check_names(detail::Tracer& t, std::string_view call, const ir::SizeExpr& e) {
  const ir::Kernel& k = t.kernel();
  ir::for_each_leaf(e, [&](const ir::SizeExpr& leaf) {
    if (leaf.kind != ir::SizeExpr::Kind::Constexpr) return;
    const int p = k.find_param(leaf.name);
    if (p < 0 || k.params[p].kind != ir::ParamKind::Constexpr) {
      t.fail(fmt::format("{}: '{}' is not a constexpr parameter of the kernel", call, leaf.name));
    }
    if (!is_integer(k.params[p].dtype)) {
      t.fail(fmt::format("{}: constexpr '{}' is {}, not an integer", call, leaf.name,
                         dtype_name(k.params[p].dtype)));
    }
  });
}

/// The entries of `[a, b, c]` split at the commas outside parentheses.
std::vector<std::string_view> list_entries(detail::Tracer& t, std::string_view call,
                                           std::string_view text) {
  text = trim(text);
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    t.fail(fmt::format("{}: expected a list '[x, y, z]'", call));
  }
  text = text.substr(1, text.size() - 2);
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return out;
}

}  // namespace

ir::SizeRule multiple_of(std::int64_t n) { return rule(ir::SizeRule::Kind::MultipleOf, n); }
ir::SizeRule at_least(std::int64_t n) { return rule(ir::SizeRule::Kind::AtLeast, n); }
ir::SizeRule at_most(std::int64_t n) { return rule(ir::SizeRule::Kind::AtMost, n); }
ir::SizeRule exactly(std::int64_t n) { return rule(ir::SizeRule::Kind::Exactly, n); }
ir::SizeRule power_of_two() { return rule(ir::SizeRule::Kind::PowerOfTwo, 0); }

void dispatch(ir::DispatchMode mode, std::initializer_list<ir::SizeRule> rules,
              SourceLocation where) {
  auto& t = detail::Tracer::current();
  t.at(where);
  ir::DispatchContract contract = t.kernel().dispatch;
  contract.mode = mode;
  contract.group_size_rules = rules;
  contract.loc = t.loc();
  t.set_dispatch(std::move(contract));
}

void occupancy(std::uint32_t groups, SourceLocation where) {
  auto& t = detail::Tracer::current();
  t.at(where);
  const std::string call = fmt::format("occupancy({})", groups);
  if (t.kernel().dispatch.occupancy != 0) t.fail(call + ": occupancy(...) is declared twice");
  if (groups == 0) t.fail(call + ": a kernel asks for at least one group a multiprocessor");
  t.kernel().dispatch.occupancy = groups;
}

void grid(std::string_view groups, SourceLocation where) {
  auto& t = detail::Tracer::current();
  t.at(where);
  const std::string call = fmt::format("grid(\"{}\")", groups);
  auto& rules = t.kernel().dispatch.grid_rules;
  if (!rules.empty()) t.fail(call + ": grid(...) is declared twice");
  const auto entries = list_entries(t, call, groups);
  if (entries.size() != 3) {
    t.fail(fmt::format("{}: expected three entries (x, y, z), found {}", call, entries.size()));
  }
  for (std::uint8_t axis = 0; axis < 3; ++axis) {
    std::string_view entry = entries[axis];
    if (entry == "any") continue;
    ir::GridRule r;
    r.axis = axis;
    if (entry.size() >= 2 && ir::parse_relation_name(entry.substr(0, 2), r.relation)) {
      entry.remove_prefix(2);
    }
    r.bound = contract_expression(t, call, [&] { return ir::parse_size_expr(entry); });
    check_names(t, call, r.bound);
    r.loc = t.loc();
    rules.push_back(std::move(r));
  }
}

namespace detail {

void declare_layout(int param, bool exact, std::string_view dims, SourceLocation where) {
  auto& t = Tracer::current();
  t.at(where);
  const std::string& name = t.kernel().params.at(static_cast<std::size_t>(param)).name;
  const std::string call =
      fmt::format("{}({}, \"{}\")", exact ? "layout" : "layout_at_least", name, dims);
  if (t.kernel().dispatch.layout_of(name) != nullptr) {
    t.fail(fmt::format("{}: the layout of '{}' is declared twice", call, name));
  }
  ir::TensorLayout l{name, exact, {}, t.loc()};
  l.dims = contract_expression(t, call, [&] { return ir::parse_size_dims(dims); });
  for (const ir::SizeExpr& d : l.dims) check_names(t, call, d);
  t.kernel().dispatch.layouts.push_back(std::move(l));
}

void declare_multiple(int param, std::int64_t multiple, SourceLocation where) {
  auto& t = Tracer::current();
  t.at(where);
  const std::string& name = t.kernel().params.at(static_cast<std::size_t>(param)).name;
  if (multiple <= 0) {
    t.fail(
        fmt::format("require_multiple_of({}, {}): the multiple must be positive", name, multiple));
  }
  t.kernel().dispatch.constexpr_rules.push_back({name, multiple, t.loc()});
}

void declare_bound(int param, bool at_most, std::string_view bound, SourceLocation where) {
  auto& t = Tracer::current();
  t.at(where);
  const std::string& name = t.kernel().params.at(static_cast<std::size_t>(param)).name;
  const std::string call =
      fmt::format("{}({}, \"{}\")", at_most ? "require_at_most" : "require_at_least", name, bound);
  ir::ConstexprBound b{name,
                       at_most ? ir::GridRule::Relation::AtMost : ir::GridRule::Relation::AtLeast,
                       {},
                       t.loc()};
  b.bound = contract_expression(t, call, [&] { return ir::parse_size_expr(bound); });
  check_names(t, call, b.bound);
  t.kernel().dispatch.constexpr_bounds.push_back(std::move(b));
}

}  // namespace detail

const std::vector<KernelInfo>& registered_kernels() {
  check_registrations();
  return registry();
}

const KernelInfo* find_kernel(std::string_view name) {
  for (const KernelInfo& k : registered_kernels()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

ir::Kernel kernel_ir_for(std::string_view name, DType dtype) {
  return kernel_ir_for(name, dtype, TuningConfig{});
}

namespace detail {

void register_kernel(KernelInfo info) {
  if (auto problem = insert_unique(registry(), std::move(info), "kernel")) {
    record_registration_problem(std::move(*problem));
  }
}

std::vector<std::string> parameter_names(std::string_view stringized) {
  std::string_view s = stringized;
  if (!s.empty() && s.front() == '(') s.remove_prefix(1);
  if (!s.empty() && s.back() == ')') s.remove_suffix(1);
  std::vector<std::string> names;
  int depth = 0;
  std::size_t start = 0;
  auto take = [&](std::size_t end) {
    std::string_view decl = s.substr(start, end - start);
    while (!decl.empty() && std::isspace(static_cast<unsigned char>(decl.back()))) {
      decl.remove_suffix(1);
    }
    std::size_t begin = decl.size();
    while (begin > 0 &&
           (std::isalnum(static_cast<unsigned char>(decl[begin - 1])) || decl[begin - 1] == '_')) {
      --begin;
    }
    if (begin < decl.size()) names.emplace_back(decl.substr(begin));
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      take(i);
      start = i + 1;
    }
  }
  take(s.size());
  return names;
}

ir::Kernel trace_kernel(const std::string& name, DType dtype, const ir::SourceLoc& loc,
                        const std::function<void()>& body) {
  const DefaultTuning tuning(name);
  Tracer tracer(name, dtype, loc);
  try {
    body();
  } catch (const TraceError&) {
    throw;
  } catch (const std::exception& e) {
    throw TraceError(fmt::format("kernel {}: {}: an exception left the traced body: {}", name,
                                 format_loc(tracer.loc()), e.what()));
  }
  ir::Kernel kernel = tracer.finish();
  const auto problems = ir::verify(kernel);
  if (!problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += "\n  " + p;
    throw TraceError(fmt::format("kernel {} traced into invalid IR:{}", name, all));
  }
  return kernel;
}

}  // namespace detail
}  // namespace iron::dsl
