/// iron_sample: the next token of each row of logits, drawn from the row's own filtered and
/// tempered distribution, with repetition, frequency and presence penalties, temperature, top-k,
/// top-p and min-p all per row, in one launch.
///
/// ## What is drawn
/// For row r with penalized logits l_j (penalties.hpp) and temperature T:
/// - T not a positive finite number with a finite reciprocal (0, negative, NaN, +inf, below
///   2^-128): greedy, the first j of the row's maximum (arg_max.hpp, as iron_argmax).
/// - Otherwise the weights w_j = exp((l_j − max l) / T) over the kept set
///   K = {j : l_j ≥ τ}, τ the largest of three thresholds, each off by default:
///   - top-k (0 < k < n): the k-th largest l; every logit tied with it is kept too;
///   - min-p (m > 0): max l + T·ln(min(m, 1)), i.e. w_j ≥ m, a probability at least m times the
///     largest;
///   - top-p (p < 1), on the distribution the other two leave: the largest logit v whose
///     kept tokens with l ≥ v hold at least p of that distribution's mass (p ≤ 0 keeps the
///     maximum, as p → 0 does); ties with v are kept.
///   The token is the inverse CDF at u in index order: the smallest j in K whose cumulative
///   weight Σ_{i ≤ j, i ∈ K} w_i exceeds u · Σ_{i ∈ K} w_i, so P(j) = w_j / Σ_K w, the
///   renormalized distribution, up to u's 24 bits. u is word 0 of Philox 4×32-10
///   (philox.hpp) at counter (step, 0, 0, 0) under key (seed, 0), upper 24 bits over 2^24: one
///   number per sequence and step, independent of the row's place in the batch, so a run is
///   reproducible and every backend draws the same u.
///
///   Why it is exact: with C_j the cumulative weight through j and W = Σ_K w, token j is drawn
///   iff C_j − w_j ≤ u·W < C_j, an interval of length w_j / W in u, so a uniform u in [0, 1)
///   draws j with probability w_j / W, the renormalized distribution, whatever the order of the
///   tokens; u takes the 2^24 values k·2^-24, and an interval of length w_j / W holds
///   2^24·w_j / W of them give or take one, so P(j) is within 2^-24 of w_j / W. The other exact
///   method, Gumbel-max (the argmax of l_j / T plus Gumbel noise over K), needs one Philox
///   number per element, about 200 integer operations an element here (no 32 × 32 → 64 product
///   in the DSL), against one number per row.
/// - `-inf` logits weigh 0 and are never drawn. A row with no logit above `-inf` gives token 0
///   and status 2; a NaN or `+inf` logit (after the penalties) gives token 0xFFFFFFFF and
///   status 1, never a token; a row longer than 2^18 (the history bitmap's reach) gives token
///   0xFFFFFFFF and status 3. Status 0 otherwise.
///
/// ## Error bound
/// Exact tokens, under this contract: the choice is exact whenever the decisions it rests on are
/// not within the f32 rounding of the kernel. Per row, with u = 2^-24, Z the largest |l_j − max l|
/// / T over K (at most 104, below which exp(−Z) is under f32's smallest subnormal) and
/// ε = (⌈n/tpg⌉ + h + 2Z + 80) · u (a weight errs by (2Z + 4)·u: the difference, the scaling and
/// exp's 2 ulp; a chunk sum, its listed tokens and the group scan add at most
/// ⌈n/tpg⌉ + 8 + h + 63 additions), and ε_p = ε + n·u for the top-p histograms (a bin sums up to
/// n weights by atomics, in any order):
/// - the sample: u · Σ_K w is more than ε · Σ_K w from each end of the drawn token's interval;
/// - top-p: the mass of K above the cut, and with the cut, are more than ε_p · ΣK from p · ΣK;
/// - min-p: every l_j is more than 16u · (|max l| + T·|ln m| + |l_j| + 1) from the threshold;
/// - top-k and greedy: two logits that differ do so by more than 16u · (|l| + 1) (only penalized
///   logits are rounded at all; equal logits tie the same way everywhere).
/// A decision inside its bound may go either way (the simulator and the GPU may then differ); the
/// tests give only rows whose decisions clear these bounds twice over (sample_oracle.hpp).
///
/// ## How it runs
/// One group per row; every pass reads the row in 16-byte vectors, two loads in flight a thread
/// (row_walk.hpp). The group sets a bitmap of the row's history in threadgroup memory
/// (penalties.hpp), then reads the row:
/// 1. once, from memory, for the maximum, its index and the NaN check (the history's tokens
///    apart, from their slots);
/// 2. once to gather candidates into a list of at most 1024 in threadgroup memory, then sorted
///    into index order (candidates.hpp): the tokens at or above the min-p threshold and, with top-k
///    on and k ≤ tpg, at or above the k-th largest of the threads' maxima from pass 1 (k distinct
///    tokens are at least that, so it is at most the k-th largest token: the list holds
///    top-k's set). Top-k (threshold_select.hpp's count select), top-p (its mass select) and
///    the draw then read the list: for a top-k of tens of tokens, two passes over the row in
///    all. When neither filter is on the row must be that short to be gathered;
/// 3. when the candidates do not fit, or k > tpg: four passes for top-k's threshold over the row
///    (counting only the tokens at or above the min-p threshold, which gives the same kept set,
///    as both filters keep a top part of the row), then the gather again; when the tokens left
///    still do not fit, they stay in the row: four passes for the top-p threshold, and
/// 4. one to draw (draw.hpp): each thread sums the kept weights of a contiguous run of the row
///    (⌈n/(8·tpg)⌉ 16-byte vectors) or of the list, a group scan of the sums finds the run that
///    holds u · Σ, and its thread walks it again, token by token.
/// After the first pass the row (256 KB at most for bf16 and 128k–256k vocabularies, 16 MB for 64
/// rows) is read from the L2.
///
/// ## Layout
/// - `logits      [rows, n]` T
/// - `temperature [rows]` f32, `top_k [rows]` u32 (0 or ≥ n: off), `top_p [rows]` f32 (≥ 1:
///   off), `min_p [rows]` f32 (≤ 0: off)
/// - `repetition [rows]` f32 (1: none, > 0), `frequency [rows]` f32, `presence [rows]` f32
/// - `history [rows, h]` u32 tokens and `counts [rows, h]` u32 their counts (0: an unused slot;
///   a token in at most one used slot of its row)
/// - `seed [rows]` u32, `step [rows]` u32
/// - `tokens [rows]` u32, `status [rows]` u32
///
/// ## Dispatch
/// Reduction: one group per row (`rows` groups), `tpg` threads with tpg a multiple of 32,
/// 32 ≤ tpg ≤ 1024. n ≤ 2^18 and a multiple of 8 (whole 16-byte vectors in every dtype: pad a
/// vocabulary with -inf logits, which are never drawn), h ≥ 1 (a row without history gives counts
/// of 0).
#include <algorithm>
#include <cmath>
#include <iron/iron.hpp>
#include <limits>
#include <type_traits>

