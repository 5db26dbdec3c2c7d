/// The oracle of iron_sample, in double, from the definition in sample.cpp's doc comment: the
/// penalized logits, the kept set by sorting, the renormalized distribution, and the inverse CDF
/// at the same Philox number (philox4x32_10_host). It also says whether every decision the draw
/// rests on clears twice the kernel's stated error bound; the tests keep only rows that do.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "../primitives/philox.hpp"

namespace iron::kernels {

/// One row's parameters, as the kernel's per-row buffers hold them.
struct SampleParams {
  float temperature = 1.0f;
  std::uint32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition = 1.0f;
  float frequency = 0.0f;
  float presence = 0.0f;
  std::uint32_t seed = 0;
  std::uint32_t step = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> history{};  ///< (token, count) slots
};

struct SampleDraw {
  std::uint32_t token = 0;
  std::uint32_t status = 0;
  bool filters_clear = true;        ///< greedy, top-k, min-p and top-p clear twice their bounds
  bool draw_clear = true;           ///< the draw clears twice its bound
  std::vector<double> probability;  ///< the renormalized distribution (sampled rows)
};

/// The draw of one row of n logits, for a kernel run with tpg threads per group and h history
/// slots a row.
inline SampleDraw sample_oracle(const float* x, std::size_t n, const SampleParams& r,
                                std::size_t tpg, std::size_t slots) {
  constexpr double u = 0x1p-24;
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> l(x, x + n);
  std::vector<bool> penalized(n, false);
  for (const auto& [token, count] : r.history) {
    if (count == 0 || token >= n || penalized[token]) continue;
    penalized[token] = true;
    const double v = l[token];
    l[token] = (v > 0 ? v / r.repetition : v * r.repetition) -
               (static_cast<double>(r.frequency) * count + r.presence);
  }
  SampleDraw d;
  if (n > std::size_t{1} << 18) {  // past the history bitmap's reach
    d.token = 0xFFFFFFFFu;
    d.status = 3;
    return d;
  }
  if (std::any_of(l.begin(), l.end(), [](double v) { return std::isnan(v) || v == inf; })) {
    d.token = 0xFFFFFFFFu;
    d.status = 1;
    return d;
  }
  const auto top = std::max_element(l.begin(), l.end());  // the first maximum
  const double peak = *top;
  if (peak == -inf) {
    d.status = 2;
    return d;
  }
  const auto distinct = [&](double a, double b) {
    return a == b || std::fabs(a - b) > 32 * u * (std::max(std::fabs(a), std::fabs(b)) + 1);
  };
  const double t = r.temperature;
  if (!(t > 0 && t < inf && 1.0f / r.temperature < std::numeric_limits<float>::infinity())) {
    d.token = static_cast<std::uint32_t>(top - l.begin());
    for (double v : l) d.filters_clear = d.filters_clear && distinct(v, peak);
    return d;
  }
  std::vector<double> w(n);
  for (std::size_t j = 0; j < n; ++j) w[j] = std::exp((l[j] - peak) / t);
  std::vector<bool> keep(n, true);
  if (r.top_k > 0 && r.top_k < n) {
    std::vector<double> sorted = l;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    const double kth = sorted[r.top_k - 1];
    for (std::size_t j = 0; j < n; ++j) keep[j] = keep[j] && l[j] >= kth;
    d.filters_clear = d.filters_clear && distinct(kth, sorted[r.top_k]);
  }
  if (r.min_p > 0) {
    const double ln_m = std::log(std::min(static_cast<double>(r.min_p), 1.0));
    const double cut = peak + t * ln_m;
    for (std::size_t j = 0; j < n; ++j) {
      keep[j] = keep[j] && l[j] >= cut;
      const double slack = 32 * u * (std::fabs(peak) + t * std::fabs(ln_m) + std::fabs(l[j]) + 1);
      d.filters_clear = d.filters_clear && (l[j] == -inf || std::fabs(l[j] - cut) > slack);
    }
  }
  double span = 0;  // Z: the largest (max l − l_j) / T over the kept finite logits, at most 104
  for (std::size_t j = 0; j < n; ++j) {
    if (keep[j] && l[j] > -inf) span = std::max(span, (peak - l[j]) / t);
  }
  const std::size_t per_thread = (n + tpg - 1) / tpg;  // ⌈n/tpg⌉, the chunk sum's additions
  const double eps = (static_cast<double>(per_thread + slots) + 2 * std::min(span, 104.0) + 80) * u;
  const auto mass = [&] {
    double total = 0;
    for (std::size_t j = 0; j < n; ++j) total += keep[j] ? w[j] : 0.0;
    return total;
  };
  if (r.top_p < 1) {
    const double total = mass();
    const double goal = static_cast<double>(r.top_p) * total;
    const double slack = 2 * (eps + static_cast<double>(n) * u) * total;
    std::vector<std::size_t> order;
    for (std::size_t j = 0; j < n; ++j) {
      if (keep[j]) order.push_back(j);
    }
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return l[a] > l[b]; });
    double above = 0;
    double cut = -inf;
    for (std::size_t i = 0; i < order.size();) {
      double with = above;
      std::size_t end = i;
      for (; end < order.size() && l[order[end]] == l[order[i]]; ++end) with += w[order[end]];
      if (with >= goal && with > 0) {
        cut = l[order[i]];
        d.filters_clear =
            d.filters_clear && with - goal > slack && (above == 0 || goal - above > slack);
        break;
      }
      above = with;
      i = end;
    }
    for (std::size_t j = 0; j < n; ++j) keep[j] = keep[j] && l[j] >= cut;
  }
  const double total = mass();
  const std::array<std::uint32_t, 4> bits = philox4x32_10_host({r.step, 0, 0, 0}, {r.seed, 0});
  const double goal = uniform_from_word_host(bits[0]) * total;
  d.probability.assign(n, 0.0);
  double before = 0;
  bool drawn = false;
  for (std::size_t j = 0; j < n; ++j) {
    if (!keep[j] || w[j] == 0) continue;
    d.probability[j] = w[j] / total;
    const double after = before + w[j];
    if (!drawn && after > goal) {
      drawn = true;
      d.token = static_cast<std::uint32_t>(j);
      d.draw_clear =
          after - goal > 2 * eps * total && (before == 0 || goal - before > 2 * eps * total);
    }
    before = after;
  }
  return d;
}

}  // namespace iron::kernels
