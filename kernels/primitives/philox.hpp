/// Philox 4×32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel
/// Random Numbers: As Easy as 1, 2, 3" (SC '11): a 128-bit counter and a 64-bit key give four
/// 32-bit words, a pure function of both, so any thread draws any number without a state.
///
/// The definition (the paper, §4.2): ten rounds of
///   (x0, x1, x2, x3) → (hi(M1·x2) ⊕ x1 ⊕ k0, lo(M1·x2), hi(M0·x0) ⊕ x3 ⊕ k1, lo(M0·x0))
/// with M0 = 0xD2511F53, M1 = 0xCD9E8D57, hi/lo the upper and lower 32 bits of the 64-bit
/// product, and the key bumped by the Weyl constants (0x9E3779B9, 0xBB67AE85), mod 2^32, after
/// every round but the last.
///
/// The DSL has no 64-bit integers, so `philox4x32_10` forms each 32 × 32 → 64 product from four
/// 16 × 16 → 32 partial products, none of which overflows (mul_hi_lo below); `philox4x32_10_host`
/// is its twin in plain C++ with a 64-bit product, for oracles. tests/kernels/philox_test.cpp
/// checks both against the published known answers of the Random123 library (its kat_vectors
/// file, philox4x32 with 10 rounds).
#pragma once

#include <array>
#include <cstdint>
#include <iron/iron.hpp>

namespace iron::kernels {

inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;
inline constexpr int kPhiloxRounds = 10;

/// The upper and lower 32 bits of a · m, m a constant: a = a1·2^16 + a0 and m = m1·2^16 + m0
/// give a·m = p11·2^32 + (p01 + p10)·2^16 + p00, each partial product below 2^32; the middle
/// column's carry goes into the upper word.
struct PhiloxProduct {
  dsl::Expr<dsl::u32> hi;
  dsl::Expr<dsl::u32> lo;
};
inline PhiloxProduct mul_hi_lo(const dsl::Expr<dsl::u32>& a, std::uint32_t m) {
  using namespace iron::dsl;
  const std::uint32_t m0 = m & 0xFFFFu;
  const std::uint32_t m1 = m >> 16;
  auto a0 = a & 0xFFFFu;
  auto a1 = a >> 16u;
  auto p00 = a0 * m0;
  auto p01 = a0 * m1;
  auto p10 = a1 * m0;
  auto p11 = a1 * m1;
  auto mid = (p00 >> 16u) + (p01 & 0xFFFFu) + (p10 & 0xFFFFu);
  return {p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u),
          ((mid & 0xFFFFu) << 16u) | (p00 & 0xFFFFu)};
}

/// Philox 4×32-10 of `counter` under `key`, in the DSL.
inline std::array<dsl::Expr<dsl::u32>, 4> philox4x32_10(std::array<dsl::Expr<dsl::u32>, 4> x,
                                                        std::array<dsl::Expr<dsl::u32>, 2> key) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) key = {key[0] + kPhiloxW0, key[1] + kPhiloxW1};
    const PhiloxProduct p0 = mul_hi_lo(x[0], kPhiloxM0);
    const PhiloxProduct p1 = mul_hi_lo(x[2], kPhiloxM1);
    x = {p1.hi ^ x[1] ^ key[0], p1.lo, p0.hi ^ x[3] ^ key[1], p0.lo};
  }
  return x;
}

/// The same function on the host, from the definition with a 64-bit product.
inline std::array<std::uint32_t, 4> philox4x32_10_host(std::array<std::uint32_t, 4> x,
                                                       std::array<std::uint32_t, 2> key) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) key = {key[0] + kPhiloxW0, key[1] + kPhiloxW1};
    const std::uint64_t p0 = std::uint64_t{kPhiloxM0} * x[0];
    const std::uint64_t p1 = std::uint64_t{kPhiloxM1} * x[2];
    x = {static_cast<std::uint32_t>(p1 >> 32) ^ x[1] ^ key[0], static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ x[3] ^ key[1], static_cast<std::uint32_t>(p0)};
  }
  return x;
}

/// A uniform number in [0, 1) from a word: its upper 24 bits over 2^24, exact in f32 (every
/// value a multiple of 2^-24, the largest 1 − 2^-24).
inline dsl::Expr<dsl::f32> uniform_from_word(const dsl::Expr<dsl::u32>& word) {
  using namespace iron::dsl;
  return cast<f32>(word >> 8u) * 0x1p-24f;
}
inline double uniform_from_word_host(std::uint32_t word) {
  return static_cast<double>(word >> 8) * 0x1p-24;
}

}  // namespace iron::kernels