#include "../primitives/arg_max.hpp"
#include "../primitives/philox.hpp"
#include "candidates.hpp"
#include "draw.hpp"
#include "penalties.hpp"
#include "row_walk.hpp"
#include "threshold_select.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr u32 kStatusNotFinite = 1;           ///< a NaN or +inf logit
constexpr u32 kStatusAllMinusInf = 2;         ///< no logit above -inf
constexpr u32 kStatusVocabularyTooLarge = 3;  ///< n past kMostPenalizedVocabulary
constexpr u32 kNoToken = 0xFFFFFFFFu;
}  // namespace

IRON_KERNEL(iron_sample,
            (Tensor<T> logits, Tensor<f32> temperature, Tensor<u32> top_k, Tensor<f32> top_p,
             Tensor<f32> min_p, Tensor<f32> repetition, Tensor<f32> frequency, Tensor<f32> presence,
             Tensor<u32> history, Tensor<u32> counts, Tensor<u32> seed, Tensor<u32> step,
             Out<u32> tokens, Out<u32> status, Constexpr<u32> n, Constexpr<u32> h)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[any, 1, 1]");
  layout(logits, "[groups.x, n]");
  layout(temperature, "[groups.x]");
  layout(top_k, "[groups.x]");
  layout(top_p, "[groups.x]");
  layout(min_p, "[groups.x]");
  layout(repetition, "[groups.x]");
  layout(frequency, "[groups.x]");
  layout(presence, "[groups.x]");
  layout(history, "[groups.x, h]");
  layout(counts, "[groups.x, h]");
  layout(seed, "[groups.x]");
  layout(step, "[groups.x]");
  layout(tokens, "[groups.x]");
  layout(status, "[groups.x]");
  require_multiple_of(n, 8);
  auto row = program_id<0>();
  auto base = row * n;
  auto tid = thread_id<0>();
  const Penalties penalties(history, counts, row * h, h, n, load(repetition[row]),
                            load(frequency[row]), load(presence[row]));
  // A pass over the row: fn(j, l_j, valid, lanes_together) for this thread's elements, l_j
  // penalized (threshold_select.hpp): the bulk of the row, every lane of a simdgroup together;
  // then the listed tokens, from the history's slots.
  auto walk_indexed = [&](const auto& fn) {
    for_each_logit(logits, base, n,
                   [&](const Expr<u32>& j, const Expr<f32>& x, const Expr<boolean>& valid) {
                     fn(j, x, valid && !penalties.flagged(j), std::true_type{});
                   });
    penalties.for_each_listed(logits, base, [&](const Expr<u32>& j, const Expr<f32>& x) {
      fn(j, x, Expr<boolean>(true), std::false_type{});
    });
  };
  auto walk = [&](const auto& fn) {
    walk_indexed([&](const Expr<u32>&, const Expr<f32>& x, const Expr<boolean>& valid,
                     auto lanes_together) { fn(x, valid, lanes_together); });
  };

  // The maximum, its first index, and whether any logit is NaN or +inf.
  Var<f32> best = -infinity;
  Var<u32> best_index = tid;
  Var<u32> not_finite = 0u;
  walk_indexed([&](const Expr<u32>& j, const Expr<f32>& x, const Expr<boolean>& valid, auto) {
    IRON_IF(valid) {
      not_finite = not_finite | select(x < infinity, Expr<u32>(0u), Expr<u32>(1u));
      keep_max_first_index(best, best_index, x, j);
    }
  });
  const ArgMax top = group_arg_max(best, best_index);
  auto peak = top.value;
  auto t = load(temperature[row]);

  Var<u32> token = top.index;
  Var<u32> code = 0u;
  IRON_IF(reduce_max(Expr<u32>(not_finite)) != 0u) {
    token = kNoToken;
    code = kStatusNotFinite;
  }
  IRON_ELSE {
    IRON_IF(peak == -infinity) { code = kStatusAllMinusInf; }
    IRON_ELSE {
      auto inv_t = 1.0f / t;
      IRON_IF(t > 0.0f && t < infinity && inv_t < infinity) {
        auto weight = [&](const Expr<f32>& x) { return exp((x - peak) * inv_t); };
        auto m = load(min_p[row]);
        Var<u32> floor =
            order_key(select(m > 0.0f, peak + t * log(min(m, 1.0f)), Expr<f32>(-infinity)));
        auto one = [](const Expr<f32>&) { return Expr<u32>(1u); };
        auto k = load(top_k[row]);
        auto by_count = [&](const auto& any_walk) {
          return select_threshold<u32>(any_walk, one, Expr<u32>(floor),
                                       [&](const Expr<u32>&) { return k; });
        };
        // Top-k, while it is not applied yet: with k ≤ tpg, the k-th largest of the threads'
        // maxima (k distinct tokens are at least it) bounds the k-th largest token from below,
        // so gathering the tokens above that bound gathers top-k's, and top-k runs on the list.
        Var<u32> k_pending = select(k > 0u && k < n, Expr<u32>(1u), Expr<u32>(0u));
        Var<u32> gather_floor = floor;
        IRON_IF(k_pending != 0u && k <= group_size<0>()) {
          gather_floor = max(floor, by_count([&](const auto& fn) {
                               fn(Expr<f32>(best), Expr<boolean>(true), std::true_type{});
                             }));
        }
        auto p = load(top_p[row]);
        auto u = [&] {  // made where the draw needs it, so it is not live across the passes
          return uniform_from_word(
              philox4x32_10({load(step[row]), Expr<u32>(0u), Expr<u32>(0u), Expr<u32>(0u)},
                            {load(seed[row]), Expr<u32>(0u)})[0]);
        };
        auto kept = [&](const Expr<f32>& x) {
          return select(order_key(x) >= Expr<u32>(floor), weight(x), Expr<f32>(0.0f));
        };
        auto by_mass = [&](const auto& any_walk) {
          return select_threshold<f32>(any_walk, weight, Expr<u32>(floor),
                                       [&](const Expr<f32>& total) { return p * total; });
        };

        // The candidates, gathered in index order when they fit (candidates.hpp). A second try
        // when the bound let too many through: top-k's exact threshold from the row, then again.
        const LogitChunk chunk = logit_chunk<T>(n);
        CandidateList list;
        for (auto attempt : range(0u, 2u, 1u)) {
          IRON_IF(attempt == 0u || (list.count() == 0u && k_pending != 0u)) {
            IRON_IF(k_pending != 0u && (attempt == 1u || k > group_size<0>())) {
              floor = max(floor, by_count(walk));
              gather_floor = floor.get();
              k_pending = 0u;
            }
            list.gather(
                walk_indexed, Expr<u32>(gather_floor),
                n <= kCandidates || Expr<u32>(gather_floor) > order_key(Expr<f32>(-infinity)));
          }
        }
        IRON_IF(list.count() > 0u) {
          IRON_IF(k_pending != 0u) { floor = max(floor, by_count(list.walk())); }
          IRON_IF(p < 1.0f) { floor = max(floor, by_mass(list.walk())); }
          token = draw_token(
              u,
              [&](const auto& fn) {
                list.for_each_in_run([&](const Expr<u32>&, const Expr<f32>& x) { fn(kept(x)); });
              },
              [&](const auto& fn) {
                list.for_each_in_run(
                    [&](const Expr<u32>& j, const Expr<f32>& x) { fn(j, kept(x)); });
              });
        }
        IRON_ELSE {
          IRON_IF(p < 1.0f) { floor = max(floor, by_mass(walk)); }
          token = draw_token(
              u,
              [&](const auto& fn) {
                for_each_logit_in_chunk(
                    logits, base, chunk, [&](const Expr<u32>& j, const Expr<f32>& x) {
                      fn(select(penalties.flagged(j), Expr<f32>(0.0f), kept(x)));
                    });
                penalties.for_each_listed_in(
                    logits, base, chunk.begin, chunk.end,
                    [&](const Expr<u32>&, const Expr<f32>& x) { fn(kept(x)); });
              },
              [&](const auto& fn) {
                for (auto j : range(chunk.begin, chunk.end, 1u)) {
                  fn(j, kept(penalties.apply(j, cast<f32>(load(logits[base + j])))));
                }
              });
        }
      }
    }
  }
  IRON_IF(n > kMostPenalizedVocabulary) {
    token = kNoToken;
    code = kStatusVocabularyTooLarge;
  }
  IRON_IF(tid == 0u) {
    store(tokens[row], Expr<u32>(token));
    store(status[row], Expr<u32>(code));
  }
}

