/// iron_moe_router: the top_k experts of each token and their weights, from the router's logits.
///
/// ## What is chosen
/// For token t with logits ℓ_e (e < experts; a NaN logit is read as −inf, everywhere):
/// - the scores s_e: softmax over the token (scoring 0), exp(ℓ_e − max ℓ) / Σ_j exp(ℓ_j − max ℓ),
///   0 for every expert of a token whose logits are all −inf; or sigmoid (scoring 1),
///   1 / (1 + exp(−ℓ_e)). A +inf logit is outside the softmax's contract.
/// - the choice key c_e = s_e + bias_e with use_bias = 1 (a load-balancing bias that only
///   chooses, as in DeepSeek-V3), c_e = s_e without; both scorings increase with ℓ, so without a
///   bias the kernel compares the logits themselves, exactly.
/// - `topk_ids[t, k]`: the experts in decreasing c, ties to the lowest index. Picks past the
///   experts (top_k > experts) give the id `experts` (no expert: iron_moe_sort drops it) and
///   weight 0.
/// - `topk_weights[t, k]`: the chosen expert's unbiased score s, divided by the sum of the token's
///   chosen scores when renormalize = 1 (a sum of 0 leaves the weights at 0).
/// So a NaN logit never outranks a number unless the bias says so (it scores 0, as −inf does),
/// and a token whose logits are all NaN or −inf gets the experts of the largest bias (without a
/// bias, experts 0, 1, …) with weight 0: defined outputs whatever the logits, and a NaN that
/// reached the router also sits in the token's hidden state, so it still reaches the layer's
/// output through the experts.
///
/// ## Error bound
/// Ids: exact without a bias. With a bias, c_e is computed within γ_(ε_s)·s_e + u·|c_e|
/// (u = 2^-24): the choice is exact when each two consecutive keys of the token's top_k + 1
/// largest differ by more than the sum of their bounds; closer keys may swap.
/// Weights: relative, γ_(ε_s) for the scores, γ_(2·ε_s + top_k) renormalized (the chosen sum adds
/// top_k − 1 additions, the division one rounding). ε_s = 6 for the sigmoid (exp's 4u, the
/// addition and the division); for the softmax ε_s = 2·(Y + 4) + d + 1: ℓ − max rounds by
/// u·|ℓ − max|, a relative Y·u once through exp, Y the token's range of finite logits (capped at
/// 104, past which exp is below f32's smallest subnormal), exp adds 4u, the sum of the
/// exponentials has addition depth d = min(⌈experts/32⌉ + 30, experts − 1) (a lane's strided
/// sum, then the 32 lanes in any order), and the division rounds once.
///
/// ## How it runs
/// One simdgroup per token: lane l holds the experts l, l + 32, … For the softmax, a pass finds
/// the maximum and one sums the exponentials. Then top_k picks: pick k takes the largest key
/// that comes after pick k − 1 in the order (key descending, index ascending), each lane over its
/// experts and then across the lanes (simd_max of the key, simd_min of the index among the lanes
/// holding it), so nothing is removed and any number of experts runs in a fixed set of
/// registers. The logits (experts · 2 or 4 bytes a token) are read from memory once and then from
/// L1; picks read them again, and with a bias recompute the scores.
///
/// ## Layout
/// - `logits       [tokens, experts]` T
/// - `bias         [experts]` f32 (read only with use_bias = 1; give any [experts] buffer
///   otherwise)
/// - `topk_ids     [tokens, top_k]` u32
/// - `topk_weights [tokens, top_k]` f32
///
/// ## Dispatch
/// Reduction: tpg a multiple of 32, 32 ≤ tpg ≤ 1024, each simdgroup a token: ⌈tokens / (tpg / 32)⌉
/// groups. scoring 0 (softmax) or 1 (sigmoid); renormalize and use_bias 0 or 1.
#include <algorithm>
#include <iron/iron.hpp>

#include "../primitives/arg_max.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr u32 kSoftmaxScoring = 0;
constexpr u32 kNoPick = 0xFFFFFFFFu;  ///< a lane's pick before it has seen a candidate
}  // namespace

