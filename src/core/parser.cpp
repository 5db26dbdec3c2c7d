/// Parses the text form of Iron IR written by print_kernel (grammar in docs/compiler.md).
#include "iron/core/parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <optional>

#include "iron/core/error.hpp"

namespace iron::ir {
namespace {

[[noreturn]] void fail(int line, std::string_view what) {
  throw IrError(fmt::format("line {}: {}", line, what));
}

struct Token {
  enum class Kind { Word, Value, Shared, Punct };
  Kind kind;
  std::string_view text;  ///< without the `%` or `@` sigil
};

/// One statement: its text and tokens, and the location from its `; file:line` comment.
struct Line {
  int number;
  std::vector<Token> tokens;
  SourceLoc loc;
  std::string_view text;  ///< the statement without its location comment
};

constexpr std::string_view kPunct = "=:,[]{}/";

bool is_word_char(char c) {
  return !std::isspace(static_cast<unsigned char>(c)) && kPunct.find(c) == std::string_view::npos &&
         c != '%' && c != '@' && c != ';';
}

std::vector<Token> tokenize(std::string_view text, int number) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (kPunct.find(c) != std::string_view::npos) {
      tokens.push_back({Token::Kind::Punct, text.substr(i++, 1)});
    } else {
      Token::Kind kind = Token::Kind::Word;
      if (c == '%' || c == '@') {
        kind = c == '%' ? Token::Kind::Value : Token::Kind::Shared;
        ++i;
      }
      const std::size_t start = i;
      while (i < text.size() && is_word_char(text[i])) ++i;
      if (i == start) fail(number, fmt::format("expected a name or number after '{}'", c));
      tokens.push_back({kind, text.substr(start, i - start)});
    }
  }
  return tokens;
}

template <class Int>
std::optional<Int> to_integer(std::string_view text) {
  Int v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

/// `file:line`, split at the last colon.
SourceLoc parse_loc(std::string_view text, int number) {
  const std::size_t begin = text.find_first_not_of(" \t\r");
  const std::size_t end = text.find_last_not_of(" \t\r");
  text = begin == std::string_view::npos ? "" : text.substr(begin, end - begin + 1);
  const std::size_t colon = text.rfind(':');
  const auto line = colon == std::string_view::npos
                        ? std::nullopt
                        : to_integer<std::uint32_t>(text.substr(colon + 1));
  if (colon == 0 || !line || *line == 0) {
    fail(number, fmt::format("expected a location 'file:line' after ';', found '{}'", text));
  }
  return SourceLoc{std::string(text.substr(0, colon)), *line};
}

/// Splits the text into statements, dropping blank lines and `#` comment lines.
std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? "" : text.substr(nl + 1);
    ++number;
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    Line parsed{number, {}, {}, {}};
    const std::size_t semi = line.find(';');
    if (semi != std::string_view::npos) {
      parsed.loc = parse_loc(line.substr(semi + 1), number);
      line = line.substr(0, semi);
    }
    parsed.text = line;
    parsed.tokens = tokenize(line, number);
    if (parsed.tokens.empty()) fail(number, "expected a statement before the location comment");
    lines.push_back(std::move(parsed));
  }
  return lines;
}

std::string describe(const Token* t) {
  if (t == nullptr) return "end of line";
  switch (t->kind) {
    case Token::Kind::Value:
      return fmt::format("'%{}'", t->text);
    case Token::Kind::Shared:
      return fmt::format("'@{}'", t->text);
    default:
      return fmt::format("'{}'", t->text);
  }
}

/// Reads the tokens of one line left to right.
class Cursor {
 public:
  explicit Cursor(const Line& line) : line_(line) {}

  [[noreturn]] void fail_here(std::string_view what) const { fail(line_.number, what); }
  [[noreturn]] void expected(std::string_view what) const {
    fail_here(fmt::format("expected {}, found {}", what, describe(peek())));
  }

  const Token* peek() const { return pos_ < line_.tokens.size() ? &line_.tokens[pos_] : nullptr; }
  bool at(Token::Kind kind) const { return peek() != nullptr && peek()->kind == kind; }
  bool at_punct(char c) const { return at(Token::Kind::Punct) && peek()->text[0] == c; }