// A group per row, of one thread per 16-byte vector of the row (whole simdgroups, at most 1024).
IRON_GEOMETRY(iron_sample) {
  const std::uint64_t n = std::max<std::uint64_t>(q.constant("n"), 1);
  return Geometry::per_row(q.tensor_elements("logits") / n,
                           q.threads_per_group(whole_simdgroups(vector_count(n, q.dtype), 1024)));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/registry.hpp>
#include <stdexcept>
#include <string>

#include "sample_oracle.hpp"

namespace iron::kernels {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

/// A batch of rows: logits [rows, n] and each row's parameters, histories of h slots.
struct SampleBatch {
  std::size_t n = 0;
  std::size_t h = 1;
  std::vector<float> logits;
  std::vector<SampleParams> rows;
};

/// The oracle's draws, each row made clear of the kernel's error bound (sample_oracle.hpp, and
/// the rule in sample.cpp's doc comment): a filter too close to its bound has its parameters
/// moved by a few percent (p and min-p scaled by 0.98, k one less), then a draw too close to its
/// bound has its seed moved on (seed + 1, …).
std::vector<SampleDraw> clear_draws(SampleBatch& b, std::size_t tpg) {
  std::vector<SampleDraw> draws;
  for (std::size_t r = 0; r < b.rows.size(); ++r) {
    SampleParams& p = b.rows[r];
    for (int attempt = 0;; ++attempt) {
      SampleDraw d = sample_oracle(&b.logits[r * b.n], b.n, p, tpg, b.h);
      if (d.filters_clear && d.draw_clear) {
        draws.push_back(std::move(d));
        break;
      }
      if (attempt == 100) {
        throw std::runtime_error("iron_sample test: row " + std::to_string(r) +
                                 " has no parameters whose draw is clear of the error bound");
      }
      if (!d.filters_clear) {  // only the filters that are on
        if (p.top_p < 1.0f) p.top_p *= 0.98f;
        p.min_p *= 0.98f;
        if (p.top_k > 1 && p.top_k < b.n) --p.top_k;
      } else {
        ++p.seed;
      }
    }
  }
  return draws;
}

testing::TestSetup sample_setup(SampleBatch b, std::size_t tpg, DType dt,
                                const std::vector<SampleDraw>& draws) {
  const std::size_t rows = b.rows.size();
  std::vector<float> temperature;
  std::vector<float> top_p;
  std::vector<float> min_p;
  std::vector<float> repetition;
  std::vector<float> frequency;
  std::vector<float> presence;
  std::vector<float> tokens;
  std::vector<float> status;
  std::vector<std::uint32_t> top_k;
  std::vector<std::uint32_t> seed;
  std::vector<std::uint32_t> step;
  std::vector<std::uint32_t> history(rows * b.h, 0);
  std::vector<std::uint32_t> counts(rows * b.h, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    const SampleParams& p = b.rows[r];
    temperature.push_back(p.temperature);
    top_k.push_back(p.top_k);
    top_p.push_back(p.top_p);
    min_p.push_back(p.min_p);
    repetition.push_back(p.repetition);
    frequency.push_back(p.frequency);
    presence.push_back(p.presence);
    seed.push_back(p.seed);
    step.push_back(p.step);
    for (std::size_t s = 0; s < p.history.size(); ++s) {
      history[r * b.h + s] = p.history[s].first;
      counts[r * b.h + s] = p.history[s].second;
    }
    tokens.push_back(static_cast<float>(draws[r].token));
    status.push_back(static_cast<float>(draws[r].status));
  }
  return testing::TestSetup("iron_sample", dt)
      .input("logits", b.logits)
      .input("temperature", temperature)
      .input_u32("top_k", top_k)
      .input("top_p", top_p)
      .input("min_p", min_p)
      .input("repetition", repetition)
      .input("frequency", frequency)
      .input("presence", presence)
      .input_u32("history", history)
      .input_u32("counts", counts)
      .input_u32("seed", seed)
      .input_u32("step", step)
      .output("tokens", rows)
      .output("status", rows)
      .constant("n", static_cast<double>(b.n))
      .constant("h", static_cast<double>(b.h))
      .expect("tokens", tokens)
      .expect("status", status)
      .tolerance(testing::tolerance::exact())
      .grid_rows(static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(tpg));
}

/// Rounds the logits through dt, draws clear rows and builds the case.
testing::TestSetup sample_case(SampleBatch b, std::size_t tpg, DType dt) {
  b.logits = testing::round_through(b.logits, dt);
  const auto draws = clear_draws(b, tpg);
  return sample_setup(std::move(b), tpg, dt, draws);
}

/// The indices of a row's `count` largest logits: histories that penalize what matters.
std::vector<std::pair<std::uint32_t, std::uint32_t>> top_history(const float* x, std::size_t n,
                                                                 std::size_t count) {
  std::vector<std::uint32_t> order(n);
  for (std::size_t j = 0; j < n; ++j) order[j] = static_cast<std::uint32_t>(j);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(),
                    [&](std::uint32_t a, std::uint32_t b) { return x[a] > x[b]; });
  std::vector<std::pair<std::uint32_t, std::uint32_t>> slots;
  for (std::size_t i = 0; i < count; ++i) slots.emplace_back(order[i], 1 + i % 3);
  return slots;
}

/// Every filter alone and together, greedy rows, and penalties, one configuration per row.
SampleBatch mixed_batch(std::size_t n, testing::Rng& rng) {
  SampleBatch b;
  b.n = n;
  b.h = 8;
  std::vector<SampleParams> rows(12);
  rows[0].temperature = 0.0f;  // greedy
  rows[2] = {.temperature = 0.7f, .top_k = 20};
  rows[3] = {.top_p = 0.8f};
  rows[4] = {.temperature = 1.3f, .min_p = 0.1f};
  rows[5] = {.temperature = 0.9f,
             .top_k = 50,
             .top_p = 0.9f,
             .min_p = 0.05f,
             .repetition = 1.3f,
             .frequency = 0.2f,
             .presence = 0.4f};
  rows[6].top_k = 1;
  rows[7].top_p = 1e-6f;
  rows[8] = {.temperature = 0.0f, .repetition = 2.0f};  // greedy on penalized logits
  rows[9] = {.temperature = 2.0f, .top_k = static_cast<std::uint32_t>(n - 100), .top_p = 0.95f};
  rows[10] = {.temperature = 0.5f, .top_k = static_cast<std::uint32_t>(4 * n), .min_p = 1.0f};
  rows[11] = {.repetition = 1.2f, .frequency = 0.5f, .presence = 0.3f};
  b.logits = rng.uniform(rows.size() * n, -4.0f, 4.0f);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    rows[r].seed = static_cast<std::uint32_t>(1000 * r + 7);
    rows[r].step = static_cast<std::uint32_t>(r);
    if (rows[r].repetition != 1.0f || rows[r].frequency != 0.0f) {
      rows[r].history = top_history(&b.logits[r * n], n, 6);
    }
  }
  // Both tokens of a bitmap pair (penalties.hpp), a token past the vocabulary, an unused slot.
  auto& slots = rows[11].history;
  const std::uint32_t partner = slots[0].first ^ 1u;
  if (std::none_of(slots.begin(), slots.end(), [&](const auto& s) { return s.first == partner; })) {
    slots.emplace_back(partner, 2);
  }
  rows[11].history.emplace_back(static_cast<std::uint32_t>(n + 5), 4);
  rows[5].history.emplace_back(3, 0);
  b.rows = rows;
  return b;
}

