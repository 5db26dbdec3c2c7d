/// Prints, parses and evaluates the size expressions of dispatch contracts.
#include "iron/core/size_expr.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "iron/core/error.hpp"

namespace iron::ir {
namespace {

using Kind = SizeExpr::Kind;

constexpr std::string_view kAxes = "xyz";
constexpr int kMaxDepth = 64;
constexpr int kMaxNodes = 256;

/// Binding strength: sums 1, products 2, leaves and calls 3.
int precedence(Kind k) {
  switch (k) {
    case Kind::Add:
    case Kind::Sub:
      return 1;
    case Kind::Mul:
    case Kind::Div:
      return 2;
    case Kind::Literal:
    case Kind::Constexpr:
    case Kind::Groups:
    case Kind::ThreadsPerGroup:
    case Kind::CeilDiv:
    case Kind::Min:
    case Kind::Max:
      return 3;
  }
  IRON_INTERNAL_ERROR("a size expression of no kind");
}

std::string_view infix(Kind k) {
  switch (k) {
    case Kind::Add:
      return " + ";
    case Kind::Sub:
      return " - ";
    case Kind::Mul:
      return " * ";
    case Kind::Div:
      return " / ";
    case Kind::Literal:
    case Kind::Constexpr:
    case Kind::Groups:
    case Kind::ThreadsPerGroup:
    case Kind::CeilDiv:
    case Kind::Min:
    case Kind::Max:
      break;
  }
  IRON_INTERNAL_ERROR("infix of a size expression that is not an operator");
}

std::string_view call_name(Kind k) {
  switch (k) {
    case Kind::CeilDiv:
      return "ceil_div";
    case Kind::Min:
      return "min";
    case Kind::Max:
      return "max";
    case Kind::Literal:
    case Kind::Constexpr:
    case Kind::Groups:
    case Kind::ThreadsPerGroup:
    case Kind::Add:
    case Kind::Sub:
    case Kind::Mul:
    case Kind::Div:
      break;
  }
  IRON_INTERNAL_ERROR("call name of a size expression that is not a call");
}

std::string leaf_text(const SizeExpr& e) {
  switch (e.kind) {
    case Kind::Literal:
      return std::to_string(e.value);
    case Kind::Constexpr:
      return e.name;
    case Kind::Groups:
      return fmt::format("groups.{}", kAxes[e.axis % 3]);
    case Kind::ThreadsPerGroup:
      return "tpg";
    case Kind::Add:
    case Kind::Sub:
    case Kind::Mul:
    case Kind::Div:
    case Kind::CeilDiv:
    case Kind::Min:
    case Kind::Max:
      break;
  }
  IRON_INTERNAL_ERROR("leaf text of a size expression that is not a leaf");
}

void print(const SizeExpr& e, const std::function<std::string(const SizeExpr&)>& leaf,
           std::string& out) {
  if (e.is_leaf()) {
    out += leaf(e);
    return;
  }
  IRON_INTERNAL_ASSERT(e.args.size() == 2, "a size expression node takes two operands");
  const int p = precedence(e.kind);
  if (p == 3) {
    out += call_name(e.kind);
    out += '(';
    print(e.args[0], leaf, out);
    out += ", ";
    print(e.args[1], leaf, out);
    out += ')';
    return;
  }
  // Left-associative: the right operand needs parentheses at equal precedence too.
  const bool left_parens = precedence(e.args[0].kind) < p;
  const bool right_parens = precedence(e.args[1].kind) <= p;
  if (left_parens) out += '(';
  print(e.args[0], leaf, out);
  if (left_parens) out += ')';
  out += infix(e.kind);
  if (right_parens) out += '(';
  print(e.args[1], leaf, out);
  if (right_parens) out += ')';
}

/// Recursive descent over `text`; errors name the column and what was expected.
class ExprParser {
 public:
  explicit ExprParser(std::string_view text) : text_(text) {}

  SizeExpr whole() {
    SizeExpr e = sum(0);
    end();
    return e;
  }

  std::vector<SizeExpr> dims() {
    expect('[');
    std::vector<SizeExpr> out;
    do {
      out.push_back(sum(0));
    } while (accept(','));
    expect(']');
    end();
    return out;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw IrError(fmt::format("in '{}': {}", text_, what));
  }
  [[noreturn]] void expected(std::string_view what) {
    skip_space();
    fail(fmt::format("expected {} at column {}, found {}", what, pos_ + 1,
                     pos_ < text_.size() ? fmt::format("'{}'", text_.substr(pos_)) : "the end"));
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) expected(fmt::format("'{}'", c));
  }
  void end() {
    skip_space();
    if (pos_ != text_.size()) expected("the end of the expression");
  }

  /// Nodes are counted so that a long chain (`1 + 1 + …`) cannot build a tree too deep to
  /// print or evaluate.
  SizeExpr node(Kind k, SizeExpr a, SizeExpr b) {
    if (++nodes_ > kMaxNodes) fail(fmt::format("more than {} operations", kMaxNodes));
    SizeExpr e;
    e.kind = k;
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return e;
  }

  void enter(int depth) const {
    if (depth > kMaxDepth) fail(fmt::format("nested deeper than {} levels", kMaxDepth));
  }

  /// `depth` counts the parentheses and calls around the expression.
  SizeExpr sum(int depth) {
    enter(depth);
    SizeExpr e = product(depth);
    while (true) {
      if (accept('+')) {
        e = node(Kind::Add, std::move(e), product(depth));
      } else if (accept('-')) {
        e = node(Kind::Sub, std::move(e), product(depth));
      } else {
        return e;
      }
    }
  }

