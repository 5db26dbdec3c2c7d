/// The call site of a DSL operation. A portable stand-in for std::source_location, built on the
/// __builtin_FILE/__builtin_LINE intrinsics that GCC and every Clang used by the tools support.
#pragma once

namespace iron {

class SourceLocation {
 public:
  /// As a default argument, captures the caller's file and line.
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          unsigned line = __builtin_LINE()) noexcept {
    return {file, line};
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr unsigned line() const noexcept { return line_; }

 private:
  constexpr SourceLocation(const char* file, unsigned line) : file_(file), line_(line) {}
  const char* file_;
  unsigned line_;
};

}  // namespace iron
