/// The causal depthwise conv1d of the state-space models, by its definition in double, and its
/// error bound: the oracle of iron_ssm_conv1d and iron_ssm_conv1d_update (test sections only).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iron/testing/tolerance.hpp>
#include <vector>

namespace iron::kernels {

/// One output of the conv: act(bias + Σ_k weight[k] · window[k]), window[W − 1] the newest input;
/// `abs_sum` gets |bias| + Σ_k |weight[k] · window[k]| (the pre-activation's error scale).
inline double conv_tap(const float* weight, const double* window, std::size_t width, double bias,
                       bool silu, double& abs_sum, double& pre) {
  pre = bias;
  abs_sum = std::abs(bias);
  for (std::size_t k = 0; k < width; ++k) {
    const double term = static_cast<double>(weight[k]) * window[k];
    pre += term;
    abs_sum += std::abs(term);
  }
  return silu ? pre / (1.0 + std::exp(-pre)) : pre;
}

/// The bound of an output: the pre-activation's W fused multiply-adds err by γ_W·abs_sum, which
/// silu (slope below 1.1) passes on, plus silu's own relative error: γ_6 in f32 (exp, add,
/// division); with the approximate ops of f16/bf16, (|a| + 10)·u (the exponent's rounding scaled
/// by |a|, exp2.approx 5u, the add, rcp.approx 3u, the product).
inline testing::Tolerance conv_tolerance(DType dt, std::size_t width, bool silu, double max_abs_sum,
                                         double max_abs_pre) {
  namespace tol = testing::tolerance;
  const double slope = silu ? 1.1 : 1.0;
  double rel = 0.0;
  if (silu) {
    rel = dt == DType::F32 ? tol::gamma(6)
                           : tol::gamma(10 + static_cast<std::size_t>(std::ceil(max_abs_pre)));
  }
  return tol::stored(dt, slope * tol::gamma(width) * max_abs_sum, rel);
}

}  // namespace iron::kernels
