/// Host-side integer expressions of a dispatch contract (`groups.x * n`, `ceil_div(n, tpg)`): the
/// element counts a kernel needs and the bounds of its grid, written over its constexpr
/// parameters, the grid and integer literals, and evaluated before every launch in checked 64-bit
/// arithmetic, so that no value, however large, can wrap the check itself.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iron::ir {

/// One node of a size expression. Leaves are literals, constexpr parameters (by name), group
/// counts per axis and the threads per group; inner nodes take two operands.
struct SizeExpr {
  enum class Kind : std::uint8_t {
    Literal,          ///< `value`
    Constexpr,        ///< the integer constexpr parameter `name`
    Groups,           ///< groups along `axis` (`groups.x`, `groups.y`, `groups.z`)
    ThreadsPerGroup,  ///< threads per group, x * y * z (`tpg`)
    Add,
    Sub,
    Mul,
    Div,  ///< rounds towards zero
    CeilDiv,
    Min,
    Max,
  };
  Kind kind = Kind::Literal;
  std::int64_t value = 0;
  std::string name;
  std::uint8_t axis = 0;
  std::vector<SizeExpr> args;

  bool is_leaf() const { return args.empty(); }
  bool operator==(const SizeExpr&) const = default;
};

/// The text form, as parse_size_expr reads it: infix `+ - * /` with C precedence and only the
/// parentheses it needs, `ceil_div(a, b)`, `min(a, b)`, `max(a, b)`.
std::string print_size_expr(const SizeExpr& e);
/// The same with every leaf replaced by `leaf(e)`: how the dispatch guard shows the values.
std::string print_size_expr(const SizeExpr& e,
                            const std::function<std::string(const SizeExpr&)>& leaf);
/// `[e0, e1, …]`, the dims of a layout.
std::string print_size_dims(const std::vector<SizeExpr>& dims);

/// Parses one expression (the whole text). Throws IrError saying what was expected where;
/// nesting deeper than 64 levels or more than 256 operations are refused, so that no input can
/// exhaust the stack of the parser, the printer or the evaluator.
SizeExpr parse_size_expr(std::string_view text);
/// Parses `[e0, e1, …]` (at least one dim).
std::vector<SizeExpr> parse_size_dims(std::string_view text);

/// The value of an expression, or why it has none.
struct SizeValue {
  std::int64_t value = 0;
  std::string error;  ///< empty when the value is known
  bool ok() const { return error.empty(); }
};

/// Evaluates `e` in checked 64-bit arithmetic; `leaf` gives each non-literal leaf's value (or
/// nullopt when it is unknown). Overflow, a division by zero or an unknown leaf is an error.
SizeValue evaluate_size_expr(
    const SizeExpr& e, const std::function<std::optional<std::int64_t>(const SizeExpr&)>& leaf);

/// Calls `fn` on every leaf of `e`, left to right.
void for_each_leaf(const SizeExpr& e, const std::function<void(const SizeExpr&)>& fn);

/// The product of the dims as one expression (`[groups.x, n]` is `groups.x * n`).
SizeExpr product_of(const std::vector<SizeExpr>& dims);

}  // namespace iron::ir
