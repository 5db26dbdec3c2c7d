/// Helpers of the emitter tests: IR parsed and laid out, emitted source, the parts compared.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <string_view>

#include "iron/codegen/emit.hpp"
#include "iron/codegen/passes/layout_shared_memory.hpp"
#include "iron/codegen/target.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/verifier.hpp"

namespace iron::emit_test {

/// `text` parsed (it must verify) with its shared memory laid out for `target`.
inline ir::Kernel lowered(std::string_view text, const codegen::TargetProfile& target) {
  ir::Kernel kernel = ir::parse_kernel(text);
  std::string problems;
  for (const std::string& p : ir::verify(kernel)) problems += p + "\n";
  EXPECT_EQ(problems, "") << "the test kernel does not verify:\n" << text;
  codegen::layout_shared_memory(kernel, target);
  return kernel;
}

/// The CUDA C++ emitted for `text` (sm_90).
inline std::string cuda(std::string_view text) {
  const codegen::TargetProfile target = codegen::TargetProfile::cuda(90);
  return codegen::emit_cuda(lowered(text, target), target);
}

/// The MSL emitted for `text` (Metal 3.1 unless given: 30, 31 or 32).
inline std::string msl(std::string_view text, int metal_version = 31) {
  const codegen::TargetProfile target = codegen::TargetProfile::metal(metal_version);
  return codegen::emit_msl(lowered(text, target), target);
}

/// A kernel that copies an f32 input parameter named `name` to its output `y`.
inline std::string with_input_named(std::string_view name) {
  const std::string input(name);
  return "kernel named dtype=f32 mode=elementwise\n  param in " + input +
         ": f32\n  param out y: f32\n  values 2\n{\n  %0 = builtin global_id.x : u32\n  %1 = "
         "load " +
         input + "[%0] : f32\n  store y[%0], %1 : f32\n}\n";
}

/// The message of what `emit` throws; empty when it throws nothing.
template <class Fn>
std::string thrown_by(Fn&& emit) {
  try {
    emit();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

/// The kernel function's statements: what follows its signature, without the closing brace.
inline std::string body_of(const std::string& source) {
  std::size_t start = source.find("__global__ void");
  if (start == std::string::npos) start = source.find("\nkernel void");
  start = source.find(") {\n", start);
  if (start == std::string::npos) return "(no kernel function in:\n" + source + ")";
  start += 4;
  return source.substr(start, source.rfind("}\n") - start);
}

/// Everything after the header comment and the includes: prelude, signature and body.
inline std::string after_includes(const std::string& source) {
  const std::size_t last_include = source.rfind("\n#include");
  const std::size_t metal = source.find("\nusing namespace metal;");
  // CUDA's f16/bf16 types stand where its includes would; they end with their f32 conversion.
  std::size_t halves = std::string::npos;
  for (const char* last : {"\n__device__ __forceinline__ iron_f16 iron_f32_to_f16",
                           "\n__device__ __forceinline__ iron_bf16 iron_f32_to_bf16"}) {
    const std::size_t at = source.rfind(last);
    if (at != std::string::npos && (halves == std::string::npos || at > halves)) halves = at;
  }
  std::size_t from = last_include + 1;
  if (metal != std::string::npos) from = metal + 1;
  if (halves != std::string::npos && (last_include == std::string::npos || halves > last_include)) {
    from = halves + 1;
  }
  return source.substr(source.find("\n\n", from) + 2);
}

}  // namespace iron::emit_test
