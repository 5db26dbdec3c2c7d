/// iron_moe_router's routing from its definition, in double (test-only): the scores, the keys,
/// the top_k experts by key (ties to the lowest index), their weights, and whether each token's
/// choice is clear of the kernel's error bound (router.cpp's "## Error bound").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iron/testing/tolerance.hpp>
#include <limits>
#include <numeric>
#include <vector>

namespace iron::kernels {

inline constexpr std::uint32_t kSigmoidScoring = 1;

/// The router's constexprs (scoring 0: softmax).
struct RouterShape {
  std::size_t tokens = 1;
  std::size_t experts = 1;
  std::size_t top_k = 1;
  std::uint32_t scoring = 0;
  bool renormalize = true;
};

/// The expected outputs, as the test runner takes them (ids as floats).
struct Routing {
  std::vector<float> ids;
  std::vector<float> weights;
  bool clear = true;  ///< every token's keys are apart by more than the kernel's bound
};

/// The scores of one token's logits (NaN read as −inf).
inline std::vector<double> router_scores(const float* logits, const RouterShape& s) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> l(s.experts);
  for (std::size_t e = 0; e < s.experts; ++e) l[e] = std::isnan(logits[e]) ? -kInf : logits[e];
  std::vector<double> scores(s.experts, 0.0);
  if (s.scoring == kSigmoidScoring) {
    for (std::size_t e = 0; e < s.experts; ++e) scores[e] = 1.0 / (1.0 + std::exp(-l[e]));
    return scores;
  }
  const double peak = *std::max_element(l.begin(), l.end());
  if (peak == -kInf) return scores;
  double total = 0.0;
  for (double x : l) total += std::exp(x - peak);
  for (std::size_t e = 0; e < s.experts; ++e) scores[e] = std::exp(l[e] - peak) / total;
  return scores;
}

/// ε_s of the doc comment for one token: the roundings in a score, in units of u.
inline std::size_t score_roundings(const float* logits, const RouterShape& s) {
  if (s.scoring == kSigmoidScoring) return 6;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (std::size_t e = 0; e < s.experts; ++e) {
    if (std::isfinite(logits[e])) {
      lo = std::min(lo, double{logits[e]});
      hi = std::max(hi, double{logits[e]});
    }
  }
  const auto range = static_cast<std::size_t>(std::ceil(std::min(hi > lo ? hi - lo : 0.0, 104.0)));
  const std::size_t depth = std::min((s.experts + 31) / 32 + 30, s.experts - 1);
  return 2 * (range + 4) + depth + 1;
}

/// The k of the weights' relative bound γ_k, the largest over the tokens.
inline std::size_t weight_error_roundings(const std::vector<float>& logits, const RouterShape& s) {
  std::size_t k = 0;
  for (std::size_t t = 0; t < s.tokens; ++t) {
    const std::size_t e = score_roundings(&logits[t * s.experts], s);
    k = std::max(k, s.renormalize ? 2 * e + s.top_k : e);
  }
  return k;
}

/// The routing of every token; `bias` empty for none.
inline Routing route_oracle(const std::vector<float>& logits, const std::vector<float>& bias,
                            const RouterShape& s) {
  namespace tol = testing::tolerance;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Routing out;
  for (std::size_t t = 0; t < s.tokens; ++t) {
    const float* row = &logits[t * s.experts];
    const std::vector<double> scores = router_scores(row, s);
    // Both scorings increase with the logit, so without a bias the logits order the experts.
    std::vector<double> keys(s.experts);
    for (std::size_t e = 0; e < s.experts; ++e) {
      keys[e] = bias.empty() ? (std::isnan(row[e]) ? -kInf : row[e]) : scores[e] + bias[e];
    }
    std::vector<std::size_t> order(s.experts);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return keys[a] > keys[b]; });
    if (!bias.empty()) {
      const double gamma = tol::gamma(score_roundings(row, s));
      const auto bound = [&](std::size_t e) {
        return gamma * scores[e] + tol::unit_roundoff(DType::F32) * std::abs(keys[e]);
      };
      for (std::size_t i = 0; i + 1 < std::min(s.top_k + 1, s.experts); ++i) {
        const std::size_t a = order[i];
        const std::size_t b = order[i + 1];
        if (!(keys[a] - keys[b] > bound(a) + bound(b))) out.clear = false;
      }
    }
    double chosen = 0.0;
    for (std::size_t k = 0; k < s.top_k && k < s.experts; ++k) chosen += scores[order[k]];
    for (std::size_t k = 0; k < s.top_k; ++k) {
      const bool found = k < s.experts;
      const double w = found ? scores[order[k]] : 0.0;
      out.ids.push_back(static_cast<float>(found ? order[k] : s.experts));
      out.weights.push_back(static_cast<float>(s.renormalize && chosen > 0 ? w / chosen : w));
    }
  }
  return out;
}

}  // namespace iron::kernels
