/// Mamba-2's SSD layer as a selective scan: a channel is a (head, head dimension) pair, its decay
/// rate and step the head's, its B and C the head's group's. The SSD kernels' tests draw their
/// inputs here and check them with scan_oracle (test sections only).
#pragma once

#include <cstddef>
#include <iron/testing/data.hpp>
#include <vector>

#include "scan_oracle.hpp"

namespace iron::kernels {

struct SsdShape {
  std::size_t batch, seqlen, heads, head_dim, groups, states;
  bool softplus = true, use_z = true, initial = true;
};

/// The per-head inputs as the kernels take them, and the same problem as a scan over channels.
struct SsdInputs {
  std::vector<float> dt;             ///< [batch, seqlen, heads]
  std::vector<float> dt_bias, A, D;  ///< [heads]
  ScanInputs scan;                   ///< u = x, z, B, C, h0 in the kernels' layouts
};

/// Mamba-2's ranges: A = −exp(A_log) with A_log in log(1 … 16), dt around the projection's output
/// with a bias that puts it in 0.001 … 0.3 (no softplus: a positive dt of up to 0.15).
inline SsdInputs ssd_inputs(const SsdShape& s, DType dt, testing::Rng& rng) {
  const std::size_t dim = s.heads * s.head_dim;
  const std::size_t n = s.batch * s.seqlen * dim;
  const std::size_t bc = s.batch * s.seqlen * s.groups * s.states;
  SsdInputs in;
  in.dt = testing::round_through(s.softplus ? rng.uniform(s.batch * s.seqlen * s.heads, -1.0f, 1.0f)
                                            : rng.uniform(s.batch * s.seqlen * s.heads, 0.0f, 0.1f),
                                 dt);
  in.dt_bias = s.softplus ? rng.uniform(s.heads, -6.0f, -2.0f) : rng.uniform(s.heads, 0.0f, 0.05f);
  in.A = rng.uniform(s.heads, -16.0f, -1.0f);
  in.D = rng.uniform(s.heads, 0.5f, 1.5f);
  ScanInputs& scan = in.scan;
  scan.batch = s.batch;
  scan.seqlen = s.seqlen;
  scan.dim = dim;
  scan.states = s.states;
  scan.groups = s.groups;
  scan.softplus = s.softplus;
  scan.use_z = s.use_z;
  scan.approximate_silu = dt != DType::F32;
  scan.u = testing::round_through(rng.uniform(n, -2.0f, 2.0f), dt);
  scan.z = testing::round_through(rng.uniform(n, -3.0f, 3.0f), dt);
  scan.B = testing::round_through(rng.uniform(bc, -1.0f, 1.0f), dt);
  scan.C = testing::round_through(rng.uniform(bc, -1.0f, 1.0f), dt);
  if (s.initial) scan.h0 = rng.uniform(s.batch * dim * s.states, -1.0f, 1.0f);
  scan.delta.resize(n);
  for (std::size_t i = 0; i < n; ++i) scan.delta[i] = in.dt[i / s.head_dim];
  scan.delta_bias.resize(dim);
  scan.D.resize(dim);
  scan.A.resize(dim * s.states);
  for (std::size_t d = 0; d < dim; ++d) {
    const std::size_t h = d / s.head_dim;
    scan.delta_bias[d] = in.dt_bias[h];
    scan.D[d] = in.D[h];
    for (std::size_t k = 0; k < s.states; ++k) scan.A[d * s.states + k] = in.A[h];
  }
  return in;
}

}  // namespace iron::kernels
