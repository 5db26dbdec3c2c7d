/// The MSL check (clang against tools/msl_shim, not Apple's compiler): good MSL passes, broken
/// MSL fails with clang's diagnostics.
#include <gtest/gtest.h>

#include <string>

#include "support/checks.hpp"

namespace iron::checks_test {
namespace {

/// A kernel in the emitter's style, using each shim feature the emitter relies on.
constexpr const char* kGoodKernel = R"(#include <metal_stdlib>
using namespace metal;

kernel void iron_check_softmax_bf16(device const bfloat* inp [[buffer(0)]],
                                    device bfloat* out [[buffer(1)]],
                                    constant uint& n [[buffer(2)]],
                                    device atomic_uint* counter [[buffer(3)]],
                                    device atomic_float* total [[buffer(4)]],
                                    uint3 gid [[thread_position_in_grid]],
                                    uint3 tid [[thread_position_in_threadgroup]],
                                    uint lane [[thread_index_in_simdgroup]],
                                    uint sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float partial[32];
  const float v = float(inp[gid.x]);
  const half h = half(v) * 0.5h;
  const float m = simd_max(v);
  const float s = simd_sum(exp(v - m)) + simd_min(v);
  const float p = simd_prefix_exclusive_sum(s) + simd_prefix_inclusive_sum(s);
  const float q = simd_shuffle(p, 3) + simd_shuffle_xor(p, 1u) + simd_shuffle_up(p, 1u) +
                  simd_shuffle_down(p, 2u) + simd_broadcast(p, 0);
  if (lane == 0) {
    partial[sg] = q;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint i = tid.x; i < n; i += 32) {
    float r = partial[i % 32];
    r = fma(r, 2.0f, 1.0f) + rsqrt(r) + tanh(r) + pow(r, 2.0f) + atan2(r, 1.0f) + log(r);
    r = max(r, -INFINITY) + min(r, 1.0f) + floor(r) + ceil(r) + abs(r) + fabs(r) + sqrt(r);
    out[i] = bfloat(sin(r) + cos(r));
  }
  const uint previous = atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
  atomic_fetch_max_explicit(counter, previous, memory_order_relaxed);
  atomic_fetch_add_explicit(total, 1.0f, memory_order_relaxed);
  const uint bits = as_type<uint>(v) ^ as_type<ushort>(h);
  const float4 v4 = float4(v, v, 1.0f, float(bits));
  const half4 h4 = half4(v4);
  const float4 w = float4(h4) * 2.0f + v4;
  out[0] = bfloat(w.x + w.xy.y + float(h4[2]) + metal::precise::exp(1.0f));
  out[1] = as_type<bfloat>(as_type<ushort>(out[0]));
  out[2] = select(out[0], out[1], v > 0.0f);
  out[3] = isnan(v) ? numeric_limits<float>::infinity() : float(out[2]);
}
)";

/// kGoodKernel's header with `body` as the kernel's body.
std::string kernel_with_body(const std::string& body) {
  return "#include <metal_stdlib>\nusing namespace metal;\n\n"
         "kernel void iron_check_k_f32(device float* out [[buffer(0)]],\n"
         "                             device atomic_float* total [[buffer(1)]],\n"
         "                             uint gid [[thread_position_in_grid]]) {\n" +
         body + "\n}\n";
}

TEST(ChecksMsl, AcceptsAKernelInTheEmittersStyle) { EXPECT_EQ(checks::check_msl(kGoodKernel), ""); }

TEST(ChecksMsl, ReportsAnUndeclaredIdentifierWithItsLine) {
  const std::string diagnostics =
      checks::check_msl(kernel_with_body("  out[gid] = not_declared + 1.0f;"));
  EXPECT_NE(diagnostics.find("kernel.metal:7:"), std::string::npos) << diagnostics;
  EXPECT_NE(diagnostics.find("use of undeclared identifier 'not_declared'"), std::string::npos)
      << diagnostics;
}

TEST(ChecksMsl, ReportsTypeErrors) {
  // A pointer where a float belongs, a vector with too few components, a simd sum of a pointer.
  for (const char* body : {"  out[gid] = out;", "  const float4 v = float4(1.0f, 2.0f);",
                           "  out[gid] = simd_sum(out);"}) {
    EXPECT_NE(checks::check_msl(kernel_with_body(body)).find("error:"), std::string::npos) << body;
  }
}

TEST(ChecksMsl, ReportsWhatMetalLacks) {
  // atomic_float has no fetch_max, and as_type needs equal sizes.
  for (const char* body : {"  atomic_fetch_max_explicit(total, 1.0f, memory_order_relaxed);",
                           "  out[gid] = float(as_type<uint>(half(1.0f)));"}) {
    EXPECT_NE(checks::check_msl(kernel_with_body(body)).find("error:"), std::string::npos) << body;
  }
}

TEST(ChecksMsl, ReportsWarnings) {
  const std::string diagnostics =
      checks::check_msl(kernel_with_body("  float unused = 1.0f;\n  out[gid] = 0.0f;"));
  EXPECT_NE(diagnostics.find("unused variable 'unused'"), std::string::npos) << diagnostics;
}

}  // namespace
}  // namespace iron::checks_test
