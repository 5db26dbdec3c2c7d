// `continue` directly inside an IRON_IF or IRON_ELSE body cannot be caught by the tracer: the
// macro is a one-pass C++ loop, and a `continue` reaches the same place as the body's normal
// end, so the two are indistinguishable at trace time (and C++ offers a prefix macro no way to
// reject the keyword). This check reads the library's sources instead: no `continue` may have
// an IRON_IF or IRON_ELSE body as its nearest enclosing loop-or-branch. The scanner itself is
// tested on snippets first.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// The source without comments, string and character literals (newlines kept for lines).
std::string code_only(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
      out += '\n';
    } else if (s.compare(i, 2, "/*") == 0) {
      for (i += 2; i + 1 < s.size() && s.compare(i, 2, "*/") != 0; ++i)
        out += s[i] == '\n' ? "\n" : "";
      ++i;
    } else if (s[i] == '"' || s[i] == '\'') {
      const char quote = s[i];
      for (++i; i < s.size() && s[i] != quote; ++i) i += s[i] == '\\';
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Token {
  std::string text;
  int line;
};

std::vector<Token> tokens_of(const std::string& code) {
  std::vector<Token> tokens;
  int line = 1;
  for (std::size_t i = 0; i < code.size();) {
    const char c = code[i];
    if (c == '\n') ++line;
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < code.size() &&
             (std::isalnum(static_cast<unsigned char>(code[j])) || code[j] == '_'))
        ++j;
      tokens.push_back({code.substr(i, j - i), line});
      i = j;
    } else {
      if (!std::isspace(static_cast<unsigned char>(c))) tokens.push_back({std::string(1, c), line});
      ++i;
    }
  }
  return tokens;
}

/// The lines of every `continue` whose nearest enclosing loop or IRON branch is an IRON branch.
std::vector<int> continues_leaving_a_branch(const std::string& source) {
  enum class Kind { Loop, Branch, Other, Function };
  struct Scope {
    Kind kind;
    bool braced;
  };
  const std::vector<Token> t = tokens_of(code_only(source));
  std::vector<Scope> scopes;
  std::vector<int> found;
  bool has_pending = false;
  Kind pending = Kind::Other;
  const auto skip_parens = [&](std::size_t& i) {  // i at '(' → at its matching ')'
    for (int depth = 0; i < t.size(); ++i) {
      depth += t[i].text == "(" ? 1 : t[i].text == ")" ? -1 : 0;
      if (depth == 0) return;
    }
  };
  const auto open_body = [&](Kind kind) {
    has_pending = true;
    pending = kind;
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string& w = t[i].text;
    const bool parens_follow = i + 1 < t.size() && t[i + 1].text == "(";
    if ((w == "for" || w == "while" || w == "IRON_IF" || w == "if" || w == "switch") &&
        parens_follow) {
      ++i;
      skip_parens(i);
      // A do-while's `while (…);` has no body.
      if (w == "while" && i + 1 < t.size() && t[i + 1].text == ";") continue;
      open_body(w == "IRON_IF"                 ? Kind::Branch
                : (w == "for" || w == "while") ? Kind::Loop
                                               : Kind::Other);
    } else if (w == "do") {
      open_body(Kind::Loop);
    } else if (w == "IRON_ELSE") {
      open_body(Kind::Branch);
    } else if (w == "else") {
      open_body(Kind::Other);
    } else if (w == "{") {
      const bool after_signature = i > 0 && (t[i - 1].text == ")" || t[i - 1].text == "]");
      scopes.push_back({has_pending       ? pending
                        : after_signature ? Kind::Function
                                          : Kind::Other,
                        true});
      has_pending = false;
    } else if (w == "}") {
      while (!scopes.empty() && !scopes.back().braced) scopes.pop_back();
      if (!scopes.empty()) scopes.pop_back();
    } else {
      if (has_pending) {  // a body without braces: one statement, ended by the next `;`
        scopes.push_back({pending, false});
        has_pending = false;
      }
      if (w == "continue") {
        for (auto s = scopes.rbegin(); s != scopes.rend(); ++s) {
          if (s->kind == Kind::Branch) found.push_back(t[i].line);
          if (s->kind == Kind::Branch || s->kind == Kind::Loop || s->kind == Kind::Function) break;
        }
      }
      if (w == ";") {
        while (!scopes.empty() && !scopes.back().braced) scopes.pop_back();
      }
    }
  }
  return found;
}

TEST(DslContinueInBranch, ScannerFindsOnlyContinuesLeavingABranch) {
  const std::string source = R"(
    for (auto j : range(0u, n)) {
      IRON_IF(j < 3u) {
        continue;  // line 4: leaves the branch
      }
      IRON_ELSE continue;  // line 6
      IRON_IF(j > 9u) {
        for (int k = 0; k < 4; ++k) {
          if (k == 2) continue;  // continues the C++ loop
        }
        while (x) { continue; }
        do { continue; } while (y);
        auto f = [&] { for (;;) continue; };
      }
      if (flag) continue;  // a symbolic loop body: allowed
      /* continue; */ const char* s = "continue;";
    }
    IRON_IF(c) for (int k = 0; k < 2; ++k) continue;
    IRON_IF(c) { if (flag) { continue; } }  // line 19
  )";
  EXPECT_EQ(continues_leaving_a_branch(source), (std::vector<int>{4, 6, 19}));
}

TEST(DslContinueInBranch, NoLibraryKernelUsesContinueToLeaveABranch) {
  std::size_t files = 0;
  for (const char* dir : {"/kernels", "/include/iron", "/tests"}) {
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(std::string(IRON_SOURCE_DIR) + dir)) {
      const auto ext = entry.path().extension();
      if (ext != ".cpp" && ext != ".hpp") continue;
      if (entry.path().filename() == "continue_in_branch_test.cpp") continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      ++files;
      if (text.str().find("IRON_") == std::string::npos) continue;
      for (int line : continues_leaving_a_branch(text.str())) {
        ADD_FAILURE() << entry.path().string() << ":" << line
                      << ": `continue` leaves an IRON_IF/IRON_ELSE body; it would only end the "
                         "branch. Use IRON_ELSE or a Var<boolean> flag.";
      }
    }
  }
  EXPECT_GT(files, 50u);
}

}  // namespace