IRON_KERNEL(iron_moe_router,
            (Tensor<T> logits, Tensor<f32> bias, Out<u32> topk_ids, Out<f32> topk_weights,
             Constexpr<u32> tokens, Constexpr<u32> experts, Constexpr<u32> top_k,
             Constexpr<u32> scoring, Constexpr<u32> renormalize, Constexpr<u32> use_bias)) {
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[ceil_div(tokens * 32, tpg), 1, 1]");
  layout(logits, "[tokens, experts]");
  layout(bias, "[experts]");
  layout(topk_ids, "[tokens, top_k]");
  layout(topk_weights, "[tokens, top_k]");
  auto token = program_id<0>() * simdgroup_count() + simdgroup_id();
  auto lane = lane_id();
  IRON_IF(token < tokens) {
    auto base = token * experts;
    auto logit = [&](const Expr<u32>& e) {
      auto x = cast<f32>(load(logits[base + e]));
      return select(x == x, x, Expr<f32>(-infinity));
    };

    // The softmax's shift (its maximum; 0 for a token of −inf, whose exponentials are all 0)
    // and the sum of the exponentials.
    Var<f32> shift = 0.0f;
    Var<f32> total = 0.0f;
    IRON_IF(scoring == kSoftmaxScoring) {
      Var<f32> peak = -infinity;
      for (auto e : range(lane, experts, 32u)) peak = max(peak, logit(e));
      auto top = simd_max(Expr<f32>(peak));
      shift = select(top == -infinity, Expr<f32>(0.0f), top);
      Var<f32> sum = 0.0f;
      for (auto e : range(lane, experts, 32u)) sum += exp(logit(e) - shift);
      total = simd_sum(Expr<f32>(sum));
    }
    auto score = [&](const Expr<f32>& x) {
      Var<f32> s = 0.0f;
      IRON_IF(scoring == kSoftmaxScoring) {
        IRON_IF(total > 0.0f) { s = exp(x - shift) / total; }
      }
      IRON_ELSE { s = 1.0f / (1.0f + exp(-x)); }
      return Expr<f32>(s);
    };
    auto key = [&](const Expr<u32>& e) {
      Var<f32> c = 0.0f;
      IRON_IF(use_bias != 0u) { c = score(logit(e)) + load(bias[e]); }
      IRON_ELSE { c = logit(e); }
      return Expr<f32>(c);
    };

    // Pick k: the largest key after pick k − 1 in (key descending, index ascending).
    Var<f32> last = infinity;  // pick k − 1's key
    Var<u32> after = 0u;       // the lowest index a key tied with `last` may have
    Var<f32> chosen = 0.0f;    // the sum of the chosen scores
    for (auto k : range(0u, top_k, 1u)) {
      Var<f32> best = -infinity;
      Var<u32> best_index = kNoPick;
      for (auto e : range(lane, experts, 32u)) {
        auto c = key(e);
        IRON_IF(c < last || (c == last && e >= after)) {
          keep_max_first_index(best, best_index, c, e);
        }
      }
      auto top = simd_max(Expr<f32>(best));
      auto pick =
          simd_min(select(Expr<f32>(best) == top, Expr<u32>(best_index), Expr<u32>(kNoPick)));
      auto found = pick < experts;
      Var<f32> weight = 0.0f;
      IRON_IF(found) { weight = score(logit(pick)); }
      IRON_IF(lane == k % 32u) {
        store(topk_ids[token * top_k + k], select(found, pick, experts));
        store(topk_weights[token * top_k + k], Expr<f32>(weight));
      }
      chosen += weight;
      last = top;
      after = min(pick, experts - 1u) + 1u;  // experts when nothing was found: no more picks
    }
    // Each lane rescales the weights it stored.
    IRON_IF(renormalize != 0u && chosen > 0.0f) {
      for (auto k : range(lane, top_k, 32u)) {
        auto at = token * top_k + k;
        store(topk_weights[at], load(topk_weights[at]) / chosen);
      }
    }
  }
}

