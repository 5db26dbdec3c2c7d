/// Exact IEEE binary16 and bfloat16 conversions, rounding to nearest even as GPUs do.
#pragma once

#include <cstdint>

namespace iron {

std::uint16_t f32_to_f16_bits(float v);
float f16_bits_to_f32(std::uint16_t bits);
std::uint16_t f32_to_bf16_bits(float v);
float bf16_bits_to_f32(std::uint16_t bits);

/// The float nearest to `v` that the type can hold (identity for f32).
inline float round_to_f16(float v) { return f16_bits_to_f32(f32_to_f16_bits(v)); }
inline float round_to_bf16(float v) { return bf16_bits_to_f32(f32_to_bf16_bits(v)); }

}  // namespace iron