  bool accept_punct(char c) {
    if (!at_punct(c)) return false;
    ++pos_;
    return true;
  }
  void punct(char c, std::string_view context) {
    if (!accept_punct(c)) expected(fmt::format("'{}' {}", c, context));
  }
  std::string_view take(Token::Kind kind, std::string_view what) {
    if (!at(kind)) expected(what);
    return line_.tokens[pos_++].text;
  }
  std::string_view word(std::string_view what) { return take(Token::Kind::Word, what); }
  void keyword(std::string_view w) {
    if (!at(Token::Kind::Word) || peek()->text != w) expected(fmt::format("'{}'", w));
    ++pos_;
  }
  /// Takes keyword `w` when it comes next.
  bool accept_keyword(std::string_view w) {
    if (!at(Token::Kind::Word) || peek()->text != w) return false;
    ++pos_;
    return true;
  }
  ValueId value(std::string_view what) {
    const std::string_view text = take(Token::Kind::Value, what);
    const auto id = to_integer<ValueId>(text);
    if (!id) fail_here(fmt::format("bad value id '%{}'", text));
    return *id;
  }
  template <class Int>
  Int integer(std::string_view what) {
    const std::string_view text = word(what);
    const auto v = to_integer<Int>(text);
    if (!v) fail_here(fmt::format("expected {}, found '{}'", what, text));
    return *v;
  }
  DType dtype() {
    const std::string_view text = word("a type");
    const auto t = parse_dtype(text);
    if (!t) fail_here(fmt::format("unknown type '{}'", text));
    return *t;
  }
  /// ` : type`
  DType type_suffix() {
    punct(':', "before the type");
    return dtype();
  }
  /// ` : type` of an op, which may be a vector type `f16x8`: sets op.type and op.lanes.
  void op_type_suffix(Op& op) {
    punct(':', "before the type");
    const std::string_view text = word("a type");
    const std::size_t x = text.find('x');
    const std::string_view element = text.substr(0, x);
    const auto t = parse_dtype(element);
    if (!t) fail_here(fmt::format("unknown type '{}'", text));
    op.type = *t;
    if (x == std::string_view::npos) return;
    const auto lanes = to_integer<std::uint8_t>(text.substr(x + 1));
    if (!lanes || *lanes < 2) {
      fail_here(
          fmt::format("bad vector type '{}' (expected {}xN with N lanes, N >= 2)", text, element));
    }
    op.lanes = *lanes;
  }
  void end() const {
    if (peek() != nullptr) fail_here(fmt::format("unexpected {} at end of line", describe(peek())));
  }

 private:
  const Line& line_;
  std::size_t pos_ = 0;
};

constexpr std::string_view kHeaderItems =
    "'param', 'shared', 'shared_bytes', 'dispatch', 'rule', 'occupancy', 'require', 'grid', "
    "'layout', 'tensor_map', 'values' or '{'";

class Parser {
 public:
  explicit Parser(std::string_view text)
      : lines_(split_lines(text)), last_line_(line_count(text)) {}

  Kernel run() {
    header();
    const Line& open = next("'{' opening the kernel body");
    if (!is_brace_line(open, {"{"})) Cursor(open).expected("'{' opening the kernel body");
    if (block(k_.body) != BlockEnd::Close) {
      fail(lines_[pos_ - 1].number, "'else' without 'if', or 'then' without 'pipeline'");
    }
    if (pos_ < lines_.size()) {
      fail(lines_[pos_].number, "unexpected text after the kernel's closing '}'");
    }
    return std::move(k_);
  }

 private:
  enum class BlockEnd { Close, CloseElse, CloseThen };

  static int line_count(std::string_view text) {
    const auto newlines = std::count(text.begin(), text.end(), '\n');
    return std::max(1, static_cast<int>(newlines) + (text.empty() || text.back() == '\n' ? 0 : 1));
  }

  const Line& next(std::string_view expected) {
    if (pos_ == lines_.size())
      fail(last_line_, fmt::format("expected {}, found end of input", expected));
    return lines_[pos_++];
  }

  /// Whether `line` is exactly the given punctuation and words (a brace line, no location).
  static bool is_brace_line(const Line& line, std::initializer_list<std::string_view> texts) {
    if (line.tokens.size() != texts.size()) return false;
    std::size_t i = 0;
    for (std::string_view t : texts) {
      if (line.tokens[i++].text != t) return false;
    }
    if (line.loc.known()) fail(line.number, "a line with only braces takes no location");
    return true;
  }

  static void no_loc(const Line& line) {
    if (line.loc.known()) fail(line.number, "this line takes no location");
  }

  void header() {
    const Line& line = next("'kernel'");
    Cursor c(line);
    c.keyword("kernel");
    k_.name = c.word("the kernel name");
    k_.loc = line.loc;
    c.keyword("dtype");
    c.punct('=', "after 'dtype'");
    k_.dtype = c.dtype();
    c.keyword("mode");
    c.punct('=', "after 'mode'");
    const std::string_view mode = c.word("a dispatch mode");
    if (!parse_dispatch_mode_name(mode, k_.dispatch.mode)) {
      c.fail_here(fmt::format("unknown dispatch mode '{}'", mode));
    }
    c.end();
    bool have_values = false;
    while (pos_ < lines_.size() && lines_[pos_].tokens[0].text != "{") {
      const Line& item = lines_[pos_++];
      Cursor ic(item);
      const std::string_view what = ic.word(kHeaderItems);
      // The contract's declarations carry the location of their line in the kernel's source.
      if (what == "grid") {
        grid_rule(item);
        continue;
      }
      if (what == "layout") {
        layout(item);
        continue;
      }
      if (what == "tensor_map") {
        tensor_map(item);
        continue;
      }
      if (what == "require") {
        constexpr_rule(item, ic);
        continue;
      }
      if (what == "dispatch") {
        k_.dispatch.loc = item.loc;
        ic.end();
        continue;
      }
      no_loc(item);
      if (what == "param") {
        param(ic);
      } else if (what == "shared") {
        shared(ic);
      } else if (what == "rule") {
        rule(ic);
      } else if (what == "occupancy") {
        k_.dispatch.occupancy = ic.integer<std::uint32_t>("the groups a multiprocessor holds");
      } else if (what == "shared_bytes") {
        k_.shared_bytes = ic.integer<std::uint32_t>("the shared memory size in bytes");
      } else if (what == "values") {
        if (have_values) ic.fail_here("'values' given twice");
        have_values = true;
        k_.num_values = ic.integer<std::uint32_t>("the number of values");
      } else {
        ic.fail_here(fmt::format("expected {}, found '{}'", kHeaderItems, what));
      }
      ic.end();
    }
  }

