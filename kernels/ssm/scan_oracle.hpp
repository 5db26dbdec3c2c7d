/// Mamba's selective scan by its definition, in double, with each output's error bound from a
/// running error analysis of the f32 recurrence: the oracle of iron_ssm_selective_scan, of
/// Mamba-2's SSD scan (kernels/ssm/ssd_oracle.hpp) and of their decode steps (a scan of one token
/// from a given state). Test sections only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iron/testing/data.hpp>
#include <iron/testing/tolerance.hpp>
#include <vector>

namespace iron::kernels {

/// Inputs as the kernels take them (rounded through the dtype), channels-last.
struct ScanInputs {
  std::size_t batch = 0, seqlen = 0, dim = 0, states = 0;
  std::vector<float> u, delta, z;    ///< [batch, seqlen, dim]
  std::vector<float> delta_bias, D;  ///< [dim]
  std::vector<float> A;              ///< [dim, states]
  std::size_t groups = 1;            ///< channel d reads group d / (dim / groups) of B and C
  std::vector<float> B, C;           ///< [batch, seqlen, groups, states]
  std::vector<float> h0;             ///< [batch, dim, states], or empty: zeros
  bool softplus = true, use_z = true;
  bool approximate_silu = false;  ///< the gate's silu uses the approximate ops (f16/bf16)
};

struct ScanWant {
  std::vector<float> y, state;
  double y_bound = 0.0;      ///< the largest error bound of a y
  double state_bound = 0.0;  ///< the largest error bound of a state
};

/// The bound, per state h[b, d, n] after token t (u the f32 unit roundoff, T = seqlen):
/// - dt = softplus(v), v = delta + bias (one rounding, u·|v|): log(1 + exp(v)) errs by
///   5u + 2u·dt (exp 4u and the add relative to 1 + e^v, log 2u), by e^-v above the threshold.
/// - a = exp2(dt · A·log2 e) errs by a·(|A|·Δdt + (2u + γ_T)·|dt·A| + 5u): the exponent's two
///   roundings, γ_T for a chunk's decay taken as exp2 of the chunk's summed dt (any chunking), and
///   exp2's 4u; b = dt·u·B by |u·B|·Δdt + 2u·|b|.
/// - Then R_t = a·(R + ε_a·M) + Δb carries the inputs' errors and M_t = a·M + |b| (M_0 = |h0|) the
///   magnitude, each of whose terms passes at most 2T + 2 roundings: E_t = R_t + γ_(2T+2)·M_t.
/// y = Σ_n C·h + D·u in N fused multiply-adds adds Σ_n |C|·E + γ_(N+1)·(Σ_n |C|·M + |D·u|); the
/// gate multiplies by silu(z) (γ_6 relative in f32, (|z| + 10)·u approximate) with one rounding.
/// Second-order terms are covered by a factor 1.01.
inline ScanWant scan_oracle(const ScanInputs& in) {
  namespace tol = testing::tolerance;
  const double u = tol::unit_roundoff(DType::F32);
  const std::size_t n_states = in.states;
  const double chunk = tol::gamma(in.seqlen);
  const double rounds = tol::gamma(2 * in.seqlen + 2);
  const double sum_y = tol::gamma(n_states + 1);
  ScanWant want;
  want.y.resize(in.u.size());
  want.state.resize(in.batch * in.dim * n_states);
  std::vector<double> h(n_states);  // the state
  std::vector<double> R(n_states);  // the propagated input errors
  std::vector<double> M(n_states);  // the magnitude: the recurrence on |·|
  for (std::size_t b = 0; b < in.batch; ++b) {
    for (std::size_t d = 0; d < in.dim; ++d) {
      const std::size_t row = (b * in.dim + d) * n_states;
      for (std::size_t n = 0; n < n_states; ++n) {
        h[n] = in.h0.empty() ? 0.0 : in.h0[row + n];
        M[n] = std::abs(h[n]);
        R[n] = 0.0;
      }
      for (std::size_t t = 0; t < in.seqlen; ++t) {
        const std::size_t at = (b * in.seqlen + t) * in.dim + d;
        const std::size_t bc =
            ((b * in.seqlen + t) * in.groups + d / (in.dim / in.groups)) * n_states;
        const double v = static_cast<double>(in.delta[at]) + in.delta_bias[d];
        double dt = v;
        double ddt = u * std::abs(v);
        if (in.softplus) {
          dt = std::log1p(std::exp(v));
          ddt += v <= 20.0 ? 5.0 * u + 2.0 * u * dt : std::exp(-v);
        }
        const double x = in.u[at];
        double y = static_cast<double>(in.D[d]) * x;
        double y_abs = std::abs(y);
        double y_err = 0.0;
        for (std::size_t n = 0; n < n_states; ++n) {
          const double A = in.A[d * n_states + n];
          const double a = std::exp(dt * A);
          const double bt = dt * x * in.B[bc + n];
          const double ea =
              a * (std::abs(A) * ddt + (2.0 * u + chunk) * std::abs(dt * A) + 5.0 * u);
          const double db = std::abs(x * in.B[bc + n]) * ddt + 2.0 * u * std::abs(bt);
          R[n] = a * R[n] + ea * M[n] + db;
          M[n] = a * M[n] + std::abs(bt);
          h[n] = a * h[n] + bt;
          const double c = in.C[bc + n];
          y += c * h[n];
          y_abs += std::abs(c) * M[n];
          y_err += std::abs(c) * (R[n] + rounds * M[n]);
        }
        y_err = 1.01 * (y_err + sum_y * y_abs);
        if (in.use_z) {
          const double zv = in.z[at];
          const double gate = zv / (1.0 + std::exp(-zv));
          const double rel = in.approximate_silu ? (std::abs(zv) + 10.0) * u : tol::gamma(6);
          y_err = std::abs(gate) * y_err + std::abs(y * gate) * (rel + u);
          y *= gate;
        }
        want.y[at] = static_cast<float>(y);
        want.y_bound = std::max(want.y_bound, y_err);
      }
      for (std::size_t n = 0; n < n_states; ++n) {
        want.state[row + n] = static_cast<float>(h[n]);
        want.state_bound = std::max(want.state_bound, 1.01 * (R[n] + rounds * M[n]));
      }
    }
  }
  return want;
}

/// The states a channel of the kernels: Mamba-1's d_state.
inline constexpr std::size_t kStates = 16;

struct ScanShape {
  std::size_t batch, seqlen, dim;
  bool softplus = true, use_z = true, initial = false;
};

/// Mamba's ranges: A = −exp(A_log) with A_log = log(1 … 16) (S4D-real), delta around the
/// dt_proj output with a bias that puts dt in 0.001 … 0.3, u and z of activations' size.
inline ScanInputs scan_inputs(const ScanShape& s, DType dt, testing::Rng& rng) {
  ScanInputs in;
  in.batch = s.batch;
  in.seqlen = s.seqlen;
  in.dim = s.dim;
  in.states = kStates;
  in.softplus = s.softplus;
  in.use_z = s.use_z;
  in.approximate_silu = dt != DType::F32;
  const std::size_t n = s.batch * s.seqlen * s.dim;
  const std::size_t bc = s.batch * s.seqlen * kStates;
  in.u = testing::round_through(rng.uniform(n, -2.0f, 2.0f), dt);
  // Without softplus the step is delta + bias itself, which must be positive.
  in.delta = testing::round_through(
      s.softplus ? rng.uniform(n, -1.0f, 1.0f) : rng.uniform(n, 0.0f, 0.1f), dt);
  in.z = testing::round_through(rng.uniform(n, -3.0f, 3.0f), dt);
  in.delta_bias = s.softplus ? rng.uniform(s.dim, -6.0f, -2.0f) : rng.uniform(s.dim, 0.0f, 0.05f);
  in.D = rng.uniform(s.dim, 0.5f, 1.5f);
  in.A.resize(s.dim * kStates);
  const auto jitter = rng.uniform(s.dim * kStates, -0.1f, 0.1f);
  for (std::size_t i = 0; i < in.A.size(); ++i) {
    in.A[i] = -static_cast<float>(i % kStates + 1) * (1.0f + jitter[i]);
  }
  in.B = testing::round_through(rng.uniform(bc, -1.0f, 1.0f), dt);
  in.C = testing::round_through(rng.uniform(bc, -1.0f, 1.0f), dt);
  if (s.initial) in.h0 = rng.uniform(s.batch * s.dim * kStates, -1.0f, 1.0f);
  return in;
}

}  // namespace iron::kernels
