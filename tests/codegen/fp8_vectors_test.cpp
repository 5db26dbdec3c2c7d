/// 8-bit float tensors in vectorized loops: CUDA takes the vectorizer's wide accesses of f8e4m3;
/// MSL, which has no vector of its one-byte float structs, keeps them scalar and compiles.
#include <gtest/gtest.h>

#include <string>

#include "iron/codegen/compile.hpp"
#include "iron/core/parser.hpp"
#include "support/checks.hpp"

namespace iron::codegen {
namespace {

// A grid-stride conversion of f32 into f8e4m3, which the vectorizer versions into 4-lane loops
// (16 bytes of f32 read, 4 of f8e4m3 written).
constexpr std::string_view kConvert = R"(kernel iron_check_to_f8 dtype=f32 mode=elementwise
  param in x: f32
  param out q: f8e4m3
  param constexpr n: u32
  values 8
{
  %0 = constexpr n : u32
  %1 = builtin group_size.x : u32
  %2 = builtin grid_groups.x : u32
  %3 = mul %2, %1 : u32
  %4 = builtin global_id.x : u32
  for %5 = %4 to %0 step %3 : u32 {
    %6 = load x[%5] : f32
    %7 = cast %6 : f8e4m3
    store q[%5], %7 : f8e4m3
  }
}
)";

TEST(Fp8Vectors, MslKeepsTheLoopScalarAndCompiles) {
  const CompiledKernel msl = compile_kernel(ir::parse_kernel(kConvert), TargetProfile::metal(31));
  EXPECT_EQ(checks::check_msl(msl.source), "") << msl.source;
}

TEST(Fp8Vectors, CudaStoresFourAtOnce) {
  const CompiledKernel cuda = compile_kernel(ir::parse_kernel(kConvert), TargetProfile::cuda(90));
  EXPECT_NE(cuda.source.find("*reinterpret_cast<iron_f8e4m3x4*>(q + "), std::string::npos)
      << cuda.source;
}

}  // namespace
}  // namespace iron::codegen
