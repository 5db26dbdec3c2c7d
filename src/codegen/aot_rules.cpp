/// The AOT bundle's host-side launch checks: contract expressions as checked C++ over the launch
/// function's arguments, in the dispatch guard's order (constexpr facts, ranges, grid rules).
#include "aot_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "c_like/kernel_abi.hpp"
#include "iron/codegen/emit.hpp"
#include "iron/core/error.hpp"
#include "iron/core/size_expr.hpp"

namespace iron::codegen::aot {
namespace {

constexpr std::string_view kPreamble = R"header(
/// Checked 64-bit arithmetic and comparisons for one form's launch rules, as Iron's dispatch
/// guard evaluates them: an overflow or a division by zero refuses the launch.
struct Rules {
  const char* symbol;

  [[noreturn]] void refuse(const std::string& why) const {
    throw Error(std::string(symbol) + ": launch refused, nothing launched: " + why);
  }
  long long add(long long a, long long b) const {
    long long r = 0;
    if (__builtin_add_overflow(a, b, &r)) refuse("a launch rule overflows 64 bits");
    return r;
  }
  long long sub(long long a, long long b) const {
    long long r = 0;
    if (__builtin_sub_overflow(a, b, &r)) refuse("a launch rule overflows 64 bits");
    return r;
  }
  long long mul(long long a, long long b) const {
    long long r = 0;
    if (__builtin_mul_overflow(a, b, &r)) refuse("a launch rule overflows 64 bits");
    return r;
  }
  long long div(long long a, long long b) const {
    if (b == 0) refuse("a launch rule divides by zero");
    if (b == -1 && a == INT64_MIN) refuse("a launch rule overflows 64 bits");
    return a / b;
  }
  long long ceil_div(long long a, long long b) const {
    const long long q = div(a, b);
    return a % b != 0 && ((a < 0) == (b < 0)) ? q + 1 : q;
  }
  static long long min(long long a, long long b) { return a < b ? a : b; }
  static long long max(long long a, long long b) { return a < b ? b : a; }

