/// Helpers of the passes2 tests: IR text in, one pass, verified text out, hand-made targets.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "iron/codegen/target.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"

namespace iron::passes2_test {

using Pass = void (*)(ir::Kernel&, const codegen::TargetProfile&);

inline std::string text_of(const ir::Kernel& kernel) {
  return ir::print_kernel(kernel, {.locations = false});
}

/// Parses `text` (which must verify), runs `pass` and checks that the result verifies.
inline ir::Kernel apply(Pass pass, std::string_view text, const codegen::TargetProfile& target) {
  ir::Kernel kernel = ir::parse_kernel(text);
  EXPECT_TRUE(ir::verify(kernel).empty()) << "the input does not verify:\n" << text;
  pass(kernel, target);
  std::string problems;
  for (const std::string& p : ir::verify(kernel)) problems += p + "\n";
  EXPECT_EQ(problems, "") << "after the pass:\n" << text_of(kernel);
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

/// CUDA sm_90 as the profile describes it: every type native.
inline codegen::TargetProfile native_target() {
  codegen::TargetProfile t;
  t.name = "sm_90";
  t.cuda_sm = 90;
  return t;
}

/// A device that has f16 and bf16 storage but computes in f32 only.
inline codegen::TargetProfile widening_target() {
  codegen::TargetProfile t;
  t.name = "test_f32_only";
  t.cuda_sm = 70;
  t.native_f16_arithmetic = false;
  t.native_bf16_arithmetic = false;
  return t;
}

/// Metal 3.0: native f16, no bfloat type at all.
inline codegen::TargetProfile metal30_target() {
  codegen::TargetProfile t;
  t.kind = codegen::TargetKind::Msl;
  t.name = "metal3.0";
  t.metal_version = 30;
  t.native_bf16_arithmetic = false;
  t.has_bf16_type = false;
  t.max_shared_bytes = 32 * 1024;
  return t;
}

/// Metal 3.1: bfloat exists and computes natively.
inline codegen::TargetProfile metal31_target() {
  codegen::TargetProfile t = metal30_target();
  t.name = "metal3.1";
  t.metal_version = 31;
  t.native_bf16_arithmetic = true;
  t.has_bf16_type = true;
  return t;
}

}  // namespace iron::passes2_test
