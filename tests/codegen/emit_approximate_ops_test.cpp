/// The approximate ops in the emitters: CUDA calls one PTX instruction each through a prelude
/// helper, MSL Metal's fast exp2 and a reciprocal helper; an f16 or bf16 operand is widened to
/// f32 and the result rounded once, as for every float function.
#include <gtest/gtest.h>

#include <string>

#include "emit_test_helpers.hpp"

namespace iron::emit_test {
namespace {

constexpr const char* kApproximations = R"(kernel approx_k dtype=f32 mode=elementwise
  param in x: bf16
  param out y: bf16
  values 4
{
  %0 = builtin global_id.x : u32
  %1 = load x[%0] : bf16
  %2 = exp2.approx %1 : bf16
  %3 = recip.approx %2 : bf16
  store y[%0], %3 : bf16
}
)";

TEST(EmitApproximateOps, CudaCallsOnePtxInstructionEach) {
  const std::string source = cuda(kApproximations);
  EXPECT_EQ(body_of(source), R"(  const unsigned int v0 = blockIdx.x * blockDim.x + threadIdx.x;
  const iron_bf16 v1 = x[v0];
  const iron_bf16 v2 = iron_f32_to_bf16(iron_exp2_approx(iron_to_f32(v1)));
  const iron_bf16 v3 = iron_f32_to_bf16(iron_recip_approx(iron_to_f32(v2)));
  y[v0] = v3;
)");
  EXPECT_NE(source.find(R"(asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));)"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find(R"(asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));)"),
            std::string::npos)
      << source;
}

TEST(EmitApproximateOps, MslCallsFastExp2AndTheReciprocalHelper) {
  const std::string source = msl(kApproximations);
  EXPECT_EQ(body_of(source), R"(  const uint v0 = iron_gid.x * iron_tpg.x + iron_tid.x;
  const bfloat v1 = x[v0];
  const bfloat v2 = bfloat(fast::exp2(float(v1)));
  const bfloat v3 = bfloat(iron_recip_approx(float(v2)));
  y[v0] = v3;
)");
  EXPECT_NE(source.find("\nfloat iron_recip_approx(float x) {"), std::string::npos) << source;
}

}  // namespace
}  // namespace iron::emit_test