  SizeExpr product(int depth) {
    SizeExpr e = primary(depth);
    while (true) {
      if (accept('*')) {
        e = node(Kind::Mul, std::move(e), primary(depth));
      } else if (accept('/')) {
        e = node(Kind::Div, std::move(e), primary(depth));
      } else {
        return e;
      }
    }
  }

  SizeExpr primary(int depth) {
    skip_space();
    if (accept('(')) {
      SizeExpr e = sum(depth + 1);
      expect(')');
      return e;
    }
    const std::size_t start = pos_;
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      SizeExpr e;
      const std::string_view digits = text_.substr(start, pos_ - start);
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), e.value);
      if (ec != std::errc() || end != digits.data() + digits.size()) {
        pos_ = start;
        expected("an integer below 2^63");
      }
      return e;
    }
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    const std::string_view word = text_.substr(start, pos_ - start);
    if (word.empty()) expected("a number, a constexpr name, groups.x|y|z, tpg or a call");
    if (word == "ceil_div" || word == "min" || word == "max") {
      const Kind k = word == "ceil_div" ? Kind::CeilDiv : word == "min" ? Kind::Min : Kind::Max;
      expect('(');
      SizeExpr a = sum(depth + 1);
      expect(',');
      SizeExpr b = sum(depth + 1);
      expect(')');
      return node(k, std::move(a), std::move(b));
    }
    SizeExpr e;
    if (word == "tpg") {
      e.kind = Kind::ThreadsPerGroup;
    } else if (word.starts_with("groups")) {
      const std::string_view axis = word.substr(6);
      if (axis.size() != 2 || axis[0] != '.' || kAxes.find(axis[1]) == std::string_view::npos) {
        pos_ = start;
        expected("groups.x, groups.y or groups.z");
      }
      e.kind = Kind::Groups;
      e.axis = static_cast<std::uint8_t>(kAxes.find(axis[1]));
    } else {
      if (word.find('.') != std::string_view::npos) {
        pos_ = start;
        expected("a constexpr name (letters, digits and _)");
      }
      e.kind = Kind::Constexpr;
      e.name = std::string(word);
    }
    return e;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int nodes_ = 0;
};

using Leaf = std::function<std::optional<std::int64_t>(const SizeExpr&)>;

SizeValue fail_value(std::string why) { return {0, std::move(why)}; }

SizeValue apply(const SizeExpr& e, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  // The expression's text only for a failure: evaluation runs at every guarded launch.
  const auto fail = [&e](const char* why) { return fail_value(print_size_expr(e) + why); };
  switch (e.kind) {
    case Kind::Add:
      if (__builtin_add_overflow(a, b, &r)) return fail(" overflows 64 bits");
      return {r, {}};
    case Kind::Sub:
      if (__builtin_sub_overflow(a, b, &r)) return fail(" overflows 64 bits");
      return {r, {}};
    case Kind::Mul:
      if (__builtin_mul_overflow(a, b, &r)) return fail(" overflows 64 bits");
      return {r, {}};
    case Kind::Div:
    case Kind::CeilDiv: {
      if (b == 0) return fail(" divides by zero");
      if (b == -1 && a == INT64_MIN) return fail(" overflows 64 bits");
      std::int64_t q = a / b;
      if (e.kind == Kind::CeilDiv && a % b != 0 && ((a < 0) == (b < 0))) ++q;
      return {q, {}};
    }
    case Kind::Min:
      return {std::min(a, b), {}};
    case Kind::Max:
      return {std::max(a, b), {}};
    case Kind::Literal:
    case Kind::Constexpr:
    case Kind::Groups:
    case Kind::ThreadsPerGroup:
      break;
  }
  IRON_INTERNAL_ERROR("a size expression leaf applied as an operator");
}

SizeValue evaluate(const SizeExpr& e, const Leaf& leaf) {
  if (e.kind == Kind::Literal) return {e.value, {}};
  if (e.is_leaf()) {
    const auto v = leaf(e);
    if (!v) return fail_value(fmt::format("'{}' has no value", leaf_text(e)));
    return {*v, {}};
  }
  SizeValue a = evaluate(e.args[0], leaf);
  if (!a.ok()) return a;
  SizeValue b = evaluate(e.args[1], leaf);
  if (!b.ok()) return b;
  return apply(e, a.value, b.value);
}

}  // namespace

std::string print_size_expr(const SizeExpr& e) { return print_size_expr(e, leaf_text); }

std::string print_size_expr(const SizeExpr& e,
                            const std::function<std::string(const SizeExpr&)>& leaf) {
  std::string out;
  print(e, leaf, out);
  return out;
}

std::string print_size_dims(const std::vector<SizeExpr>& dims) {
  std::string out = "[";
  for (const SizeExpr& d : dims) out += (out.size() > 1 ? ", " : "") + print_size_expr(d);
  return out + "]";
}

SizeExpr parse_size_expr(std::string_view text) { return ExprParser(text).whole(); }

std::vector<SizeExpr> parse_size_dims(std::string_view text) { return ExprParser(text).dims(); }

SizeValue evaluate_size_expr(const SizeExpr& e, const Leaf& leaf) { return evaluate(e, leaf); }

void for_each_leaf(const SizeExpr& e, const std::function<void(const SizeExpr&)>& fn) {
  if (e.is_leaf()) {
    fn(e);
    return;
  }
  for (const SizeExpr& a : e.args) for_each_leaf(a, fn);
}

SizeExpr product_of(const std::vector<SizeExpr>& dims) {
  if (dims.empty()) {
    SizeExpr one;
    one.value = 1;
    return one;
  }
  SizeExpr e = dims[0];
  for (std::size_t i = 1; i < dims.size(); ++i) {
    SizeExpr m;
    m.kind = Kind::Mul;
    m.args = {std::move(e), dims[i]};
    e = std::move(m);
  }
  return e;
}

}  // namespace iron::ir