/// Pearson's chi-square of the draws against the renormalized distribution, which every row
/// shares: the tokens expected at least 5 times are a bin each, the rest one bin. Throws past the
/// 1 − 10^-5 quantile (Wilson–Hilferty) and on any draw of probability 0.
void expect_renormalized(const std::vector<SampleDraw>& draws) {
  const std::vector<double>& probability = draws.front().probability;
  std::vector<double> seen(probability.size(), 0.0);
  for (const SampleDraw& d : draws) {
    if (d.status != 0 || probability[d.token] == 0) {
      throw std::runtime_error("iron_sample distribution: a token outside the kept set");
    }
    seen[d.token] += 1;
  }
  const auto count = static_cast<double>(draws.size());
  double chi2 = 0;
  double rest_seen = 0;
  double rest_expected = 0;
  int bins = 0;
  for (std::size_t j = 0; j < probability.size(); ++j) {
    const double expected = probability[j] * count;
    if (expected >= 5) {
      chi2 += (seen[j] - expected) * (seen[j] - expected) / expected;
      ++bins;
    } else {
      rest_seen += seen[j];
      rest_expected += expected;
    }
  }
  if (rest_expected > 0) {
    chi2 += (rest_seen - rest_expected) * (rest_seen - rest_expected) / rest_expected;
    ++bins;
  }
  const double df = bins - 1;
  const double z = 4.265;  // the standard normal's 1 − 10^-5 quantile
  const double a = 2.0 / (9.0 * df);
  const double limit = df * std::pow(1 - a + z * std::sqrt(a), 3);
  if (!(chi2 <= limit)) {
    throw std::runtime_error("iron_sample distribution: chi-square " + std::to_string(chi2) +
                             " over " + std::to_string(bins) + " bins exceeds " +
                             std::to_string(limit));
  }
}