// Four tokens a group (a simdgroup each), fewer when there are fewer tokens.
IRON_GEOMETRY(iron_moe_router) {
  const std::uint64_t tokens = std::max<std::uint64_t>(q.constant("tokens"), 1);
  const std::uint32_t tpg = q.threads_per_group(whole_simdgroups(32 * tokens, 128));
  return Geometry::per_row((32 * tokens + tpg - 1) / tpg, tpg);
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <cmath>
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <limits>
#include <stdexcept>
#include <string>

#include "router_oracle.hpp"

namespace iron::kernels {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// The test's inputs: logits rounded through the dtype, and the bias (empty: none).
struct RouterInputs {
  std::vector<float> logits;
  std::vector<float> bias;
};

testing::TestSetup router_setup(const RouterShape& s, const RouterInputs& in, DType dt) {
  namespace tol = testing::tolerance;
  const Routing want = route_oracle(in.logits, in.bias, s);
  if (!want.clear) {
    throw std::runtime_error("iron_moe_router test: a token's choice is within the error bound");
  }
  const std::size_t k = weight_error_roundings(in.logits, s);
  testing::TestSetup setup("iron_moe_router", dt);
  setup.input("logits", in.logits)
      .input("bias", in.bias.empty() ? std::vector<float>(s.experts, 0.0f) : in.bias)
      .output("topk_ids", s.tokens * s.top_k)
      .output("topk_weights", s.tokens * s.top_k)
      .constant("tokens", static_cast<double>(s.tokens))
      .constant("experts", static_cast<double>(s.experts))
      .constant("top_k", static_cast<double>(s.top_k))
      .constant("scoring", static_cast<double>(s.scoring))
      .constant("renormalize", s.renormalize ? 1.0 : 0.0)
      .constant("use_bias", in.bias.empty() ? 0.0 : 1.0)
      .expect("topk_ids", want.ids)
      .expect("topk_weights", want.weights)
      .tolerance("topk_ids", tol::exact())
      .tolerance("topk_weights", tol::relative(DType::F32, k));
  return setup.grid(testing::geometry_grid(setup));
}

/// Uniform logits in (−spread, spread) through `edit`, then rounded to dt, and a bias in
/// (−0.5, 0.5) when `with_bias`; drawn again (up to 100 times) until every token's choice is
/// clear of the error bound.
template <class Edit>
RouterInputs router_inputs(const RouterShape& s, bool with_bias, float spread, DType dt,
                           testing::Rng& rng, Edit edit) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    RouterInputs in;
    in.logits = rng.uniform(s.tokens * s.experts, -spread, spread);
    edit(in.logits);
    in.logits = testing::round_through(in.logits, dt);
    if (with_bias) in.bias = rng.uniform(s.experts, -0.5f, 0.5f);
    if (route_oracle(in.logits, in.bias, s).clear) return in;
  }
  throw std::runtime_error("iron_moe_router test: no draw is clear of the error bound");
}

testing::TestSetup router_case(const RouterShape& s, bool with_bias, DType dt, testing::Rng& rng) {
  return router_setup(s, router_inputs(s, with_bias, 4.0f, dt, rng, [](std::vector<float>&) {}),
                      dt);
}

bench::BenchSetup router_bench(const RouterShape& s, bool with_bias, DType dt) {
  bench::BenchSetup setup("iron_moe_router", dt);
  setup.random("logits", s.tokens * s.experts, -4.0f, 4.0f)
      .random("bias", s.experts, -0.5f, 0.5f)
      .output("topk_ids", s.tokens * s.top_k)
      .output("topk_weights", s.tokens * s.top_k)
      .constant("tokens", static_cast<double>(s.tokens))
      .constant("experts", static_cast<double>(s.experts))
      .constant("top_k", static_cast<double>(s.top_k))
      .constant("scoring", static_cast<double>(s.scoring))
      .constant("renormalize", s.renormalize ? 1.0 : 0.0)
      .constant("use_bias", with_bias ? 1.0 : 0.0);
  // The logits (and the bias) read once, the ids and weights written once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(s.tokens * s.experts * dtype_size(dt) + s.experts * 4 + s.tokens * s.top_k * 8)
      .peer("moe_router", {{"tokens", static_cast<double>(s.tokens)},
                           {"experts", static_cast<double>(s.experts)},
                           {"top_k", static_cast<double>(s.top_k)},
                           {"scoring", static_cast<double>(s.scoring)},
                           {"renormalize", s.renormalize ? 1.0 : 0.0},
                           {"use_bias", with_bias ? 1.0 : 0.0}});
}

}  // namespace

// Mixtral's routing: 8 experts, top-2 of the softmax, renormalized.
IRON_TEST(iron_moe_router, softmax_top2_of_8, F32, F16, BF16) {
  return router_case({.tokens = 64, .experts = 8, .top_k = 2}, false, dt, rng);
}

// DeepSeek-V3's routing on a smaller layer: sigmoid scores, a bias that only chooses, top-8 of
// 64 renormalized; two lanes' worth of experts each.
IRON_TEST(iron_moe_router, sigmoid_bias_top8_of_64, F32, F16, BF16) {
  return router_case({.tokens = 24, .experts = 64, .top_k = 8, .scoring = kSigmoidScoring}, true,
                     dt, rng);
}

// A softmax with a bias, not renormalized, over 60 experts (not a multiple of 32: lanes 28 to
// 31 hold one expert fewer), 13 tokens (the last group holds one).
IRON_TEST(iron_moe_router, softmax_bias_unnormalized_60_experts, F32, F16, BF16) {
  return router_case({.tokens = 13, .experts = 60, .top_k = 4, .renormalize = false}, true, dt,
                     rng);
}