  /// `what` (`value`) against `bound`, the value of the rule's expression `text`; relation
  /// '=', '<' (at most) or '>' (at least).
  void holds(const char* what, long long value, char relation, long long bound,
             const char* text) const {
    const bool ok = relation == '=' ? value == bound : relation == '<' ? value <= bound
                                                                       : value >= bound;
    if (ok) return;
    std::string why = std::string(what) + " (" + std::to_string(value) + ") must be " +
                      (relation == '=' ? "" : relation == '<' ? "at most " : "at least ") + text;
    if (std::to_string(bound) != text) why += " = " + std::to_string(bound);
    refuse(why);
  }
  void multiple(const char* what, long long value, long long of) const {
    if (of <= 0) refuse(std::string(what) + ": a multiple of " + std::to_string(of) + " asked");
    if (value % of == 0) return;
    refuse(std::string(what) + " (" + std::to_string(value) + ") must be a multiple of " +
           std::to_string(of));
  }
};
)header";

std::string call(std::string_view name, const ir::SizeExpr& e);

/// `e` as checked C++ over the check function's parameters (`rules` the Rules, `per_group` the
/// threads).
std::string cpp(const ir::SizeExpr& e) {
  using K = ir::SizeExpr::Kind;
  switch (e.kind) {
    case K::Literal:
      return fmt::format("{}LL", e.value);
    case K::Constexpr:
      return fmt::format("static_cast<long long>({})", e.name);
    case K::Groups:
      return fmt::format("static_cast<long long>(groups.{})", "xyz"[e.axis % 3]);
    case K::ThreadsPerGroup:
      return "per_group";
    case K::Add:
      return call("add", e);
    case K::Sub:
      return call("sub", e);
    case K::Mul:
      return call("mul", e);
    case K::Div:
      return call("div", e);
    case K::CeilDiv:
      return call("ceil_div", e);
    case K::Min:
      return call("min", e);
    case K::Max:
      return call("max", e);
  }
  IRON_INTERNAL_ERROR("a size expression of unknown kind");
}

std::string call(std::string_view name, const ir::SizeExpr& e) {
  return fmt::format("rules.{}({}, {})", name, cpp(e.args.at(0)), cpp(e.args.at(1)));
}

char relation_char(ir::GridRule::Relation r) {
  switch (r) {
    case ir::GridRule::Relation::Equal:
      return '=';
    case ir::GridRule::Relation::AtMost:
      return '<';
    case ir::GridRule::Relation::AtLeast:
      break;
  }
  return '>';
}

/// A C++ string literal of `text` (contract expressions hold no quotes or backslashes).
std::string quoted(const std::string& text) { return "\"" + text + "\""; }

std::vector<std::string> checks(const ir::Kernel& kernel) {
  std::vector<std::string> out;
  for (const ir::ConstexprRule& r : kernel.dispatch.constexpr_rules) {
    out.push_back(
        fmt::format("rules.multiple(\"constexpr {0}\", static_cast<long long>({0}), {1}LL);",
                    r.constexpr_name, r.multiple));
  }
  for (const ir::ConstexprBound& b : kernel.dispatch.constexpr_bounds) {
    out.push_back(
        fmt::format("rules.holds(\"constexpr {0}\", static_cast<long long>({0}), '{1}', {2}, "
                    "{3});",
                    b.constexpr_name, relation_char(b.relation), cpp(b.bound),
                    quoted(ir::print_size_expr(b.bound))));
  }
  for (const ir::SizeRule& s : kernel.dispatch.group_size_rules) {
    if (s.constexpr_name.empty()) continue;  // literal rules: Bundle::launch checks them
    const std::string name = fmt::format("static_cast<long long>({})", s.constexpr_name);
    const std::string text =
        s.divisor == 1 ? s.constexpr_name : fmt::format("{} / {}", s.constexpr_name, s.divisor);
    const std::string value =
        s.divisor == 1 ? name : fmt::format("rules.div({}, {}LL)", name, s.divisor);
    switch (s.kind) {
      case ir::SizeRule::Kind::Exactly:
      case ir::SizeRule::Kind::AtMost:
      case ir::SizeRule::Kind::AtLeast:
        out.push_back(fmt::format("rules.holds(\"threads per group\", per_group, '{}', {}, {});",
                                  s.kind == ir::SizeRule::Kind::Exactly  ? '='
                                  : s.kind == ir::SizeRule::Kind::AtMost ? '<'
                                                                         : '>',
                                  value, quoted(text)));
        break;
      case ir::SizeRule::Kind::MultipleOf:
        out.push_back(fmt::format("rules.multiple(\"threads per group\", per_group, {});", value));
        break;
      case ir::SizeRule::Kind::PowerOfTwo:
        break;
    }
  }
  for (const ir::GridRule& g : kernel.dispatch.grid_rules) {
    const char axis = "xyz"[g.axis % 3];
    out.push_back(fmt::format(
        "rules.holds(\"groups.{0}\", static_cast<long long>(groups.{0}), '{1}', "
        "{2}, {3});",
        axis, relation_char(g.relation), cpp(g.bound), quoted(ir::print_size_expr(g.bound))));
  }
  return out;
}

std::vector<const ir::Param*> constexprs(const ir::Kernel& kernel) {
  std::vector<const ir::Param*> out;
  for (const ir::Param& p : kernel.params) {
    if (p.kind == ir::ParamKind::Constexpr) out.push_back(&p);
  }
  return out;
}

}  // namespace

std::string rules_preamble() { return std::string(kPreamble); }

std::string check_function(const ir::Kernel& kernel) {
  std::vector<std::string> params = {"[[maybe_unused]] Dim3 groups",
                                     "[[maybe_unused]] Dim3 threads"};
  for (const ir::Param* p : constexprs(kernel)) {
    params.push_back(fmt::format("[[maybe_unused]] {} {}", c_like::host_type(p->dtype), p->name));
  }
  std::string body;
  for (const std::string& c : checks(kernel)) body += "  " + c + "\n";
  const std::string symbol = kernel_symbol(kernel);
  return fmt::format(
      "\n/// Refuses a launch of {0} that breaks its contract, as far as the arguments show it.\n"
      "inline void check_{0}(\n    {1}) {{\n"
      "  [[maybe_unused]] const detail::Rules rules{{\"{0}\"}};\n"
      "  [[maybe_unused]] const long long per_group =\n"
      "      static_cast<long long>(threads.x) * threads.y * threads.z;\n{2}}}\n",
      symbol, fmt::join(params, ",\n    "), body);
}

std::string check_call(const ir::Kernel& kernel) {
  std::vector<std::string> args = {"groups", "threads"};
  for (const ir::Param* p : constexprs(kernel)) args.push_back(p->name);
  return fmt::format("  check_{}({});\n", kernel_symbol(kernel), fmt::join(args, ", "));
}

}  // namespace iron::codegen::aot
