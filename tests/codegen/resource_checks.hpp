/// The tests' check on ptxas's resource report of a compiled kernel: no local memory (stack
/// frame, spills) and no ptxas warning, shared by the library check and the tests that prove it
/// can fail.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

#include "iron/runtime/ptxas_report.hpp"

namespace iron::checks_test {

/// "" when ptxas reports the kernel `symbol` without local memory and the compile without a
/// warning; else one line per problem, with every number. A report that lacks the kernel fails
/// too, so that a change in ptxas's log cannot make the check pass unread.
inline std::string resource_problems(const runtime::ResourceReport& report,
                                     const std::string& symbol) {
  const runtime::FunctionResources* kernel = report.find(symbol);
  if (kernel == nullptr || !kernel->entry || kernel->registers == 0) {
    return fmt::format("ptxas's report names no kernel {} with its registers", symbol);
  }
  return fmt::format("{}", fmt::join(report.problems(), "\n"));
}

}  // namespace iron::checks_test
