/// The f16/bf16 prelude text (see cuda_halves.hpp).
#include "cuda_halves.hpp"

#include <fmt/format.h>

namespace iron::codegen::cuda {
namespace {

/// One type: its struct, conversions and shuffles. `to_f32` and `from_f32` are the bodies of the
/// conversions, on `bits` and `f`.
std::string half_type(const char* name, const char* what, bool bfloat, const char* to_f32,
                      const char* from_f32) {
  return fmt::format(
      R"(// {1} as its bits. Arithmetic goes through f32 and rounds once: f32 carries more than
// twice the bits plus two, so that is the correctly rounded result the native instruction gives.
struct __align__(2) {0} {{
  static constexpr bool bfloat = {4};  // the tensor-core operand type it selects
  unsigned short bits;
  {0}() = default;
  __device__ explicit {0}(float f) {{ {3} }}
  __device__ explicit operator float() const {{ {2} }}
}};
__device__ __forceinline__ float iron_to_f32({0} h) {{ return static_cast<float>(h); }}
__device__ __forceinline__ {0} {0}_from_bits(unsigned short bits) {{
  {0} h;
  h.bits = bits;
  return h;
}}
__device__ __forceinline__ {0} operator+({0} a, {0} b) {{ return {0}(static_cast<float>(a) + static_cast<float>(b)); }}
__device__ __forceinline__ {0} operator-({0} a, {0} b) {{ return {0}(static_cast<float>(a) - static_cast<float>(b)); }}
__device__ __forceinline__ {0} operator*({0} a, {0} b) {{ return {0}(static_cast<float>(a) * static_cast<float>(b)); }}
__device__ __forceinline__ {0} operator/({0} a, {0} b) {{ return {0}(static_cast<float>(a) / static_cast<float>(b)); }}
__device__ __forceinline__ {0} operator-({0} a) {{ return {0}_from_bits(a.bits ^ 0x8000u); }}
__device__ __forceinline__ {0}& operator+=({0}& a, {0} b) {{ return a = a + b; }}
__device__ __forceinline__ {0}& operator-=({0}& a, {0} b) {{ return a = a - b; }}
__device__ __forceinline__ {0}& operator*=({0}& a, {0} b) {{ return a = a * b; }}
__device__ __forceinline__ {0}& operator/=({0}& a, {0} b) {{ return a = a / b; }}
__device__ __forceinline__ bool operator==({0} a, {0} b) {{ return static_cast<float>(a) == static_cast<float>(b); }}
__device__ __forceinline__ bool operator!=({0} a, {0} b) {{ return static_cast<float>(a) != static_cast<float>(b); }}
__device__ __forceinline__ bool operator<({0} a, {0} b) {{ return static_cast<float>(a) < static_cast<float>(b); }}
__device__ __forceinline__ bool operator<=({0} a, {0} b) {{ return static_cast<float>(a) <= static_cast<float>(b); }}
__device__ __forceinline__ bool operator>({0} a, {0} b) {{ return static_cast<float>(a) > static_cast<float>(b); }}
__device__ __forceinline__ bool operator>=({0} a, {0} b) {{ return static_cast<float>(a) >= static_cast<float>(b); }}
__device__ __forceinline__ {0} __shfl_sync(unsigned int mask, {0} v, int lane, int width = 32) {{
  return {0}_from_bits(static_cast<unsigned short>(__shfl_sync(mask, static_cast<unsigned int>(v.bits), lane, width)));
}}
__device__ __forceinline__ {0} __shfl_xor_sync(unsigned int mask, {0} v, int lane, int width = 32) {{
  return {0}_from_bits(static_cast<unsigned short>(__shfl_xor_sync(mask, static_cast<unsigned int>(v.bits), lane, width)));
}}
__device__ __forceinline__ {0} __shfl_up_sync(unsigned int mask, {0} v, unsigned int delta, int width = 32) {{
  return {0}_from_bits(static_cast<unsigned short>(__shfl_up_sync(mask, static_cast<unsigned int>(v.bits), delta, width)));
}}
__device__ __forceinline__ {0} __shfl_down_sync(unsigned int mask, {0} v, unsigned int delta, int width = 32) {{
  return {0}_from_bits(static_cast<unsigned short>(__shfl_down_sync(mask, static_cast<unsigned int>(v.bits), delta, width)));
}}
)",
      name, what, to_f32, from_f32, bfloat ? "true" : "false");
}

}  // namespace

std::string half_types_prelude(bool f16, bool bf16) {
  std::string text;
  if (f16) {
    text += half_type("iron_f16", "IEEE binary16", false,
                      R"(float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits)); return f;)",
                      R"(asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));)");
    text +=
        "__device__ __forceinline__ iron_f16 iron_f32_to_f16(float f) { return iron_f16(f); }\n";
  }
  if (bf16) {
    text += half_type("iron_bf16", "bfloat16 (the high half of an f32)", true,
                      "return __uint_as_float(static_cast<unsigned int>(bits) << 16);",
                      R"(asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f));)");
    text +=
        "__device__ __forceinline__ iron_bf16 iron_f32_to_bf16(float f) { return iron_bf16(f); }\n";
  }
  return text;
}

}  // namespace iron::codegen::cuda