  /// The text of a header line after its keyword, without trailing blanks.
  static std::string_view after_keyword(const Line& line, std::string_view keyword) {
    std::string_view text = line.text.substr(line.text.find(keyword) + keyword.size());
    const std::size_t end = text.find_last_not_of(" \t\r");
    return text.substr(0, end == std::string_view::npos ? 0 : end + 1);
  }

  /// `text` without leading blanks.
  static std::string_view trimmed(std::string_view text) {
    const std::size_t begin = text.find_first_not_of(" \t");
    return begin == std::string_view::npos ? "" : text.substr(begin);
  }

  /// Runs `parse` on a contract expression, turning its errors into this line's.
  template <class F>
  static auto expression(const Line& line, F&& parse) {
    try {
      return parse();
    } catch (const IrError& e) {
      fail(line.number, e.what());
    }
  }

  /// `REL rest` at the start of `text` (after blanks): the relation, and `rest`.
  static GridRule::Relation relation(const Line& line, std::string_view& text) {
    const std::size_t begin = text.find_first_not_of(" \t");
    GridRule::Relation r{};
    if (begin == std::string_view::npos || !parse_relation_name(text.substr(begin, 2), r)) {
      fail(line.number,
           "expected '==', '<=' or '>=' after the grid axis, the tensor or the constexpr's name");
    }
    text = text.substr(begin + 2);
    return r;
  }

  /// `grid groups.AXIS ==|<=|>= EXPR`
  void grid_rule(const Line& line) {
    std::string_view text = after_keyword(line, "grid");
    const std::size_t begin = text.find_first_not_of(" \t");
    const std::string_view lhs = begin == std::string_view::npos ? "" : text.substr(begin, 8);
    constexpr std::string_view kAxes = "xyz";
    if (lhs.size() != 8 || !lhs.starts_with("groups.") ||
        kAxes.find(lhs[7]) == std::string_view::npos) {
      fail(line.number, "expected 'groups.x', 'groups.y' or 'groups.z' after 'grid'");
    }
    GridRule r;
    r.axis = static_cast<std::uint8_t>(kAxes.find(lhs[7]));
    text = text.substr(begin + 8);
    r.relation = relation(line, text);
    r.bound = expression(line, [&] { return parse_size_expr(trimmed(text)); });
    r.loc = line.loc;
    k_.dispatch.grid_rules.push_back(std::move(r));
  }

  /// `layout NAME ==|>= [DIM, …]`
  void layout(const Line& line) {
    Cursor c(line);
    c.keyword("layout");
    TensorLayout l;
    l.param = c.word("the tensor's name");
    std::string_view text = after_keyword(line, "layout");
    text = text.substr(text.find(l.param) + l.param.size());
    const GridRule::Relation r = relation(line, text);
    if (r == GridRule::Relation::AtMost) fail(line.number, "a layout is '==' or '>=', not '<='");
    l.exact = r == GridRule::Relation::Equal;
    l.dims = expression(line, [&] { return parse_size_dims(trimmed(text)); });
    l.loc = line.loc;
    k_.dispatch.layouts.push_back(std::move(l));
  }