/// Throws unless turning off any filter that is on alone keeps more tokens: each one binds.
void expect_each_filter_binds(const std::vector<float>& x, const SampleParams& p) {
  const auto support = [&](const SampleParams& q) {
    const auto d = sample_oracle(x.data(), x.size(), q, 32, q.history.size());
    return std::count_if(d.probability.begin(), d.probability.end(),
                         [](double v) { return v > 0; });
  };
  SampleParams no_k = p;
  SampleParams no_p = p;
  SampleParams no_min_p = p;
  no_k.top_k = 0;
  no_p.top_p = 1.0f;
  no_min_p.min_p = 0.0f;
  const auto kept = support(p);
  if ((p.top_k > 0 && support(no_k) <= kept) || (p.top_p < 1 && support(no_p) <= kept) ||
      (p.min_p > 0 && support(no_min_p) <= kept)) {
    throw std::runtime_error("iron_sample distribution: a filter does not bind");
  }
}

/// 1024 rows of one row of 24 logits under `p` (penalizing its two largest), seeds 1, 7920, ….
/// The logits are the steps 2.5 − 0.2·i in an order the case's seed shuffles, so the filters of
/// both cases bind whatever the seed.
testing::TestSetup distribution_case(SampleParams p, DType dt, testing::Rng& rng) {
  SampleBatch b;
  b.n = 24;
  b.h = 2;
  std::vector<float> steps(b.n);
  for (std::size_t i = 0; i < b.n; ++i) steps[i] = 2.5f - 0.2f * static_cast<float>(i);
  for (std::size_t i = b.n - 1; i > 0; --i) {
    std::swap(steps[i], steps[rng.integers(1, 0, static_cast<std::uint32_t>(i + 1))[0]]);
  }
  const auto one = testing::round_through(steps, dt);
  p.history = top_history(one.data(), b.n, 2);
  expect_each_filter_binds(one, p);
  for (std::uint32_t r = 0; r < 1024; ++r) {
    b.logits.insert(b.logits.end(), one.begin(), one.end());
    p.seed = 7919 * r + 1;
    b.rows.push_back(p);
  }
  const auto draws = clear_draws(b, 32);
  expect_renormalized(draws);
  return sample_setup(std::move(b), 32, dt, draws);
}

}  // namespace

