/// MSL helper functions: saturating float-to-int casts, erf, the approximate reciprocal, guarded
/// simdgroup reads, float atomics.
#include "msl_prelude.hpp"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "../c_like/prelude.hpp"
#include "msl_fragments.hpp"

namespace iron::codegen::msl {
namespace {

using c_like::Helper;

/// An f32 atomic `op` ("add", "max" or "min") on `space` memory by compare-and-swap.
Helper float_atomic(std::string_view op, std::string_view space) {
  const std::string combined = op == "add"   ? "as_type<float>(old) + value"
                               : op == "max" ? "fmax(as_type<float>(old), value)"
                                             : "fmin(as_type<float>(old), value)";
  std::string name = fmt::format("iron_atomic_{}_f32_{}", op, space);
  std::string text = fmt::format(
      R"(// Atomic float {0} on {1} memory by compare-and-swap; returns the previous value.
float {2}({1} float* address, float value) {{
  {1} atomic_uint* bits = ({1} atomic_uint*)address;
  uint old = atomic_load_explicit(bits, memory_order_relaxed);
  while (true) {{
    const uint next = as_type<uint>({3});
    if (next == old || atomic_compare_exchange_weak_explicit(bits, &old, next, memory_order_relaxed,
                                                             memory_order_relaxed)) {{
      return as_type<float>(old);
    }}
  }}
}}
)",
      op, space, name, combined);
  return {std::move(name), {}, std::move(text)};
}

/// Every helper, in the order they are emitted (callees first).
const std::vector<Helper>& helpers() {
  static const std::vector<Helper> all = [] {
    std::vector<Helper> list = {
        {"iron_is_nan",
         {},
         R"(// NaN test on the bits: Metal's default fast math may fold isnan() away.
bool iron_is_nan(float x) {
  return (as_type<uint>(x) & 0x7fffffffu) > 0x7f800000u;
}
)"},
        {"iron_f32_to_i32",
         {"iron_is_nan"},
         R"(// float -> int as Iron casts: toward zero, saturating, NaN -> 0.
int iron_f32_to_i32(float x) {
  if (iron_is_nan(x)) return 0;
  if (x >= 2147483648.0f) return 2147483647;
  return int(max(x, -2147483648.0f));
}
)"},
        {"iron_f32_to_u32",
         {"iron_is_nan"},
         R"(// float -> uint as Iron casts: toward zero, saturating, NaN -> 0.
uint iron_f32_to_u32(float x) {
  if (iron_is_nan(x)) return 0u;
  if (x >= 4294967296.0f) return 4294967295u;
  return uint(max(x, 0.0f));
}
)"},
        {"iron_erf",
         {},
         R"(// erf, which Metal lacks; within 1.5e-7 of the true value in f32 (3 ulp). |x| < 0.75:
// the Maclaurin series to x^17. Beyond: 1 - erfc(|x|) with erfc(a) = t exp(-a^2 + P(t)),
// t = 1 / (1 + a / 2), P the Chebyshev fit of Numerical Recipes (2nd ed., section 6.2), whose
// relative error is below 1.2e-7.
float iron_erf(float x) {
  const float a = fabs(x);
  if (a < 0.75f) {
    const float s = x * x;
    float p = 1.6462114e-06f;
    p = fma(p, s, -1.4925650e-05f);
    p = fma(p, s, 1.2055333e-04f);
    p = fma(p, s, -8.5483270e-04f);
    p = fma(p, s, 5.2239776e-03f);
    p = fma(p, s, -2.6866171e-02f);
    p = fma(p, s, 1.1283792e-01f);
    p = fma(p, s, -3.7612639e-01f);
    p = fma(p, s, 1.1283792e+00f);
    return x * p;
  }
  const float t = 1.0f / fma(0.5f, a, 1.0f);
  float p = 0.17087277f;
  p = fma(p, t, -0.82215223f);
  p = fma(p, t, 1.48851587f);
  p = fma(p, t, -1.13520398f);
  p = fma(p, t, 0.27886807f);
  p = fma(p, t, -0.18628806f);
  p = fma(p, t, 0.09678418f);
  p = fma(p, t, 0.37409196f);
  p = fma(p, t, 1.00002368f);
  p = fma(p, t, -1.26551223f);
  return copysign(1.0f - t * exp(fma(-a, a, p)), x);
}
)"},
        {"iron_recip_approx",
         {},
         R"(// 1/x for recip.approx: Metal's default fast math divides by its hardware reciprocal,
// and with fast math off the quotient is correctly rounded, within the bound either way.
float iron_recip_approx(float x) {
  return 1.0f / x;
}
)"},
        {"iron_simd_read",
         {},
         R"(// v as lane `source` holds it; a lane whose source is not in 0..31 keeps its own v.
template <typename T>
T iron_simd_read(T v, uint source) {
  const T read = simd_shuffle(v, ushort(source & 31u));
  return source < 32u ? read : v;
}
)"},
    };
    for (const char* op : {"add", "max", "min"}) {
      for (const char* space : {"device", "threadgroup"}) list.push_back(float_atomic(op, space));
    }
    return list;
  }();
  return all;
}

}  // namespace

std::string msl_prelude(const c_like::Needs& needs, const MslDialect& dialect) {
  std::string text;
  if (!needs.vectors.empty()) {
    text += "// Vectors of more than 4 lanes, as 4-lane parts.\n";
    for (const auto& [t, lanes] : needs.vectors) {
      text += fmt::format("struct {} {{\n  {} part[{}];\n}};\n", dialect.vector_name(t, lanes),
                          dialect.vector_name(t, 4), lanes / 4);
    }
  }
  std::vector<c_like::Helper> all = helpers();
  all.insert(all.end(), fragment_helpers().begin(), fragment_helpers().end());
  c_like::append_helpers(text, all, needs.helpers, "MSL");
  return text;
}

}  // namespace iron::codegen::msl