// top_k = 1 (a renormalized weight of exactly 1), and sigmoid scores left as they are.
IRON_TEST(iron_moe_router, top_k_1, F32, F16, BF16) {
  return router_case({.tokens = 17, .experts = 16, .top_k = 1}, false, dt, rng);
}
IRON_TEST(iron_moe_router, sigmoid_unnormalized_top_k_1, F32, F16, BF16) {
  return router_case(
      {.tokens = 9, .experts = 16, .top_k = 1, .scoring = kSigmoidScoring, .renormalize = false},
      false, dt, rng);
}

// top_k = experts: every expert, in decreasing key, the weights summing to 1.
IRON_TEST(iron_moe_router, top_k_equals_experts, F32, F16, BF16) {
  return router_case({.tokens = 8, .experts = 8, .top_k = 8}, true, dt, rng);
}

// One token of 128 experts, four a lane; with a bias.
IRON_TEST(iron_moe_router, single_token_128_experts, F32, F16, BF16) {
  return router_case({.tokens = 1, .experts = 128, .top_k = 8, .scoring = kSigmoidScoring}, true,
                     dt, rng);
}

// More picks than experts: the last two are the id `experts` with weight 0.
IRON_TEST(iron_moe_router, top_k_past_the_experts, F32, F16, BF16) {
  return router_case({.tokens = 5, .experts = 6, .top_k = 8}, false, dt, rng);
}

// Ties: logits of three values only, so most picks break a tie, to the lowest index; with
// 40 experts the tied experts sit in different lanes and in one lane twice.
IRON_TEST(iron_moe_router, ties_go_to_the_lowest_index, F32, F16, BF16) {
  const RouterShape s{.tokens = 12, .experts = 40, .top_k = 6};
  return router_setup(s,
                      router_inputs(s, false, 4.0f, dt, rng,
                                    [](std::vector<float>& x) {
                                      for (float& v : x) v = std::round(v / 4.0f);
                                    }),
                      dt);
}

// NaN reads as −inf: a token with one NaN, one with NaN and −inf among numbers, one of −inf
// alone, one of NaN alone (those two: experts 0, 1, … with weight 0).
IRON_TEST(iron_moe_router, nan_reads_as_minus_infinity, F32, F16, BF16) {
  const RouterShape s{.tokens = 6, .experts = 12, .top_k = 4};
  return router_setup(s,
                      router_inputs(s, false, 4.0f, dt, rng,
                                    [&](std::vector<float>& x) {
                                      x[3] = kNaN;
                                      x[12 + 0] = kNaN;
                                      x[12 + 5] = -kInf;
                                      x[12 + 7] = kNaN;
                                      std::fill(x.begin() + 24, x.begin() + 36, -kInf);
                                      std::fill(x.begin() + 36, x.begin() + 48, kNaN);
                                    }),
                      dt);
}

// The same under sigmoid scores with a bias: a NaN scores 0, so its key is its bias, and a
// token of NaN takes the experts of the largest bias.
IRON_TEST(iron_moe_router, nan_with_sigmoid_and_bias, F32, F16, BF16) {
  const RouterShape s{.tokens = 4, .experts = 12, .top_k = 3, .scoring = kSigmoidScoring};
  return router_setup(s,
                      router_inputs(s, true, 4.0f, dt, rng,
                                    [&](std::vector<float>& x) {
                                      x[0] = kNaN;
                                      x[12 + 4] = kNaN;
                                      x[12 + 9] = -kInf;
                                      std::fill(x.begin() + 24, x.begin() + 36, kNaN);
                                    }),
                      dt);
}

// Logits far apart: the softmax subtracts the token's maximum, so exp never overflows.
IRON_TEST(iron_moe_router, large_logits, F32, F16, BF16) {
  const RouterShape s{.tokens = 8, .experts = 16, .top_k = 4};
  return router_setup(s, router_inputs(s, false, 40.0f, dt, rng, [](std::vector<float>&) {}), dt);
}

// Mixtral's layer (8 experts, top-2, softmax) and a many-expert one (128 experts, top-8,
// DeepSeek-V3's sigmoid scores and bias), 4096 tokens each.
IRON_BENCH(iron_moe_router, tokens4096_experts8_top2, F32, BF16) {
  return router_bench({.tokens = 4096, .experts = 8, .top_k = 2}, false, dt);
}
IRON_BENCH(iron_moe_router, tokens4096_experts128_top8_sigmoid_bias, F32, BF16) {
  return router_bench({.tokens = 4096, .experts = 128, .top_k = 8, .scoring = kSigmoidScoring},
                      true, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