IRON_TEST(iron_sample, mixed_rows, F32, F16, BF16) {
  return sample_case(mixed_batch(1000, rng), 128, dt);
}

// Longer rows: sixteen elements a thread; top-k's candidates in the list (candidates.hpp), and
// rows whose candidates stay in the row: no filter before top-p, more than the list holds after
// min-p or top-k (k past tpg, or ties past the list), no filter at all.
IRON_TEST(iron_sample, rows_16384, BF16) {
  SampleBatch b;
  b.n = 16384;
  b.rows = {{.temperature = 0.8f, .top_k = 40, .top_p = 0.9f, .seed = 11},
            {.repetition = 1.5f, .frequency = 0.1f, .presence = 0.2f, .seed = 12},
            {.top_p = 0.9f, .seed = 13},
            {.top_p = 0.95f, .min_p = 1e-3f, .seed = 14},
            {.temperature = 0.7f, .top_k = 2000, .seed = 15},
            {.top_k = 5, .seed = 16}};
  b.logits = rng.uniform(b.rows.size() * b.n, -6.0f, 6.0f);
  // 2048 logits tie at the maximum: every thread's maximum is one, so the bound from them lets
  // 2048 through (past the list), and top-k's threshold comes from the row (it keeps the ties).
  for (std::size_t j = (b.rows.size() - 1) * b.n; j < b.logits.size(); j += 8) b.logits[j] = 7.0f;
  b.rows[1].history = top_history(&b.logits[b.n], b.n, 1);
  return sample_case(std::move(b), 1024, dt);
}

