/// The step size of Mamba's selective scan, shared by the prefill scan and the decode step:
/// dt = softplus(delta + bias) with softplus = 1, else delta + bias. Softplus is Mamba's:
/// log(1 + exp(v)) up to v = 20, v itself above (where they differ by under e^-20).
#pragma once

#include <iron/iron.hpp>

namespace iron::kernels {

inline constexpr float kSoftplusThreshold = 20.0f;
inline constexpr float kLog2eF32 = 1.4426950408889634f;  ///< log2(e): exp(x) = exp2(x · log2 e)

inline dsl::Expr<dsl::f32> scan_dt(const dsl::Expr<dsl::f32>& delta,
                                   const dsl::Expr<dsl::f32>& bias,
                                   const dsl::Expr<dsl::u32>& softplus) {
  using namespace iron::dsl;
  auto v = delta + bias;
  auto soft = log(1.0f + exp(min(v, Expr<f32>(kSoftplusThreshold))));
  return select(softplus != 0u, select(v <= kSoftplusThreshold, soft, v), v);
}

}  // namespace iron::kernels
