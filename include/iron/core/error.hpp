/// Errors: `Error` for the user's mistakes (bad kernel, bad input, bad dispatch), always with a
/// message that names what and where; `internal_error` for Iron's own bugs.
#pragma once

#include <stdexcept>
#include <string>

#include "iron/core/ir.hpp"

namespace iron {

/// A mistake the user can fix. The message is complete and printable as is.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A kernel could not be traced (DSL misuse).
class TraceError : public Error {
 public:
  using Error::Error;
};

/// The IR is malformed (verifier or parser finding).
class IrError : public Error {
 public:
  using Error::Error;
};

/// A dispatch broke the kernel's contract or the device's limits; nothing was launched.
class DispatchError : public Error {
 public:
  using Error::Error;
};

/// "file:line", or "<unknown location>".
std::string format_loc(const ir::SourceLoc& loc);

/// Iron's own invariant broke; reports and aborts the current operation.
[[noreturn]] void internal_error(const std::string& what, const char* file, int line);

#define IRON_INTERNAL_ASSERT(cond, what)                             \
  do {                                                               \
    if (!(cond)) ::iron::internal_error((what), __FILE__, __LINE__); \
  } while (0)

}  // namespace iron
