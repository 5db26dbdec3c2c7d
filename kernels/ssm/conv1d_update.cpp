/// iron_ssm_conv1d_update_w{2,3,4}: one decode step of the causal depthwise conv1d of a Mamba
/// block: out[b, c] = act(bias[c] + Σ_{k<W−1} weight[c, k] · conv_state[b, c, k]
/// + weight[c, W − 1] · x[b, c]), act = silu (silu = 1) or identity; then conv_state[b, c] rolls
/// by one in place: its oldest input drops out and x[b, c] comes in last.
///
/// The state is the one iron_ssm_conv1d leaves after a prefill, [batch, channels, W − 1] oldest
/// first, so a sequence goes from prefill to decode with no copy.
///
/// ## Error bound
/// As iron_ssm_conv1d's: the pre-activation's W fused multiply-adds err by
/// γ_W·(|bias| + Σ_k |weight·input|), silu (slope below 1.1) passes that on and adds γ_6 (f32) or
/// (|a| + 10)·u (f16/bf16, approximate ops). The state is moved: exact.
///
/// ## How it runs
/// A thread takes one 16-byte vector of L channels of one sequence (L = 4 for f32, 8 for
/// f16/bf16): their states are L·(W − 1) consecutive elements, which it reads and writes back as
/// W − 1 vectors, so every access is a whole, aligned 16-byte one. Each state element is read
/// once and written once, x read once, out written once.
///
/// ## Layout
/// - `x, out     [batch, channels]` T
/// - `weight     [channels, W]` T
/// - `bias       [channels]` T, read only with use_bias = 1 (give any [channels] buffer otherwise)
/// - `conv_state [batch, channels, W − 1]` T, InOut, oldest first
/// - channels a multiple of 8 (whole 16-byte vectors in every dtype)
///
/// ## Dispatch
/// Elementwise, grid-stride over batch · channels / L vectors: any grid up to one vector a thread.
/// use_bias and silu 0 or 1.
#include <array>
#include <iron/iron.hpp>
#include <string>
#include <vector>

#include "../primitives/activation.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL_TEMPLATE(iron_ssm_conv1d_update, (u32 W),
                     (Tensor<T> x, Tensor<T> weight, Tensor<T> bias, InOut<T> conv_state,
                      Out<T> out, Constexpr<u32> batch, Constexpr<u32> channels,
                      Constexpr<u32> use_bias, Constexpr<u32> silu)) {
  static_assert(W >= 2 && W <= 4);
  constexpr u32 L = 16 / lane_bytes<T>();
  constexpr u32 H = W - 1;  // state inputs a channel keeps
  dispatch(elementwise);
  grid("[<= ceil_div(batch * channels / " + std::to_string(L) + ", tpg), 1, 1]");
  layout(x, "[batch, channels]");
  layout(weight, "[channels, " + std::to_string(W) + "]");
  layout(bias, "[channels]");
  layout(conv_state, "[batch, channels, " + std::to_string(H) + "]");
  layout(out, "[batch, channels]");
  require_multiple_of(channels, 8);
  for (auto i : range(global_id<0>(), batch * channels / L, grid_threads<0>())) {
    auto at = i * L;  // b * channels + c: the vector's first channel
    auto c = at % channels;
    const auto fresh = load_lanes<L>(x[at]);
    const auto bias_v = load_lanes<L>(bias[c]);
    std::vector<Expr<f32>> w;  // w[l * W + k]: channel c + l, tap k (L·W consecutive weights)
    for (u32 v = 0; v < W; ++v) {
      for (const auto& e : load_lanes<L>(weight[c * W + v * L])) w.push_back(cast<f32>(e));
    }
    std::vector<Expr<T>> state;  // state[l * H + k]: channel c + l, input k (L·H consecutive)
    for (u32 v = 0; v < H; ++v) {
      for (const auto& e : load_lanes<L>(conv_state[at * H + v * L])) state.push_back(e);
    }

    std::array<Expr<T>, L> y;
    std::vector<Expr<T>> rolled(state.size());
    for (u32 l = 0; l < L; ++l) {
      Expr<f32> a = select(use_bias != 0u, cast<f32>(bias_v[l]), Expr<f32>(0.0f));
      for (u32 k = 0; k < H; ++k) a = fma(w[l * W + k], cast<f32>(state[l * H + k]), a);
      a = fma(w[l * W + H], cast<f32>(fresh[l]), a);
      y[l] = cast<T>(select(silu != 0u, kernels::silu<T>(a), a));
      for (u32 k = 0; k + 1 < H; ++k) rolled[l * H + k] = state[l * H + k + 1];
      rolled[l * H + H - 1] = fresh[l];
    }
    store_lanes(out[at], y);
    for (u32 v = 0; v < H; ++v) {
      std::array<Expr<T>, L> part;
      for (u32 e = 0; e < L; ++e) part[e] = rolled[v * L + e];
      store_lanes(conv_state[at * H + v * L], part);
    }
  }
}
IRON_KERNEL_VARIANT(iron_ssm_conv1d_update, w2, 2);
IRON_KERNEL_VARIANT(iron_ssm_conv1d_update, w3, 3);
IRON_KERNEL_VARIANT(iron_ssm_conv1d_update, w4, 4);