// The edges: equal logits (k = 1 keeps every tie), k = 1 and p → 0 on distinct logits, -inf
// logits never drawn, a row of -inf (token 0, status 2), a row with one finite logit, NaN and
// +inf (status 1, no token), and greedy over ties (the first).
IRON_TEST(iron_sample, edge_rows, F32, F16, BF16) {
  SampleBatch b;
  b.n = 304;
  const std::size_t n = b.n;
  b.rows.resize(10);
  b.logits = rng.uniform(b.rows.size() * n, -3.0f, 3.0f);
  auto row = [&](std::size_t r) { return b.logits.begin() + static_cast<std::ptrdiff_t>(r * n); };
  std::fill(row(0), row(1), 1.5f);
  b.rows[0].seed = 5;
  std::fill(row(1), row(2), -2.0f);
  b.rows[1] = {.top_k = 1, .seed = 6};
  b.rows[2] = {.top_k = 1, .seed = 7};
  b.rows[3] = {.top_p = 1e-7f, .seed = 8};
  for (std::size_t j = 0; j < n; j += 2) row(4)[static_cast<std::ptrdiff_t>(j)] = -kInf;
  b.rows[4] = {.temperature = 3.0f, .seed = 9};
  std::fill(row(5), row(6), -kInf);
  std::fill(row(6), row(7), -kInf);
  row(6)[211] = -40.0f;
  b.rows[6].top_p = 0.5f;
  row(7)[123] = std::numeric_limits<float>::quiet_NaN();
  row(8)[17] = kInf;
  b.rows[8].temperature = 0.0f;
  std::fill(row(9), row(10), 0.25f);
  b.rows[9].temperature = 0.0f;  // greedy over ties: the first
  return sample_case(std::move(b), 64, dt);
}

