/// Errors: `Error` and its kinds for the user's mistakes (bad command line or input, bad kernel,
/// bad dispatch), always with a message that names what and where; `InternalError`, thrown by
/// `internal_error`, for Iron's own bugs. The `iron` command maps each kind to its exit status.
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

/// The command line or an input file cannot be used (unknown name, bad value, unreadable file).
class UsageError : public Error {
 public:
  using Error::Error;
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

/// The compiler accepted a kernel but warned (ptxas: products serialized or fenced for want of
/// registers, a spill): Iron refuses the binary; a caller with another binary to fall back on may
/// catch it.
class CompileWarningError : public Error {
 public:
  using Error::Error;
};

/// A kernel needs more of a target than it has (threadgroup memory): it cannot be compiled for
/// that target, though it may be for others.
class TargetLimitError : public Error {
 public:
  using Error::Error;
};

/// Iron's own invariant broke: a bug in Iron, never the user's mistake. Not an `Error`, so that
/// no handler of user errors catches it by accident.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// "file:line", or "<unknown location>".
std::string format_loc(const ir::SourceLoc& loc);

/// Throws InternalError "internal error: WHAT (FILE:LINE)". Call it through IRON_INTERNAL_ASSERT
/// or IRON_INTERNAL_ERROR, which fill in the place.
[[noreturn]] void internal_error(const std::string& what, const char* file, int line);

/// Reports an internal error unless `cond` holds.
#define IRON_INTERNAL_ASSERT(cond, what)                             \
  do {                                                               \
    if (!(cond)) ::iron::internal_error((what), __FILE__, __LINE__); \
  } while (0)

/// Reports an internal error: a place Iron's own invariants make unreachable.
#define IRON_INTERNAL_ERROR(what) ::iron::internal_error((what), __FILE__, __LINE__)

}  // namespace iron
