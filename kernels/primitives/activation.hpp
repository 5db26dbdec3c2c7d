/// Activation functions on f32 values, shared by the unary kernels and the gated ones (swiglu).
///
/// silu and the tanh form of gelu are written as x / (1 + exp(-z)) (x * sigmoid(z)): one exp
/// and one division, no cancellation in 1 + tanh for negative x, and the right limits when exp
/// overflows (x / inf = -0 for x → -inf, x / 1 = x for x → +inf).
///
/// Each function takes the kernel's element type T. For f32 it uses the accurate ops; for f16
/// and bf16, whose results keep 11 and 8 bits, the approximate ones (exp2.approx, recip.approx:
/// one hardware instruction each, within 2.5 and 1.5 f32 ulp), whose error of a few 2^-20 stays
/// far below the rounding to T. x·x is exact in f32 for an f16 or bf16 x (at most 22 bits).
#pragma once

#include <iron/iron.hpp>
#include <type_traits>

namespace iron::kernels {

/// Whether activations on elements of type T use the approximate ops.
template <class T>
inline constexpr bool kApproximateActivations = !std::is_same_v<T, dsl::f32>;

inline constexpr float kLog2e = 1.4426950408889634f;  // log2(e)

/// x * sigmoid(x). f16/bf16: x · 1/(1 + 2^(-x·log2 e)).
template <class T>
dsl::Expr<dsl::f32> silu(const dsl::Expr<dsl::f32>& x) {
  if constexpr (kApproximateActivations<T>) {
    return x * dsl::recip_approx(1.0f + dsl::exp2_approx(x * -kLog2e));
  } else {
    return x / (1.0f + dsl::exp(-x));
  }
}

/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3))
/// since 0.5 (1 + tanh(u)) = sigmoid(2u).
template <class T>
dsl::Expr<dsl::f32> gelu_tanh(const dsl::Expr<dsl::f32>& x) {
  const auto cubic = dsl::fma(0.044715f * x, x * x, x);  // x + 0.044715 x^3
  if constexpr (kApproximateActivations<T>) {
    constexpr float kTwoSqrtTwoOverPiLog2e = 2.3022081981443252f;  // 2 sqrt(2 / pi) log2(e)
    return x * dsl::recip_approx(1.0f + dsl::exp2_approx(-kTwoSqrtTwoOverPiLog2e * cubic));
  } else {
    constexpr float kTwoSqrtTwoOverPi = 1.5957691216057308f;  // 2 sqrt(2 / pi)
    return x / (1.0f + dsl::exp(-(kTwoSqrtTwoOverPi * cubic)));
  }
}

/// Φ(-|x|) = erfc(z) / 2 with z = |x| / sqrt 2, for f16 and bf16: t · 2^(P(t) − x²·log2(e)/2),
/// t = 1 / (1 + z/2). P, of degree 5, is fitted (weighted minimax) to
/// log2(erfc(z) · e^(z²) / t) − 1 on 0 ≤ z ≤ 10; its relative error there is below 7.8e-6,
/// with the coefficients rounded to f32 and the polynomial evaluated in f32. Beyond z = 9.3
/// (|x| > 13.2) the power flushes to 0 and so does the result, whose true value is below 2^-126.
inline dsl::Expr<dsl::f32> normal_cdf_of_minus_abs(const dsl::Expr<dsl::f32>& x) {
  constexpr float kHalfOverSqrt2 = 0.35355339059327373f;  // 1 / (2 sqrt 2)
  constexpr float kHalfLog2e = 0.72134752044448169f;      // log2(e) / 2
  const auto t = dsl::recip_approx(dsl::fma(dsl::abs(x), kHalfOverSqrt2, 1.0f));
  auto p = dsl::fma(t, 3.300746635e-01f, -1.023146155e+00f);
  p = dsl::fma(p, t, 6.845489142e-01f);
  p = dsl::fma(p, t, 3.670840047e-01f);
  p = dsl::fma(p, t, 1.468683070e+00f);
  p = dsl::fma(p, t, -2.827233512e+00f);
  return t * dsl::exp2_approx(dsl::fma(x * x, -kHalfLog2e, p));
}

/// 0.5 x (1 + erf(x / sqrt 2)): x times the standard normal CDF Φ(x). f16/bf16: x · Φ(x) with
/// Φ(x) = q for x < 0 and 1 − q otherwise, q = Φ(-|x|), free of 1 + erf's cancellation.
template <class T>
dsl::Expr<dsl::f32> gelu_erf(const dsl::Expr<dsl::f32>& x) {
  if constexpr (kApproximateActivations<T>) {
    const auto q = normal_cdf_of_minus_abs(x);
    return x * dsl::select(x < 0.0f, q, 1.0f - q);
  } else {
    constexpr float kSqrtHalf = 0.70710678118654752f;  // 1 / sqrt 2
    return 0.5f * x * (1.0f + dsl::erf(x * kSqrtHalf));
  }
}

}  // namespace iron::kernels
