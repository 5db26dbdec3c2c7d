/// The prefill attention oracle, from the definition in double (kernels/sdpa/prefill.cpp's doc
/// comment), with the error bound that comment states for each case's data. Test code only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iron/testing/tolerance.hpp>
#include <limits>
#include <vector>

namespace iron::kernels::sdpa {

/// A variable-length batch: the queries and keys of each sequence, the heads and the masks.
struct PrefillCase {
  std::vector<std::uint32_t> q_lens, k_lens;
  std::size_t heads_q = 1, heads_kv = 1, head_dim = 64;
  bool causal = false;
  std::uint32_t window = 0;
  double scale = 0.125;

  std::size_t batch() const { return q_lens.size(); }
  std::vector<std::uint32_t> offsets(const std::vector<std::uint32_t>& lens) const {
    std::vector<std::uint32_t> cu{0};
    for (auto n : lens) cu.push_back(cu.back() + n);
    return cu;
  }
  std::size_t total_q() const { return offsets(q_lens).back(); }
  std::size_t total_k() const { return offsets(k_lens).back(); }
  std::uint32_t max_q() const { return *std::max_element(q_lens.begin(), q_lens.end()); }
  /// Whether query i of a sequence of q_len queries and k_len keys sees key j.
  bool sees(std::int64_t i, std::int64_t j, std::int64_t q_len, std::int64_t k_len) const {
    const std::int64_t diagonal = i + k_len - q_len;
    return j < k_len && (!causal || j <= diagonal) && (window == 0 || j > diagonal - window);
  }
};

/// The expected outputs and the largest errors the bound allows.
struct PrefillExpected {
  std::vector<float> out;  ///< [total_q, heads_q, D]
  std::vector<float> lse;  ///< [heads_q, total_q]
  double out_abs = 0.0;    ///< the bound on |Δout| before the rounding to T
  double lse_abs = 0.0;    ///< the bound on |Δlse| less its relative part
};

/// The definition on packed q [total_q, heads_q, D], k and v [total_k, heads_kv, D] (values of T
/// already), with `sinks` per query head; `unit` is T's unit roundoff.
inline PrefillExpected prefill_oracle(const PrefillCase& c, const std::vector<float>& q,
                                      const std::vector<float>& k, const std::vector<float>& v,
                                      const std::vector<float>& sinks, double unit) {
  using testing::tolerance::gamma;
  constexpr double kU = 0x1p-24;
  const std::size_t hq = c.heads_q, hkv = c.heads_kv, d = c.head_dim;
  const auto cu_q = c.offsets(c.q_lens);
  const auto cu_k = c.offsets(c.k_lens);
  PrefillExpected e;
  e.out.assign(c.total_q() * hq * d, 0.0f);
  e.lse.assign(hq * c.total_q(), 0.0f);
  for (std::size_t b = 0; b < c.batch(); ++b) {
    const std::int64_t q_len = c.q_lens[b], k_len = c.k_lens[b];
    const double steps = std::ceil(double(k_len) / 16.0);
    const double flushed = double(k_len) * 0x1p-126;
    const double sum_gamma = gamma(static_cast<std::size_t>(k_len + 4 * steps + 8));
    for (std::size_t h = 0; h < hq; ++h) {
      const std::size_t hk = h / (hq / hkv);
      for (std::int64_t i = 0; i < q_len; ++i) {
        const float* qi = &q[((cu_q[b] + i) * hq + h) * d];
        std::vector<double> logits;
        std::vector<std::int64_t> seen;
        double delta = 0.0, v_max = 0.0;
        for (std::int64_t j = 0; j < k_len; ++j) {
          if (!c.sees(i, j, q_len, k_len)) continue;
          const float* kj = &k[((cu_k[b] + j) * hkv + hk) * d];
          double dot = 0.0, abs_dot = 0.0;
          for (std::size_t x = 0; x < d; ++x) {
            dot += double(qi[x]) * kj[x];
            abs_dot += std::fabs(double(qi[x]) * kj[x]);
          }
          logits.push_back(c.scale * dot);
          seen.push_back(j);
          delta = std::max(
              delta, std::fabs(c.scale) * gamma(d) * abs_dot + gamma(3) * std::fabs(c.scale * dot));
          for (std::size_t x = 0; x < d; ++x) {
            v_max = std::max(v_max, std::fabs(double(v[((cu_k[b] + j) * hkv + hk) * d + x])));
          }
        }
        const double sink = sinks[h];
        double top = sink;
        for (double l : logits) top = std::max(top, l);
        double total = std::isinf(top) ? 0.0 : std::exp(sink - top);
        std::vector<double> acc(d, 0.0);
        for (std::size_t n = 0; n < logits.size(); ++n) {
          const double p = std::exp(logits[n] - top);
          total += p;
          const float* vj = &v[((cu_k[b] + seen[n]) * hkv + hk) * d];
          for (std::size_t x = 0; x < d; ++x) acc[x] += p * vj[x];
        }
        for (std::size_t x = 0; x < d; ++x) {
          e.out[((cu_q[b] + i) * hq + h) * d + x] =
              total > 0.0 ? static_cast<float>(acc[x] / total) : 0.0f;
        }
        e.lse[h * c.total_q() + cu_q[b] + i] = total > 0.0
                                                   ? static_cast<float>(top + std::log(total))
                                                   : -std::numeric_limits<float>::infinity();
        e.out_abs =
            std::max(e.out_abs, v_max * (2 * (delta + 5 * kU + flushed) + unit + 2 * sum_gamma));
        e.lse_abs = std::max(e.lse_abs, delta + 5 * kU + flushed + sum_gamma);
      }
    }
  }
  return e;
}

}  // namespace iron::kernels::sdpa