  /// `tensor_map PARAM [base, height, width] box ROWS, COLS swizzle S`, an image map's followed by
  /// ` image [images, image_width] across W`
  void tensor_map(const Line& line) {
    Cursor c(line);
    c.keyword("tensor_map");
    TensorMap m;
    m.param = param_index(c, c.word("the tensor's name"));
    const std::string_view text = after_keyword(line, "tensor_map");
    const std::size_t open = text.find('[');
    const std::size_t close = text.find(']');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      fail(line.number, "expected '[base, height, width]' after the tensor's name");
    }
    const std::vector<SizeExpr> dims =
        expression(line, [&] { return parse_size_dims(text.substr(open, close - open + 1)); });
    if (dims.size() != 3) fail(line.number, "a tensor map has a base, a height and a width");
    m.base = dims[0];
    m.height = dims[1];
    m.width = dims[2];
    std::string rest(text.substr(close + 1));
    const std::size_t image = rest.find(" image ");
    if (image != std::string::npos) {
      image_map(line, rest.substr(image), m);
      rest.resize(image);
    }
    unsigned rows = 0;
    unsigned cols = 0;
    unsigned swizzle = 0;
    char end = 0;
    if (std::sscanf(rest.c_str(), " box %u , %u swizzle %u %c", &rows, &cols, &swizzle, &end) !=
        3) {
      fail(line.number, "expected 'box ROWS, COLS swizzle S' after the dims");
    }
    m.box_rows = rows;
    m.box_cols = cols;
    m.swizzle = swizzle;
    k_.tensor_maps.push_back(std::move(m));
  }

  /// An image map's ` image [images, image_width] across W`.
  static void image_map(const Line& line, const std::string& text, TensorMap& m) {
    const std::size_t open = text.find('[');
    const std::size_t close = text.find(']');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      fail(line.number, "expected 'image [images, image_width] across W'");
    }
    const std::vector<SizeExpr> dims = expression(line, [&] {
      return parse_size_dims(std::string_view(text).substr(open, close - open + 1));
    });
    if (dims.size() != 2) fail(line.number, "an image map has images and an image width");
    m.images = dims[0];
    m.image_width = dims[1];
    unsigned width = 0;
    char end = 0;
    if (std::sscanf(text.c_str() + close + 1, " across %u %c", &width, &end) != 1 || width == 0) {
      fail(line.number, "expected 'across W' (the box's width in pixels) after the image's dims");
    }
    m.box_width = width;
  }

  /// `require NAME multiple_of M` or `require NAME <=|>= EXPR`
  void constexpr_rule(const Line& line, Cursor& c) {
    ConstexprRule r;
    r.constexpr_name = c.word("the constexpr's name");
    std::string_view text = after_keyword(line, "require");
    text = text.substr(text.find(r.constexpr_name) + r.constexpr_name.size());
    if (!trimmed(text).starts_with("multiple_of")) {
      ConstexprBound b{r.constexpr_name, relation(line, text), {}, line.loc};
      if (b.relation == GridRule::Relation::Equal) {
        fail(line.number, "a constexpr's range is '<=' or '>=', not '=='");
      }
      b.bound = expression(line, [&] { return parse_size_expr(trimmed(text)); });
      k_.dispatch.constexpr_bounds.push_back(std::move(b));
      return;
    }
    c.keyword("multiple_of");
    r.multiple = c.integer<std::int64_t>("the multiple");
    c.end();
    r.loc = line.loc;
    k_.dispatch.constexpr_rules.push_back(std::move(r));
  }

  void param(Cursor& c) {
    Param p;
    const std::string_view kind = c.word("a parameter kind (in, out, inout, constexpr)");
    if (!parse_param_kind_name(kind, p.kind)) {
      c.fail_here(fmt::format("unknown parameter kind '{}'", kind));
    }
    p.name = c.word("the parameter name");
    p.dtype = c.type_suffix();
    k_.params.push_back(std::move(p));
  }

  void shared(Cursor& c) {
    SharedAlloc s;
    s.name = c.word("the shared allocation name");
    s.dtype = c.type_suffix();
    c.punct('[', "before the element count");
    s.size = c.integer<std::uint32_t>("the element count");
    c.punct(']', "after the element count");
    if (c.at(Token::Kind::Word) && c.peek()->text == "ring") {
      c.keyword("ring");
      s.ring = true;
    }
    if (c.at(Token::Kind::Word) && c.peek()->text == "swizzle") {
      c.keyword("swizzle");
      s.swizzle = c.integer<std::uint32_t>("the swizzled row's elements");
    }
    if (c.at(Token::Kind::Word) && c.peek()->text == "overlays") {
      c.keyword("overlays");
      const std::string_view base = c.word("the overlaid allocation's name");
      for (std::size_t i = 0; i < k_.shared.size(); ++i) {
        if (k_.shared[i].name == base) s.overlays = static_cast<int>(i);
      }
      if (s.overlays < 0) {
        c.fail_here(fmt::format("'overlays {}' names no earlier shared allocation", base));
      }
    }
    if (c.at(Token::Kind::Word)) {
      c.keyword("offset");
      c.punct('=', "after 'offset'");
      s.offset = c.integer<std::uint32_t>("the offset in bytes");
    }
    k_.shared.push_back(std::move(s));
  }

  void rule(Cursor& c) {
    SizeRule r;
    const std::string_view kind = c.word("a group size rule");
    if (!parse_size_rule_name(kind, r.kind)) c.fail_here(fmt::format("unknown rule '{}'", kind));
    if (r.kind != SizeRule::Kind::PowerOfTwo) {
      const Token* t = c.peek();
      if (t != nullptr && t->kind == Token::Kind::Word &&
          (std::isdigit(static_cast<unsigned char>(t->text[0])) || t->text[0] == '-')) {
        r.value = c.integer<std::int64_t>("the rule's bound");
      } else {
        r.constexpr_name = c.word("the rule's bound (a number or a constexpr name)");
        if (c.accept_punct('/')) r.divisor = c.integer<std::int64_t>("the divisor");
      }
    }
    k_.dispatch.group_size_rules.push_back(std::move(r));
  }

  /// Parses ops up to the closing `}` (or `} else {`) of the block. Blocks nest at most
  /// kMaxBlockDepth deep, so that deeply nested text fails cleanly instead of overflowing the
  /// stack here and in every recursive walk of the IR.
  BlockEnd block(Block& b) {
    if (++depth_ > kMaxBlockDepth) {
      fail(lines_[pos_ - 1].number, fmt::format("blocks nest more than {} deep", kMaxBlockDepth));
    }
    while (true) {
      const Line& line = next("'}'");
      if (is_brace_line(line, {"}"})) {
        --depth_;
        return BlockEnd::Close;
      }
      if (is_brace_line(line, {"}", "else", "{"})) {
        --depth_;
        return BlockEnd::CloseElse;
      }
      if (is_brace_line(line, {"}", "then", "{"})) {
        --depth_;
        return BlockEnd::CloseThen;
      }
      b.ops.push_back(op(line));
    }
  }

  Op op(const Line& line) {
    Cursor c(line);
    Op op;
    op.loc = line.loc;
    if (c.at(Token::Kind::Value)) {
      op.result = c.value("a result value");
      c.punct('=', "after the result value");
    }
    const std::string_view name = c.word("an op name");
    if (!parse_op_name(name, op.kind)) c.fail_here(fmt::format("unknown op '{}'", name));
    if (op.kind == OpKind::For) {
      if (op.result != kNoValue) c.fail_here("write a loop as 'for %N = %a to %b step %c'");
      for_op(c, op, line.number);
      return op;
    }
    if (op.kind == OpKind::If) {
      if_op(c, op, line.number);
      return op;
    }
    if (op.kind == OpKind::Pipeline) {
      if (op.result != kNoValue) c.fail_here("a pipeline defines no value");
      pipeline_op(c, op, line.number);
      return op;
    }
    std::string_view literal;  // a constant's text, read once its type is known
    switch (op_attributes(op.kind)) {
      case OpAttributes::None:
        value_list(c, op);
        break;
      case OpAttributes::Literal:
        literal = c.word("a constant");
        break;
      case OpAttributes::Constexpr:
        op.param = param_index(c, c.word("a constexpr parameter name"));
        break;
      case OpAttributes::Builtin:
        builtin(c, op);
        break;
      case OpAttributes::Tensor:
        op.param = param_index(c, c.word("a tensor parameter name"));
        indexed_args(c, op);
        break;
      case OpAttributes::Shared:
        op.shared = shared_ref(c);
        indexed_args(c, op);
        break;
      case OpAttributes::TensorOrShared:
        if (c.at(Token::Kind::Shared)) {
          op.shared = shared_ref(c);
        } else {
          op.param = param_index(c, c.word("a tensor parameter or a shared allocation '@name'"));
        }
        indexed_args(c, op);
        break;
      case OpAttributes::Lane:
        op.args.push_back(c.value("the vector operand"));
        c.punct(',', "before the lane");
        op.ivalue = c.integer<std::int64_t>("the lane");
        break;
      case OpAttributes::Count:
        op.args.push_back(c.value("the initial value"));
        c.punct(',', "before the element count");
        op.ivalue = c.integer<std::int64_t>("the element count");
        break;
      case OpAttributes::Fragment:
        fragment_decl(c, op);
        break;
      case OpAttributes::FragmentMemory:
        fragment_access(c, op);
        break;
      case OpAttributes::FragmentSlot:
        fragment_slot(c, op);
        break;
      case OpAttributes::Reduction:
        row_reduction(c, op);
        break;
      case OpAttributes::AsyncCopy:
        op.shared = shared_ref(c);
        c.punct('[', "before the destination index");
        op.args.push_back(c.value("the destination index"));
        c.punct(']', "after the destination index");
        c.punct(',', "before the source tensor");
        op.param = param_index(c, c.word("the source tensor"));
        c.punct('[', "before the source index");
        op.args.push_back(c.value("the source index"));
        c.punct(']', "after the source index");
        c.punct(',', "before the copy's condition");
        op.args.push_back(c.value("the copy's condition"));
        break;
      case OpAttributes::Pending:
        op.ivalue = c.integer<std::int64_t>("the groups that may stay pending");
        break;
      case OpAttributes::Threads:
        op.ivalue = c.integer<std::int64_t>("the threads it joins");
        break;
      case OpAttributes::WarpgroupPending:
        op.args.push_back(c.value("the accumulator"));
        c.punct(',', "before the groups that may stay pending");
        op.ivalue = c.integer<std::int64_t>("the groups that may stay pending");
        break;
      case OpAttributes::WarpgroupOperands:
        warpgroup_operands(c, op);
        break;
      case OpAttributes::RegisterBudget: {
        const std::string_view way = c.word("inc or dec");
        if (way != "inc" && way != "dec") {
          c.fail_here(fmt::format("'{}': registers are raised ('inc') or lowered ('dec')", way));
        }
        op.axis = way == "inc" ? 1 : 0;
        op.ivalue = c.integer<std::int64_t>("the registers a thread");
        break;
      }
      case OpAttributes::Turn: {
        const std::string_view step = c.word("begin, wait or pass");
        if (step != "begin" && step != "wait" && step != "pass") {
          c.fail_here(fmt::format("'{}': a turn is 'begin', 'wait' or 'pass'", step));
        }
        op.axis = static_cast<std::uint8_t>(step == "begin"  ? TurnStep::Begin
                                            : step == "wait" ? TurnStep::Wait
                                                             : TurnStep::Pass);
        op.ivalue = c.integer<std::int64_t>("the warpgroups that take turns");
        break;
      }
      case OpAttributes::TileBox:
        tile_box(c, op);
        break;
      case OpAttributes::TensorBox:
        op.shared = shared_ref(c);
        op.args.push_back(bracketed(c, "the destination index"));
        c.punct(',', "before the tensor map");
        c.keyword("map");
        op.ivalue = c.integer<std::int64_t>("the tensor map");
        for (const char* what : {"the box's first row", "the box's first column"}) {
          c.punct(',', "before a coordinate");
          op.args.push_back(c.value(what));
        }
        c.punct(',', "before the mbarriers");
        op.shared_b = shared_ref(c);
        op.args.push_back(bracketed(c, "the mbarrier"));
        if (c.accept_punct(',')) {  // an image map's copy
          c.keyword("image");
          op.axis = 1;
          op.args.push_back(c.value("the image"));
          c.punct(',', "before the box's first pixel column");
          op.args.push_back(c.value("the box's first pixel column"));
        }
        break;
      case OpAttributes::Barrier:
        op.shared = shared_ref(c);
        op.args.push_back(bracketed(c, "the mbarrier"));
        if (op.kind == OpKind::MbarWait) {
          c.punct(',', "before the parity");
          op.args.push_back(c.value("the parity"));
        } else if (op.kind != OpKind::MbarInval && op.kind != OpKind::MbarArrive) {
          c.punct(',', "before the count");
          op.ivalue = c.integer<std::int64_t>("the count");
        }
        break;
      case OpAttributes::Feature: {
        const std::string_view name = c.word("a target feature (warpgroup_products)");
        TargetFeature feature{};
        if (!parse_target_feature_name(name, feature)) {
          c.fail_here(
              fmt::format("unknown target feature '{}' (expected warpgroup_products)", name));
        }
        op.ivalue = static_cast<std::int64_t>(feature);
        break;
      }
      case OpAttributes::StageIndex: {
        const std::string_view axis = c.word("step or slot");
        if (axis != "step" && axis != "slot") {
          c.fail_here(fmt::format("expected step or slot, found '{}'", axis));
        }
        op.axis = axis == "slot" ? 1 : 0;
        break;
      }
      case OpAttributes::Stages:
        IRON_INTERNAL_ERROR("pipeline ops are parsed by pipeline_op");
    }
    if (op_has_type(op.kind)) c.op_type_suffix(op);
    if (op.kind == OpKind::Const) constant(c, op, literal);
    c.end();
    return op;
  }

  void for_op(Cursor& c, Op& op, int number) {
    op.result = c.value("the induction value");
    c.punct('=', "after the induction value");
    op.args.push_back(c.value("the loop start"));
    c.keyword("to");
    op.args.push_back(c.value("the loop end"));
    c.keyword("step");
    op.args.push_back(c.value("the loop step"));
    if (c.at(Token::Kind::Word) && c.peek()->text == "rolled") {
      c.keyword("rolled");
      op.ivalue = 1;
    }
    op.type = c.type_suffix();
    c.punct('{', "opening the loop body");
    c.end();
    op.blocks.resize(1);
    if (block(op.blocks[0]) != BlockEnd::Close) {
      fail(lines_[pos_ - 1].number,
           fmt::format("'else' or 'then' closing the loop opened on line {}", number));
    }
  }

  /// `pipeline %start to %end step %step stages N [lag L] : T {` load block `} then {` compute
  /// block `}`.
  void pipeline_op(Cursor& c, Op& op, int number) {
    op.args.push_back(c.value("the pipeline's start"));
    c.keyword("to");
    op.args.push_back(c.value("the pipeline's end"));
    c.keyword("step");
    op.args.push_back(c.value("the pipeline's step"));
    c.keyword("stages");
    op.ivalue = c.integer<std::int64_t>("the stages");
    if (c.accept_keyword("lag")) op.axis = c.integer<std::uint8_t>("the lag");
    if (c.accept_keyword("consumers")) op.consumers = c.integer<std::uint32_t>("the consumers");
    op.type = c.type_suffix();
    c.punct('{', "opening the load block");
    c.end();
    op.blocks.resize(2);
    if (block(op.blocks[0]) != BlockEnd::CloseThen || block(op.blocks[1]) != BlockEnd::Close) {
      fail(lines_[pos_ - 1].number,
           fmt::format("a pipeline (line {}) is 'pipeline … {{' load '}} then {{' compute '}}'",
                       number));
    }
  }

  void if_op(Cursor& c, Op& op, int number) {
    op.args.push_back(c.value("the condition"));
    c.punct('{', "opening the then-block");
    c.end();
    op.blocks.resize(2);
    const BlockEnd then_end = block(op.blocks[0]);
    if (then_end == BlockEnd::CloseThen ||
        (then_end == BlockEnd::CloseElse && block(op.blocks[1]) != BlockEnd::Close)) {
      fail(lines_[pos_ - 1].number,
           fmt::format("an 'if' (line {}) has one 'else' and no 'then'", number));
    }
  }

  static void constant(const Cursor& c, Op& op, std::string_view text) {
    if (is_float(op.type)) {
      const char* end = text.data() + text.size();
      auto [ptr, ec] = std::from_chars(text.data(), end, op.fvalue);
      if (ec != std::errc() || ptr != end)
        c.fail_here(fmt::format("bad float constant '{}'", text));
    } else {
      const auto v = to_integer<std::int64_t>(text);
      if (!v) c.fail_here(fmt::format("bad integer constant '{}'", text));
      op.ivalue = *v;
    }
  }

  static void builtin(Cursor& c, Op& op) {
    const std::string_view text = c.word("a builtin name");
    const std::size_t dot = text.find('.');
    const std::string_view name = text.substr(0, dot);
    if (!parse_builtin_name(name, op.builtin)) {
      c.fail_here(fmt::format("unknown builtin '{}'", name));
    }
    const bool has_axis = dot != std::string_view::npos;
    if (!builtin_has_axis(op.builtin)) {
      if (has_axis) c.fail_here(fmt::format("builtin {} takes no axis", name));
      return;
    }
    if (!has_axis) c.fail_here(fmt::format("builtin {} needs an axis (.x, .y or .z)", name));
    const std::string_view axis = text.substr(dot + 1);
    constexpr std::string_view kAxes = "xyz";
    if (axis.size() == 1 && kAxes.find(axis[0]) != std::string_view::npos) {
      op.axis = static_cast<std::uint8_t>(kAxes.find(axis[0]));
    } else if (const auto n = to_integer<std::uint8_t>(axis)) {
      op.axis = *n;
    } else {
      c.fail_here(fmt::format("bad axis '{}' (expected x, y or z)", axis));
    }
  }

  /// `%init, ROLE, ROWS, COLS`.
  static void fragment_decl(Cursor& c, Op& op) {
    op.args.push_back(c.value("the initial value"));
    c.punct(',', "before the fragment role");
    const std::string_view role = c.word("a fragment role (a, b or acc)");
    const auto r = parse_fragment_role(role);
    if (!r) c.fail_here(fmt::format("unknown fragment role '{}' (expected a, b or acc)", role));
    op.fragment.role = *r;
    c.punct(',', "before the fragment's rows");
    op.fragment.rows = c.integer<std::uint32_t>("the fragment's rows");
    c.punct(',', "before the fragment's columns");
    op.fragment.cols = c.integer<std::uint32_t>("the fragment's columns");
  }

  /// `%fragment(, %value), SLOT` (the value: frag.set's stored value, frag.rowvalue's row
  /// vector), and for frag.coord `, row` or `, col`.
  static void fragment_slot(Cursor& c, Op& op) {
    op.args.push_back(c.value("the fragment"));
    c.punct(',', "before the slot or value");
    if (op.kind == OpKind::FragSet || op.kind == OpKind::FragRowValue) {
      op.args.push_back(
          c.value(op.kind == OpKind::FragSet ? "the stored value" : "the row vector"));
      c.punct(',', "before the slot");
    }
    op.ivalue = c.integer<std::int64_t>("the slot");
    if (op.kind != OpKind::FragCoord) return;
    c.punct(',', "before row or col");
    const std::string_view axis = c.word("row or col");
    if (axis != "row" && axis != "col") {
      c.fail_here(fmt::format("expected row or col, found '{}'", axis));
    }
    op.axis = axis == "col" ? 1 : 0;
  }

  /// `%destination, %source, max` or `, sum`.
  static void row_reduction(Cursor& c, Op& op) {
    op.args.push_back(c.value("the destination fragment"));
    c.punct(',', "before the source fragment");
    op.args.push_back(c.value("the source fragment"));
    c.punct(',', "before max or sum");
    const std::string_view name = c.word("max or sum");
    const auto r = parse_row_reduction(name);
    if (!r) c.fail_here(fmt::format("unknown row reduction '{}' (expected max or sum)", name));
    op.ivalue = static_cast<std::int64_t>(*r);
  }

  /// `TARGET[%offset], %fragment, %stride, LAYOUT`.
  void fragment_access(Cursor& c, Op& op) const {
    if (c.at(Token::Kind::Shared)) {
      op.shared = shared_ref(c);
    } else {
      op.param = param_index(c, c.word("a tensor parameter or a shared allocation '@name'"));
    }
    c.punct('[', "before the offset");
    op.args.push_back(c.value("the offset"));
    c.punct(']', "after the offset");
    c.punct(',', "before the fragment");
    op.args.push_back(c.value("the fragment"));
    c.punct(',', "before the stride");
    op.args.push_back(c.value("the stride"));
    c.punct(',', "before the layout");
    const std::string_view layout = c.word("a layout (row or col)");
    const auto l = parse_matrix_layout(layout);
    if (!l) c.fail_here(fmt::format("unknown layout '{}' (expected row or col)", layout));
    op.layout = *l;
    if (c.at_punct(',')) {  // a frag.store's column window: `, cols FIRST COUNT`
      c.punct(',', "before the column window");
      c.keyword("cols");
      const auto first = c.integer<std::uint32_t>("the window's first column");
      const auto count = c.integer<std::uint32_t>("the window's columns");
      op.ivalue = fragment_window(first, count);
    }
  }

  /// `[%value]`.
  static ValueId bracketed(Cursor& c, std::string_view what) {
    c.punct('[', "before the index");
    const ValueId v = c.value(what);
    c.punct(']', "after the index");
    return v;
  }

  /// copy.tile: `@dst[%at], tensor[%base], %height, %width, %row0, %col0, box ROWS, COLS`.
  void tile_box(Cursor& c, Op& op) const {
    op.shared = shared_ref(c);
    op.args.push_back(bracketed(c, "the destination index"));
    c.punct(',', "before the source tensor");
    op.param = param_index(c, c.word("the source tensor"));
    op.args.push_back(bracketed(c, "the matrix's first element"));
    for (const char* what :
         {"the height", "the width", "the box's first row", "the box's first column"}) {
      c.punct(',', "before an operand");
      op.args.push_back(c.value(what));
    }
    c.punct(',', "before the box");
    c.keyword("box");
    op.fragment.rows = c.integer<std::uint32_t>("the box's rows");
    c.punct(',', "before the box's columns");
    op.fragment.cols = c.integer<std::uint32_t>("the box's columns");
    if (!c.accept_punct(',')) return;
    c.keyword("image");
    for (const char* what : {"the images", "the image's width", "the image",
                             "the box's first "
                             "pixel column"}) {
      op.args.push_back(c.value(what));
      if (op.args.size() < 10) c.punct(',', "before an image operand");
    }
    c.punct(',', "before the box's width");
    c.keyword("across");
    op.ivalue = c.integer<std::int64_t>("the box's width in pixels");
  }

  /// wg.mma: `%d, @a[%offset], %stride, @b[%offset], %stride, row %panel|col, K`, or the
  /// register form `%d, %a, @b[%offset], %stride, row %panel|col, K`.
  void warpgroup_operands(Cursor& c, Op& op) const {
    op.args.push_back(c.value("the accumulator"));
    const auto operand = [&](int& alloc) {
      alloc = shared_ref(c);
      c.punct('[', "before the offset");
      op.args.push_back(c.value("the offset"));
      c.punct(']', "after the offset");
      c.punct(',', "before the stride");
      op.args.push_back(c.value("the stride"));
    };
    c.punct(',', "before A");
    if (c.at(Token::Kind::Value)) {
      op.args.push_back(c.value("the A fragment"));
    } else {
      operand(op.shared);
    }
    c.punct(',', "before B's allocation");
    operand(op.shared_b);
    c.punct(',', "before B's layout");
    const std::string_view layout = c.word("a layout (row or col)");
    const auto l = parse_matrix_layout(layout);
    if (!l) c.fail_here(fmt::format("unknown layout '{}' (expected row or col)", layout));
    op.layout = *l;
    if (op.layout == MatrixLayout::RowMajor) op.args.push_back(c.value("a row-major B's panels"));
    c.punct(',', "before K");
    op.ivalue = c.integer<std::int64_t>("K, the product's depth");
  }

  /// `[%index]` followed by `, %value...`.
  static void indexed_args(Cursor& c, Op& op) {
    c.punct('[', "before the index");
    op.args.push_back(c.value("the index value"));
    c.punct(']', "after the index");
    while (c.accept_punct(',')) op.args.push_back(c.value("an operand value"));
  }

  static void value_list(Cursor& c, Op& op) {
    if (!c.at(Token::Kind::Value)) return;
    do {
      op.args.push_back(c.value("an operand value"));
    } while (c.accept_punct(','));
  }

  int param_index(const Cursor& c, std::string_view name) const {
    const int index = k_.find_param(name);
    if (index < 0) c.fail_here(fmt::format("unknown parameter '{}'", name));
    return index;
  }

  /// `@name`: a shared allocation's index.
  int shared_ref(Cursor& c) const {
    const std::string_view name = c.take(Token::Kind::Shared, "a shared allocation '@name'");
    for (std::size_t i = 0; i < k_.shared.size(); ++i) {
      if (k_.shared[i].name == name) return static_cast<int>(i);
    }
    c.fail_here(fmt::format("unknown shared allocation '@{}'", name));
  }

  std::vector<Line> lines_;
  int last_line_;
  std::size_t pos_ = 0;
  int depth_ = 0;  ///< blocks open around the line being parsed
  Kernel k_;
};

}  // namespace

Kernel parse_kernel(std::string_view text) { return Parser(text).run(); }

}  // namespace iron::ir