namespace {

/// One vector of channels a thread, groups of 256.
Geometry conv1d_update_geometry(const GeometryQuery& q) {
  return Geometry::elementwise(q.constant("batch") * vector_count(q.constant("channels"), q.dtype),
                               q.threads_per_group(256));
}

}  // namespace

IRON_GEOMETRY(iron_ssm_conv1d_update_w2) { return conv1d_update_geometry(q); }
IRON_GEOMETRY(iron_ssm_conv1d_update_w3) { return conv1d_update_geometry(q); }
IRON_GEOMETRY(iron_ssm_conv1d_update_w4) { return conv1d_update_geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "conv_oracle.hpp"

namespace iron::kernels {

namespace {

struct UpdateShape {
  std::size_t batch, channels, width;
  bool use_bias = true;
  bool silu = true;
};

std::string update_name(std::size_t width) {
  return "iron_ssm_conv1d_update_w" + std::to_string(width);
}

/// The case: a state of earlier inputs, one new token a sequence; groups 0 takes the kernel's
/// geometry.
testing::TestSetup update_setup(const UpdateShape& s, std::uint32_t groups, DType dt,
                                testing::Rng& rng) {
  const std::size_t h = s.width - 1;
  const std::size_t n = s.batch * s.channels;
  const auto x = testing::round_through(rng.uniform(n, -2.0f, 2.0f), dt);
  const auto weight = testing::round_through(rng.uniform(s.channels * s.width, -0.5f, 0.5f), dt);
  const auto bias = testing::round_through(rng.uniform(s.channels, -1.0f, 1.0f), dt);
  const auto state = testing::round_through(rng.uniform(n * h, -2.0f, 2.0f), dt);

  // The definition: the window is the state then x; the new state is the window's last W − 1.
  std::vector<float> out(n);
  std::vector<float> rolled(n * h);
  std::vector<double> window(s.width);
  double max_abs_sum = 0.0;
  double max_abs_pre = 0.0;
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t c = r % s.channels;
    for (std::size_t k = 0; k < h; ++k) window[k] = state[r * h + k];
    window[h] = x[r];
    double abs_sum = 0.0;
    double pre = 0.0;
    out[r] = static_cast<float>(conv_tap(&weight[c * s.width], window.data(), s.width,
                                         s.use_bias ? bias[c] : 0.0, s.silu, abs_sum, pre));
    max_abs_sum = std::max(max_abs_sum, abs_sum);
    max_abs_pre = std::max(max_abs_pre, std::abs(pre));
    for (std::size_t k = 0; k < h; ++k) rolled[r * h + k] = static_cast<float>(window[k + 1]);
  }

  testing::TestSetup setup(update_name(s.width), dt);
  setup.input("x", x)
      .input("weight", weight)
      .input("bias", bias)
      .output("conv_state", n * h)
      .initial("conv_state", state)
      .output("out", n)
      .constant("batch", static_cast<double>(s.batch))
      .constant("channels", static_cast<double>(s.channels))
      .constant("use_bias", s.use_bias ? 1.0 : 0.0)
      .constant("silu", s.silu ? 1.0 : 0.0)
      .expect("out", out)
      .expect("conv_state", rolled)
      .tolerance("out", conv_tolerance(dt, s.width, s.silu, max_abs_sum, max_abs_pre))
      .tolerance("conv_state", testing::tolerance::exact());
  if (groups == 0) return setup.grid(testing::geometry_grid(setup));
  return setup.grid({{groups}, {32}});
}

bench::BenchSetup update_bench(const UpdateShape& s, DType dt) {
  const std::size_t n = s.batch * s.channels;
  const std::size_t state = n * (s.width - 1);
  bench::BenchSetup setup(update_name(s.width), dt);
  setup.random("x", n)
      .random("weight", s.channels * s.width, -0.5f, 0.5f)
      .random("bias", s.channels)
      .output("conv_state", state)
      .output("out", n)
      // The state is updated in place from its poison: the rolled-in copies of the poison bytes
      // would read as unwritten, so the written check is off.
      .partial_outputs()
      .constant("batch", static_cast<double>(s.batch))
      .constant("channels", static_cast<double>(s.channels))
      .constant("use_bias", 1.0)
      .constant("silu", 1.0);
  // x read and out written once, the state read and written once, the weights and bias read once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((2 * n + 2 * state + s.channels * (s.width + 1)) * dtype_size(dt))
      .flops(2 * n * s.width)
      .peer("ssm_conv1d_update", {{"batch", static_cast<double>(s.batch)},
                                  {"channels", static_cast<double>(s.channels)},
                                  {"width", static_cast<double>(s.width)}});
}

}  // namespace

// A decode batch of 5 sequences of 64 channels, Mamba's conv (bias, silu).
IRON_TEST(iron_ssm_conv1d_update_w4, batch5_channels64, F32, F16, BF16) {
  return update_setup({5, 64, 4}, 0, dt, rng);
}
IRON_TEST(iron_ssm_conv1d_update_w3, batch5_channels64, F32, F16, BF16) {
  return update_setup({5, 64, 3}, 0, dt, rng);
}
IRON_TEST(iron_ssm_conv1d_update_w2, batch5_channels64, F32, F16, BF16) {
  return update_setup({5, 64, 2}, 0, dt, rng);
}

// One sequence of 8 channels with neither bias nor silu; and 3 sequences of 320 channels on one
// group of 32 threads (fewer than the 120 or 240 vectors: the grid-stride loop wraps).
IRON_TEST(iron_ssm_conv1d_update_w4, single_sequence_plain, F32, F16, BF16) {
  return update_setup({1, 8, 4, false, false}, 0, dt, rng);
}
IRON_TEST(iron_ssm_conv1d_update_w2, small_grid, F32, F16, BF16) {
  return update_setup({3, 320, 2}, 1, dt, rng);
}
IRON_TEST(iron_ssm_conv1d_update_w3, small_grid_bias_only, F32, F16, BF16) {
  return update_setup({3, 320, 3, true, false}, 1, dt, rng);
}

// A decode batch of 256 sequences of Falcon-Mamba-7B's 8192 channels.
IRON_BENCH(iron_ssm_conv1d_update_w4, batch256_channels8192, F32, BF16) {
  return update_bench({256, 8192, 4}, dt);
}
IRON_BENCH(iron_ssm_conv1d_update_w3, batch256_channels8192, BF16) {
  return update_bench({256, 8192, 3}, dt);
}
IRON_BENCH(iron_ssm_conv1d_update_w2, batch256_channels8192, BF16) {
  return update_bench({256, 8192, 2}, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
