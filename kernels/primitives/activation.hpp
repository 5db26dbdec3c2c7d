/// Activation functions on f32 values, shared by the unary kernels and the gated ones (swiglu).
///
/// silu and the tanh form of gelu are written as x / (1 + exp(-z)) (x * sigmoid(z)): one exp
/// and one division, no cancellation in 1 + tanh for negative x, and the right limits when exp
/// overflows (x / inf = -0 for x → -inf, x / 1 = x for x → +inf).
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels {

/// x * sigmoid(x).
inline dsl::Expr<dsl::f32> silu(const dsl::Expr<dsl::f32>& x) { return x / (1.0f + dsl::exp(-x)); }

/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3))
/// since 0.5 (1 + tanh(u)) = sigmoid(2u).
inline dsl::Expr<dsl::f32> gelu_tanh(const dsl::Expr<dsl::f32>& x) {
  constexpr float kTwoSqrtTwoOverPi = 1.5957691216057308f;  // 2 sqrt(2 / pi)
  auto two_u = kTwoSqrtTwoOverPi * dsl::fma(0.044715f * x, x * x, x);
  return x / (1.0f + dsl::exp(-two_u));
}

/// 0.5 x (1 + erf(x / sqrt 2)): x times the standard normal CDF.
inline dsl::Expr<dsl::f32> gelu_erf(const dsl::Expr<dsl::f32>& x) {
  constexpr float kSqrtHalf = 0.70710678118654752f;  // 1 / sqrt 2
  return 0.5f * x * (1.0f + dsl::erf(x * kSqrtHalf));
}

}  // namespace iron::kernels