// A row past the history bitmap's 2^18 tokens: status 3 and no token, never a wrong one.
IRON_TEST(iron_sample, vocabulary_past_the_bitmap, BF16) {
  SampleBatch b;
  b.n = (std::size_t{1} << 18) + 8;
  b.logits = rng.uniform(b.n, -4.0f, 4.0f);
  b.rows = {{.temperature = 0.0f}};
  return sample_case(std::move(b), 1024, dt);
}

// The distribution: 1024 rows of the same 24 logits with penalties and filters (each binding;
// top-k and min-p both keep a top part, so only the stricter of them binds, hence two cases),
// each row with its own seed. The draws must be the oracle's, token for token, and the oracle's
// draws must pass a chi-square test against the renormalized distribution, so a wrong filter or
// weight fails.
IRON_TEST(iron_sample, distribution_top_k_top_p, F32, BF16) {
  return distribution_case({.temperature = 0.8f,
                            .top_k = 8,
                            .top_p = 0.9f,
                            .repetition = 1.25f,
                            .frequency = 0.1f,
                            .presence = 0.2f,
                            .step = 3},
                           dt, rng);
}
IRON_TEST(iron_sample, distribution_min_p_top_p, F32, BF16) {
  return distribution_case({.temperature = 1.2f,
                            .top_p = 0.9f,
                            .min_p = 0.1f,
                            .repetition = 1.25f,
                            .frequency = 0.1f,
                            .presence = 0.2f,
                            .step = 4},
                           dt, rng);
}

// The shape: 64 sequences of a 128256-token vocabulary, every filter and penalty on.
IRON_BENCH(iron_sample, rows64_vocab128256, BF16) {
  const std::size_t rows = 64;
  const std::size_t n = 128256;
  const std::size_t h = 64;
  // Distinct tokens in each row's slots (2003·s mod n differs for s < 64), counts 1 to 3.
  std::vector<std::uint32_t> history(rows * h);
  std::vector<std::uint32_t> counts(rows * h);
  std::vector<std::uint32_t> seeds(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t s = 0; s < h; ++s) {
      history[r * h + s] = static_cast<std::uint32_t>((2003 * s + 17 * r) % n);
      counts[r * h + s] = 1 + static_cast<std::uint32_t>(s % 3);
    }
  }
  for (std::size_t r = 0; r < rows; ++r) seeds[r] = static_cast<std::uint32_t>(r);
  bench::BenchSetup setup("iron_sample", dt);
  setup.random("logits", rows * n, -8.0f, 8.0f)
      .input("temperature", std::vector<float>(rows, 0.8f))
      .input_u32("top_k", std::vector<std::uint32_t>(rows, 50))
      .input("top_p", std::vector<float>(rows, 0.9f))
      .input("min_p", std::vector<float>(rows, 0.05f))
      .input("repetition", std::vector<float>(rows, 1.1f))
      .input("frequency", std::vector<float>(rows, 0.1f))
      .input("presence", std::vector<float>(rows, 0.1f))
      .input_u32("history", history)
      .input_u32("counts", counts)
      .input_u32("seed", seeds)
      .input_u32("step", std::vector<std::uint32_t>(rows, 0))
      .output("tokens", rows)
      .output("status", rows)
      .constant("n", static_cast<double>(n))
      .constant("h", static_cast<double>(h));
  // One pass over the logits, the history, the nine per-row words in and the two out.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(rows * n * dtype_size(dt) + rows * h * 8 + rows * 11 * 4)
      .peer("sample", {{"rows", static_cast<double>(rows)},
                       {"n", static_cast<double>(n)},
                       {"h", static_cast<double>(h)},
                       {"temperature", 0.8},
                       {"top_k", 50},
                       {"top_p", 0.9},
                       {"min_p", 0.05},
                       {"repetition", 1.1},
                       {"frequency", 0.1},
                       {"presence", 0.1}});
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
