/// OCP Microscaling (MX) element and scale decodes: E2M1 (the FP4 element of MXFP4) and E8M0
/// (the shared power-of-two block scale), both to f32 by bit arithmetic, with no table.
///
/// Both decodes are exact: every E2M1 value and every E8M0 scale is representable in f32
/// (2^-127 as an f32 subnormal), so only the product with the scale can round.
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels {

/// E2M1 code in the low 4 bits of `code` (higher bits are ignored) to f32. Bit 3 is the sign,
/// bits 2..1 the exponent e, bit 0 the mantissa m: e == 0 gives m * 0.5, else
/// (1 + m / 2) * 2^(e - 1), so the magnitudes are 0, 0.5, 1, 1.5, 2, 3, 4, 6.
inline dsl::Expr<dsl::f32> decode_e2m1(const dsl::Expr<dsl::u32>& code) {
  using namespace iron::dsl;
  auto magnitude = code & 7u;
  // e >= 1: e and m land in the f32 exponent's low bits and the top mantissa bit, so
  // (magnitude << 22) holds exponent e; adding 252 << 22 rebiases it to e - 1 + 127.
  // e == 0: 0 or 0.5 (0x3F000000).
  auto bits = select(magnitude < 2u, magnitude * 0x3F000000u, (magnitude + 252u) << 22);
  return bitcast<f32>(bits | ((code & 8u) << 28));
}

/// E8M0 scale byte (in a u32) to f32: 2^(e - 127); e == 0 is the subnormal 2^-127 and
/// e == 0xFF is NaN, as the OCP MX spec defines.
inline dsl::Expr<dsl::f32> decode_e8m0(const dsl::Expr<dsl::u32>& e) {
  using namespace iron::dsl;
  auto normal_or_nan = select(e == 255u, Expr<u32>(0x7FC00000u), e << 23);
  return bitcast<f32>(select(e == 0u, 0x00400000u, normal_or_nan));
}

}  // namespace iron::kernels
