/// The 8-bit float prelude text (see fp8_types.hpp).
#include "fp8_types.hpp"

#include <fmt/format.h>

namespace iron::codegen::c_like {
namespace {

/// One format: `mant` mantissa bits, exponent bias `bias`, largest finite `largest` (pattern
/// `largest_bits`), smallest normal `smallest_normal`, NaN as every pattern with the all-ones
/// exponent (e5m2, which has infinities) or only 0x7F (e4m3).
struct Format {
  const char* name;
  const char* what;
  unsigned mant;
  unsigned bias;
  const char* largest;
  unsigned largest_bits;
  const char* smallest_normal;
  const char* quanta_per_unit;  // 2^(bias + mant - 1): subnormal quanta in 1.0
  const char* quantum;          // 2^(1 - bias - mant)
  bool infinities;
  const char* ptx;  // the format's name in PTX conversions
};

constexpr Format kE4M3{"iron_f8e4m3",
                       "e4m3 (OCP e4m3fn: no infinities, largest 448)",
                       3,
                       7,
                       "448.0f",
                       0x7E,
                       "0.015625f",
                       "512.0f",
                       "0.001953125f",
                       false,
                       "e4m3"};
constexpr Format kE5M2{"iron_f8e5m2",
                       "e5m2 (IEEE-like, largest finite 57344)",
                       2,
                       15,
                       "57344.0f",
                       0x7B,
                       "6.103515625e-05f",
                       "65536.0f",
                       "1.52587890625e-05f",
                       true,
                       "e5m2"};

/// On CUDA devices with the instruction (sm_89 and later), the conversion of f in one
/// `cvt.rn.satfinite` (nearest even, saturated to the finite range, as the arithmetic below;
/// its NaN given f's sign, as the arithmetic's): a dozen instructions fewer an element.
std::string instruction_path(const Format& f) {
  return fmt::format(R"(#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  unsigned short pair;
  asm("cvt.rn.satfinite.{ptx}x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
  return static_cast<unsigned char>(ax > 0x7F800000u ? sign | 0x7Fu : pair & 0xFFu);
#else
)",
                     fmt::arg("ptx", f.ptx));
}

std::string format_text(const Format& f, const Fp8Spelling& s) {
  const unsigned drop = 23 - f.mant;
  const unsigned top = (1u << (7 - f.mant)) - 1;
  const std::string nan_test =
      f.infinities ? fmt::format("e == {}u && m != 0u", top) : "(bits & 0x7Fu) == 0x7Fu";
  const std::string infinity =
      f.infinities ? fmt::format("e == {}u ? {}(0x7F800000u) : ", top, s.as_float) : "";
  return fmt::format(
      R"(// {what} as its bits.
{q} float {name}_value({u} bits) {{
  const {u} e = (bits >> {mant}u) & {top}u, m = bits & {mmask}u;
  const float v = {nan_test} ? {as_float}(0x7FC00000u) : {infinity}e == 0u ? float(m) * {quantum}
                : {as_float}(((e + {rebias}u) << 23) | (m << {drop}u));
  return (bits & 0x80u) != 0u ? -v : v;
}}
// f to nearest even, saturated to the finite range; NaN stays NaN.
{q} {b} {name}_bits(float f) {{
  const {u} sign = ({as_uint}(f) >> 24) & 0x80u, ax = {as_uint}(f) & 0x7FFFFFFFu;
{instruction}  const float a = {as_float}(ax);
  {u} r;
  if (ax > 0x7F800000u) r = 0x7Fu;
  else if (a >= {largest}) r = {largest_bits}u;
  else if (a < {smallest_normal}) r = static_cast<{u}>({rint}(a * {quanta}));
  else {{
    const {u} t = ax + {half_ulp}u + ((ax >> {drop}u) & 1u);
    r = (((t >> 23) - {rebias}u) << {mant}u) | ((t >> {drop}u) & {mmask}u);
  }}
  return static_cast<{b}>(sign | r);
{instruction_end}}}
struct {name} {{
  {b} bits;
  {name}() = default;
  {member}explicit {name}(float f) : bits({name}_bits(f)) {{}}
  {member}explicit operator float() const {{ return {name}_value(bits); }}
}};
{q} float iron_to_f32({name} h) {{ return {name}_value(h.bits); }}
{q} {name} iron_f32_to_{short}(float f) {{ return {name}(f); }}
{q} {name} operator+({name} a, {name} b) {{ return {name}(iron_to_f32(a) + iron_to_f32(b)); }}
{q} {name} operator-({name} a, {name} b) {{ return {name}(iron_to_f32(a) - iron_to_f32(b)); }}
{q} {name} operator*({name} a, {name} b) {{ return {name}(iron_to_f32(a) * iron_to_f32(b)); }}
{q} {name} operator/({name} a, {name} b) {{ return {name}(iron_to_f32(a) / iron_to_f32(b)); }}
{q} {name} operator-({name} a) {{ {name} h; h.bits = static_cast<{b}>(a.bits ^ 0x80u); return h; }}
{q} bool operator==({name} a, {name} b) {{ return iron_to_f32(a) == iron_to_f32(b); }}
{q} bool operator!=({name} a, {name} b) {{ return iron_to_f32(a) != iron_to_f32(b); }}
{q} bool operator<({name} a, {name} b) {{ return iron_to_f32(a) < iron_to_f32(b); }}
{q} bool operator<=({name} a, {name} b) {{ return iron_to_f32(a) <= iron_to_f32(b); }}
{q} bool operator>({name} a, {name} b) {{ return iron_to_f32(a) > iron_to_f32(b); }}
{q} bool operator>=({name} a, {name} b) {{ return iron_to_f32(a) >= iron_to_f32(b); }}
)",
      fmt::arg("what", f.what), fmt::arg("q", s.qualifier), fmt::arg("member", s.member),
      fmt::arg("name", f.name), fmt::arg("short", std::string_view(f.name).substr(5)),
      fmt::arg("u", s.uint_type), fmt::arg("b", s.byte_type), fmt::arg("mant", f.mant),
      fmt::arg("top", top), fmt::arg("mmask", (1u << f.mant) - 1), fmt::arg("nan_test", nan_test),
      fmt::arg("infinity", infinity), fmt::arg("as_float", s.as_float),
      fmt::arg("as_uint", s.as_uint), fmt::arg("quantum", f.quantum),
      fmt::arg("rebias", 127 - f.bias), fmt::arg("drop", drop), fmt::arg("largest", f.largest),
      fmt::arg("largest_bits", fmt::format("0x{:02X}", f.largest_bits)),
      fmt::arg("smallest_normal", f.smallest_normal), fmt::arg("rint", s.rint),
      fmt::arg("quanta", f.quanta_per_unit),
      fmt::arg("half_ulp", fmt::format("0x{:X}", (1u << (drop - 1)) - 1)),
      fmt::arg("instruction", s.conversion_instruction ? instruction_path(f) : ""),
      fmt::arg("instruction_end", s.conversion_instruction ? "#endif\n" : ""));
}

}  // namespace

std::string fp8_types_prelude(bool e4m3, bool e5m2, const Fp8Spelling& s) {
  std::string text;
  if (e4m3) text += format_text(kE4M3, s);
  if (e5m2) text += format_text(kE5M2, s);
  return text;
}

}  // namespace iron::codegen::c_like
