/// Affine group quantization (MLX's "affine" mode): codes of BITS bits packed little-endian into
/// u32 words, and the decode w = scale * q + bias of one code.
///
/// Shared by every kernel that reads affine-quantized weights (dequantization, quantized
/// matrix products), so the bit layout is written once.
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels {

/// Codes in one u32 word at BITS bits each.
template <dsl::u32 BITS>
inline constexpr dsl::u32 codes_per_word = 32 / BITS;

/// Code k of `word`: bits [k * BITS, (k + 1) * BITS), so code 0 is the least significant.
template <dsl::u32 BITS>
dsl::Expr<dsl::u32> unpack_code(const dsl::Expr<dsl::u32>& word, const dsl::Expr<dsl::u32>& k) {
  static_assert(BITS > 0 && 32 % BITS == 0, "affine codes must tile a u32 word");
  return (word >> (k * BITS)) & ((1u << BITS) - 1u);
}

/// The code q (below 2^23) as an exact f32, without the integer-to-float conversion (a
/// quarter-rate instruction): q in the low mantissa bits of 2^23 is 2^23 + q, less 2^23.
inline dsl::Expr<dsl::f32> code_value(const dsl::Expr<dsl::u32>& q) {
  return dsl::bitcast<dsl::f32>(q | 0x4B000000u) - 8388608.0f;
}

/// 2^23's bits (0x4B000000) as a run-time value no compiler folds: `nonzero` is nonzero
/// wherever the value is used (a kernel's k, say). CUDA's three-input logic op takes a single
/// immediate, so a code's mask and this or are then one instruction instead of two.
inline dsl::Expr<dsl::u32> code_magic(const dsl::Expr<dsl::u32>& nonzero) {
  return dsl::select(nonzero == 0u, dsl::Expr<dsl::u32>(0u), dsl::Expr<dsl::u32>(0x4B000000u));
}

/// code_value with 2^23's bits from code_magic.
inline dsl::Expr<dsl::f32> code_value(const dsl::Expr<dsl::u32>& q,
                                      const dsl::Expr<dsl::u32>& magic) {
  return dsl::bitcast<dsl::f32>(q | magic) - 8388608.0f;
}

/// w = scale * q + bias in f32 with one rounding.
inline dsl::Expr<dsl::f32> affine_dequant(const dsl::Expr<dsl::u32>& q,
                                          const dsl::Expr<dsl::f32>& scale,
                                          const dsl::Expr<dsl::f32>& bias) {
  return dsl::fma(dsl::cast<dsl::f32>(q), scale, bias);
}

}  // namespace iron::kernels
