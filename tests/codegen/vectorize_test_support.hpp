/// What the vectorize tests share: a reduction kernel around a body, and checks that the pass
/// turns one IR text into another (verifying both, and that a second run changes nothing).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "iron/codegen/passes/vectorize.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"

namespace iron::vectorize_support {

using codegen::TargetProfile;

/// A reduction kernel with `values` values around `body`. Parameters: inputs x, w (f32), xh, wh
/// (f16), xb (bf16); outputs out (f32), outh (f16), outb (bf16), outu (u32); constexpr n, m
/// (u32); shared s (f32[64]).
inline std::string kernel_with(std::string_view body, int values,
                               std::string_view header_lines = "") {
  return std::string(R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param in w: f32
  param in xh: f16
  param in wh: f16
  param in xb: bf16
  param out out: f32
  param out outh: f16
  param out outb: bf16
  param out outu: u32
  param constexpr n: u32
  param constexpr m: u32
  shared s: f32[64]
  rule multiple_of 32
)") + std::string(header_lines) +
         "  values " + std::to_string(values) + "\n{\n" + std::string(body) + "}\n";
}

inline std::string text_of(const ir::Kernel& kernel) {
  return ir::print_kernel(kernel, {.locations = false});
}

inline std::string problems_of(const ir::Kernel& kernel) {
  std::string text;
  for (const std::string& p : ir::verify(kernel)) text += p + "\n";
  return text;
}

/// Parses `text` (which must verify), vectorizes it, checks the verifier and that a second run
/// changes nothing, and returns the printed result.
inline std::string vectorized(std::string_view text, const TargetProfile& target = {}) {
  ir::Kernel kernel = ir::parse_kernel(text);
  EXPECT_EQ(problems_of(kernel), "") << "the input does not verify:\n" << text;
  codegen::vectorize(kernel, target);
  EXPECT_EQ(problems_of(kernel), "") << "after the pass:\n" << text_of(kernel);
  const std::string once = text_of(kernel);
  codegen::vectorize(kernel, target);
  EXPECT_EQ(text_of(kernel), once) << "a second run changed the kernel";
  return once;
}

inline void expect_vectorized(std::string_view body, int values, std::string_view want,
                              int values_after, const TargetProfile& target = {},
                              std::string_view header_lines = "") {
  EXPECT_EQ(vectorized(kernel_with(body, values, header_lines), target),
            text_of(ir::parse_kernel(kernel_with(want, values_after, header_lines))));
}

inline void expect_unchanged(std::string_view body, int values,
                             std::string_view header_lines = "") {
  expect_vectorized(body, values, body, values, {}, header_lines);
}

}  // namespace iron::vectorize_support
