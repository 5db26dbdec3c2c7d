/// The harness of the pass tests: IR text in, one pass (verified before and after, and run twice
/// to check that it is idempotent), IR text out in the printer's layout; and the kernel header
/// the value-level pass tests write their bodies into.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "iron/codegen/target.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"

namespace iron::pass_test {

using Pass = void (*)(ir::Kernel&, const codegen::TargetProfile&);

inline std::string text_of(const ir::Kernel& kernel) {
  return ir::print_kernel(kernel, {.locations = false});
}

/// `text` as the printer writes it (so expectations need not match its spacing).
inline std::string canonical(std::string_view text) { return text_of(ir::parse_kernel(text)); }

/// Everything the verifier says about `kernel`, one line each.
inline std::string problems_of(const ir::Kernel& kernel) {
  std::string problems;
  for (const std::string& p : ir::verify(kernel)) problems += p + "\n";
  return problems;
}

/// Parses `text` (which must verify), runs `pass` and checks that the result verifies.
inline ir::Kernel apply(Pass pass, std::string_view text,
                        const codegen::TargetProfile& target = {}) {
  ir::Kernel kernel = ir::parse_kernel(text);
  EXPECT_EQ(problems_of(kernel), "") << "the input does not verify:\n" << text;
  pass(kernel, target);
  EXPECT_EQ(problems_of(kernel), "") << "after the pass:\n" << text_of(kernel);
  return kernel;
}

/// The pass's output without locations; a second run must leave it as it is.
inline std::string run_pass(Pass pass, std::string_view text,
                            const codegen::TargetProfile& target = {}) {
  ir::Kernel kernel = apply(pass, text, target);
  const std::string once = text_of(kernel);
  pass(kernel, target);
  EXPECT_EQ(text_of(kernel), once) << "a second run changed the kernel";
  return once;
}

/// A kernel with `values` values around `body`. Parameters: inputs x (f32), xi (i32), xu (u32),
/// xh (f16); outputs out (f32), outi (i32), outu (u32), outh (f16), outb (bool); constexpr n
/// (u32); shared s (f32[64]). Reduction mode with groups of a multiple of 32 threads, so
/// collectives and barriers verify.
inline std::string kernel_with(std::string_view body, int values) {
  return std::string(R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param in xi: i32
  param in xu: u32
  param in xh: f16
  param out out: f32
  param out outi: i32
  param out outu: u32
  param out outh: f16
  param out outb: bool
  param constexpr n: u32
  shared s: f32[64]
  rule multiple_of 32
  values )") +
         std::to_string(values) + "\n{\n" + std::string(body) + "}\n";
}

/// Runs `pass` over the kernel of `body` and expects the kernel of `want`.
inline void expect_pass(Pass pass, std::string_view body, int values, std::string_view want,
                        int values_after) {
  EXPECT_EQ(run_pass(pass, kernel_with(body, values)), canonical(kernel_with(want, values_after)));
}

/// Runs `pass` over the kernel of `body` and expects it unchanged.
inline void expect_unchanged(Pass pass, std::string_view body, int values) {
  expect_pass(pass, body, values, body, values);
}

}  // namespace iron::pass_test
