/// Hand-made target profiles for the pass tests: what a pass does depends on what the target
/// computes natively.
#pragma once

#include "iron/codegen/target.hpp"

namespace iron::pass_test {

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

}  // namespace iron::pass_test
