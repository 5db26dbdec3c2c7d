/// The host decoder layer (reference_layer.hpp): RMSNorm, q/k/v projections, NeoX RoPE, causal
/// grouped-query attention over the cache and the new keys, output projection, residual,
/// RMSNorm, SwiGLU feed-forward, residual. Projections run on every core.
#include "reference_layer.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iron/core/half.hpp>
#include <limits>
#include <span>
#include <thread>

namespace llama {
namespace {

/// Calls f(i) for i in [0, n), spread over the machine's cores.
template <class F>
void parallel_for(std::size_t n, F&& f) {
  const std::size_t workers =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, std::max<std::size_t>(n, 1));
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < workers; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = t; i < n; i += workers) f(i);
    });
  }
  for (auto& thread : threads) thread.join();
}

/// Σ a[i]·b[i]: eight f32 partial sums (which the compiler keeps in one vector), added in double.
double dot(const float* a, const float* b, std::size_t n) {
  float part[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t j = 0; j < 8; ++j) part[j] += a[i + j] * b[i + j];
  }
  double sum = 0.0;
  for (; i < n; ++i) sum += double{a[i]} * b[i];
  for (float p : part) sum += p;
  return sum;
}

/// Rounds a value to bf16 when `on`, else to f32: where the Iron layer stores bf16.
struct Rounding {
  bool on;
  float operator()(double v) const {
    return on ? iron::round_to_bf16(static_cast<float>(v)) : static_cast<float>(v);
  }
};

/// out[o] = Σ_i w[o, i] · x[i] for o < rows (w [rows, cols]).
std::vector<float> project(const std::vector<float>& w, std::span<const float> x, std::size_t rows,
                           const Rounding& round) {
  std::vector<float> out(rows);
  for (std::size_t o = 0; o < rows; ++o) out[o] = round(dot(&w[o * x.size()], x.data(), x.size()));
  return out;
}

std::vector<float> rms_norm(std::span<const float> x, const std::vector<float>& weight, float eps,
                            const Rounding& round) {
  double squares = 0.0;
  for (float v : x) squares += double{v} * v;
  const double inv = 1.0 / std::sqrt(squares / static_cast<double>(x.size()) + eps);
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = round(x[i] * inv * weight[i]);
  return out;
}

/// NeoX rotary embedding of each head of v ([heads, head_dim]) at `position`: element i and
/// i + head_dim / 2 rotated by position · base^(−i / (head_dim / 2)).
void rope(std::vector<float>& v, std::uint32_t heads, std::uint32_t head_dim, float base,
          std::uint32_t position, const Rounding& round) {
  const std::uint32_t half = head_dim / 2;
  for (std::uint32_t h = 0; h < heads; ++h) {
    float* x = &v[std::size_t{h} * head_dim];
    for (std::uint32_t i = 0; i < half; ++i) {
      const double angle = position * std::pow(double{base}, -double(i) / half);
      const double lo = x[i];
      const double hi = x[i + half];
      x[i] = round(lo * std::cos(angle) - hi * std::sin(angle));
      x[i + half] = round(hi * std::cos(angle) + lo * std::sin(angle));
    }
  }
}

}  // namespace

std::vector<std::vector<float>> reference_rows(const LayerShape& s, const Weights& w,
                                               const LayerInput& in,
                                               const std::vector<std::uint32_t>& rows,
                                               bool round_bf16) {
  const Rounding round{round_bf16};
  const std::uint32_t last = *std::max_element(rows.begin(), rows.end());
  const auto x_row = [&](std::uint32_t t) {
    return std::span<const float>(in.x).subspan(std::size_t{t} * s.hidden, s.hidden);
  };
  // Keys and values of every new token up to the last row asked for, roped, as the cache holds
  // them (bf16 when rounding).
  std::vector<std::vector<float>> keys(last + 1);
  std::vector<std::vector<float>> values(last + 1);
  parallel_for(last + 1, [&](std::size_t t) {
    const auto h = rms_norm(x_row(t), w.attn_norm, s.eps, round);
    keys[t] = project(w.k, h, s.kv_width(), round);
    values[t] = project(w.v, h, s.kv_width(), round);
    rope(keys[t], s.kv_heads, s.head_dim, s.rope_base, in.first + t, round);
  });
  const auto key = [&](std::uint32_t head, std::uint32_t position) -> const float* {
    if (position >= in.first) return &keys[position - in.first][std::size_t{head} * s.head_dim];
    return &in.k_cache[(std::size_t{head} * s.max_seq + position) * s.head_dim];
  };
  const auto value = [&](std::uint32_t head, std::uint32_t position) -> const float* {
    if (position >= in.first) return &values[position - in.first][std::size_t{head} * s.head_dim];
    return &in.v_cache[(std::size_t{head} * s.max_seq + position) * s.head_dim];
  };

  std::vector<std::vector<float>> out(rows.size());
  parallel_for(rows.size(), [&](std::size_t r) {
    const std::uint32_t t = rows[r];
    const std::uint32_t position = in.first + t;
    const auto h = rms_norm(x_row(t), w.attn_norm, s.eps, round);
    auto q = project(w.q, h, s.q_width(), round);
    rope(q, s.heads, s.head_dim, s.rope_base, position, round);
    // Causal attention: query head qh over kv head qh / (heads / kv_heads), positions ≤ its own.
    std::vector<float> attn(s.q_width());
    std::vector<double> scores(position + 1);
    const double scale = 1.0 / std::sqrt(double(s.head_dim));
    for (std::uint32_t qh = 0; qh < s.heads; ++qh) {
      const std::uint32_t kvh = qh / (s.heads / s.kv_heads);
      const float* qv = &q[std::size_t{qh} * s.head_dim];
      double top = -std::numeric_limits<double>::infinity();
      for (std::uint32_t p = 0; p <= position; ++p) {
        scores[p] = dot(qv, key(kvh, p), s.head_dim) * scale;
        top = std::max(top, scores[p]);
      }
      double total = 0.0;
      for (std::uint32_t p = 0; p <= position; ++p) total += scores[p] = std::exp(scores[p] - top);
      for (std::uint32_t d = 0; d < s.head_dim; ++d) {
        double sum = 0.0;
        for (std::uint32_t p = 0; p <= position; ++p) sum += scores[p] * value(kvh, p)[d];
        attn[qh * s.head_dim + d] = round(sum / total);
      }
    }
    const auto o = project(w.o, attn, s.hidden, round);
    std::vector<float> x2(s.hidden);
    for (std::uint32_t i = 0; i < s.hidden; ++i) x2[i] = round(double{x_row(t)[i]} + o[i]);
    const auto h2 = rms_norm(x2, w.ffn_norm, s.eps, round);
    const auto gate = project(w.gate, h2, s.ffn, round);
    const auto up = project(w.up, h2, s.ffn, round);
    std::vector<float> act(s.ffn);
    for (std::uint32_t i = 0; i < s.ffn; ++i) {
      act[i] = round(gate[i] / (1.0 + std::exp(-double{gate[i]})) * up[i]);
    }
    const auto down = project(w.down, act, s.hidden, round);
    out[r].resize(s.hidden);
    for (std::uint32_t i = 0; i < s.hidden; ++i) out[r][i] = round(double{x2[i]} + down[i]);
  });
  return out;
}

}  // namespace llama
