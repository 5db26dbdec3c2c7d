/// iron_ssm_conv1d_w{2,3,4}: the causal depthwise conv1d of a Mamba block over a prefill,
/// out[b, t, c] = act(bias[c] + Σ_{k<W} weight[c, k] · x[b, t − (W − 1) + k, c]) with x = 0 before
/// the sequence, act = silu (silu = 1) or identity; and the conv state the decode step
/// (iron_ssm_conv1d_update) continues from: conv_state[b, c, j] = x[b, seqlen − (W − 1) + j, c]
/// (0 before the sequence).
///
/// Channels-last, as the in-projection writes its output and the selective scan reads it: a token
/// is a row of channels, so a thread's 16-byte vector is 4 or 8 channels of one token.
///
/// ## Error bound
/// The pre-activation a is W fused multiply-adds in f32 starting from the bias (0 without), so it
/// errs by γ_W·(|bias| + Σ_k |weight·x|); silu (slope below 1.1) passes that on and adds its own
/// relative error: γ_6 in f32 (exp, add, division), (|a| + 10)·u with the approximate ops of
/// f16/bf16 (kernels/primitives/activation.hpp: the exponent's rounding scaled by |a|,
/// exp2.approx 5u, the add, rcp.approx 3u, the product). The conv state is copied: exact.
///
/// ## How it runs
/// A thread takes one 16-byte vector of channels of one sequence over a chunk of 32 tokens: it
/// reads the W − 1 tokens before the chunk into a register window, then for each token reads its
/// vector once, writes the output vector once and slides the window. x is read from memory once
/// (the W − 1 tokens of halo come from the L2, where the previous chunk's thread left them), out
/// written once. The thread of a sequence's last chunk writes the window, the state, at the end.
///
/// ## Layout
/// - `x, out    [batch, seqlen, channels]` T
/// - `weight    [channels, W]` T (Mamba's conv1d weight [channels, 1, W] squeezed)
/// - `bias      [channels]` T, read only with use_bias = 1 (give any [channels] buffer otherwise)
/// - `conv_state [batch, channels, W − 1]` T, oldest first
/// - channels a multiple of 8 (whole 16-byte vectors in every dtype; every model's is)
///
/// ## Dispatch
/// Elementwise, grid-stride over batch · ⌈seqlen / 32⌉ · channels / L items (L = 4 for f32, 8
/// for f16/bf16): any grid up to one item a thread; tpg at most 256, so that a thread may hold
/// its W·L weights, L biases and (W − 1)·L window in registers. use_bias and silu 0 or 1.
#include <array>
#include <iron/iron.hpp>
#include <string>
#include <vector>

#include "../primitives/activation.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr u32 kConvChunk = 32;  ///< tokens a thread walks
}  // namespace

IRON_KERNEL_TEMPLATE(iron_ssm_conv1d, (u32 W),
                     (Tensor<T> x, Tensor<T> weight, Tensor<T> bias, Out<T> out, Out<T> conv_state,
                      Constexpr<u32> batch, Constexpr<u32> seqlen, Constexpr<u32> channels,
                      Constexpr<u32> use_bias, Constexpr<u32> silu)) {
  static_assert(W >= 2 && W <= 4);
  constexpr u32 L = 16 / lane_bytes<T>();
  constexpr u32 H = W - 1;  // the window: the inputs before the current one
  dispatch(elementwise, {at_most(256)});
  grid("[<= ceil_div(batch * ceil_div(seqlen, " + std::to_string(kConvChunk) + ") * channels / " +
       std::to_string(L) + ", tpg), 1, 1]");
  layout(x, "[batch, seqlen, channels]");
  layout(weight, "[channels, " + std::to_string(W) + "]");
  layout(bias, "[channels]");
  layout(out, "[batch, seqlen, channels]");
  layout(conv_state, "[batch, channels, " + std::to_string(H) + "]");
  require_multiple_of(channels, 8);
  auto vectors = channels / L;
  auto chunks = (seqlen + (kConvChunk - 1)) / kConvChunk;
  for (auto i : range(global_id<0>(), batch * chunks * vectors, grid_threads<0>())) {
    auto c = i % vectors * L;
    auto rest = i / vectors;
    auto b = rest / chunks;
    auto first = rest % chunks * kConvChunk;
    auto end = min(first + kConvChunk, seqlen);
    auto row = b * seqlen;  // the sequence's first token

    std::vector<Expr<f32>> w;  // w[l * W + k]: channel c + l, tap k
    std::vector<Expr<f32>> shift;
    for (u32 l = 0; l < L; ++l) {
      for (u32 k = 0; k < W; ++k) w.push_back(cast<f32>(load(weight[(c + l) * W + k])));
      shift.push_back(select(use_bias != 0u, cast<f32>(load(bias[c + l])), Expr<f32>(0.0f)));
    }

    Regs<f32, std::size_t{H} * L> window(0.0f);  // window[k·L + l]: x[t − H + k, c + l] before t
    for (u32 k = 0; k < H; ++k) {
      IRON_IF(first + k >= H) {
        const auto v = load_lanes<L>(x[(row + first + k - H) * channels + c]);
        for (u32 l = 0; l < L; ++l) window[k * L + l] = cast<f32>(v[l]);
      }
    }

    for (auto t : range(first, end, 1u)) {
      auto at = (row + t) * channels + c;
      const auto v = load_lanes<L>(x[at]);
      std::array<Expr<T>, L> y;
      for (u32 l = 0; l < L; ++l) {
        auto newest = cast<f32>(v[l]);
        Expr<f32> a = shift[l];
        for (u32 k = 0; k < H; ++k) a = fma(w[l * W + k], window[k * L + l].get(), a);
        a = fma(w[l * W + H], newest, a);
        y[l] = cast<T>(select(silu != 0u, kernels::silu<T>(a), a));
        for (u32 k = 0; k + 1 < H; ++k) window[k * L + l] = window[(k + 1) * L + l].get();
        window[(H - 1) * L + l] = newest;
      }
      store_lanes(out[at], y);
    }

    IRON_IF(end == seqlen) {
      for (u32 l = 0; l < L; ++l) {
        for (u32 k = 0; k < H; ++k) {
          store(conv_state[(b * channels + c + l) * H + k], cast<T>(window[k * L + l].get()));
        }
      }
    }
  }
}
IRON_KERNEL_VARIANT(iron_ssm_conv1d, w2, 2);
IRON_KERNEL_VARIANT(iron_ssm_conv1d, w3, 3);
IRON_KERNEL_VARIANT(iron_ssm_conv1d, w4, 4);

namespace {

/// One item (a vector of channels over a chunk of tokens) a thread, groups of 256.
Geometry conv1d_geometry(const GeometryQuery& q) {
  const std::uint64_t chunks = (q.constant("seqlen") + kConvChunk - 1) / kConvChunk;
  return Geometry::elementwise(
      q.constant("batch") * chunks * vector_count(q.constant("channels"), q.dtype),
      q.threads_per_group(256));
}

}  // namespace

IRON_GEOMETRY(iron_ssm_conv1d_w2) { return conv1d_geometry(q); }
IRON_GEOMETRY(iron_ssm_conv1d_w3) { return conv1d_geometry(q); }
IRON_GEOMETRY(iron_ssm_conv1d_w4) { return conv1d_geometry(q); }

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

struct ConvShape {
  std::size_t batch, seqlen, channels, width;
  bool use_bias = true;
  bool silu = true;
};

struct ConvWant {
  std::vector<float> out, state;
  double max_abs_sum = 0.0;
  double max_abs_pre = 0.0;
};

/// The definition, token by token in double.
ConvWant conv1d_oracle(const std::vector<float>& x, const std::vector<float>& weight,
                       const std::vector<float>& bias, const ConvShape& s) {
  const std::size_t h = s.width - 1;
  ConvWant want;
  want.out.resize(x.size());
  want.state.resize(s.batch * s.channels * h);
  std::vector<double> window(s.width);
  for (std::size_t b = 0; b < s.batch; ++b) {
    for (std::size_t c = 0; c < s.channels; ++c) {
      const auto input = [&](std::ptrdiff_t t) {
        return t < 0 ? 0.0 : static_cast<double>(x[(b * s.seqlen + t) * s.channels + c]);
      };
      for (std::size_t t = 0; t < s.seqlen; ++t) {
        for (std::size_t k = 0; k < s.width; ++k) {
          window[k] = input(static_cast<std::ptrdiff_t>(t + k) - static_cast<std::ptrdiff_t>(h));
        }
        double abs_sum = 0.0;
        double pre = 0.0;
        want.out[(b * s.seqlen + t) * s.channels + c] =
            static_cast<float>(conv_tap(&weight[c * s.width], window.data(), s.width,
                                        s.use_bias ? bias[c] : 0.0, s.silu, abs_sum, pre));
        want.max_abs_sum = std::max(want.max_abs_sum, abs_sum);
        want.max_abs_pre = std::max(want.max_abs_pre, std::abs(pre));
      }
      for (std::size_t j = 0; j < h; ++j) {
        want.state[(b * s.channels + c) * h + j] = static_cast<float>(
            input(static_cast<std::ptrdiff_t>(s.seqlen + j) - static_cast<std::ptrdiff_t>(h)));
      }
    }
  }
  return want;
}

std::string conv1d_name(std::size_t width) { return "iron_ssm_conv1d_w" + std::to_string(width); }

/// The case; groups 0 takes the kernel's geometry.
testing::TestSetup conv1d_setup(const ConvShape& s, std::uint32_t groups, DType dt,
                                testing::Rng& rng) {
  const std::size_t n = s.batch * s.seqlen * s.channels;
  const auto x = testing::round_through(rng.uniform(n, -2.0f, 2.0f), dt);
  const auto weight = testing::round_through(rng.uniform(s.channels * s.width, -0.5f, 0.5f), dt);
  const auto bias = testing::round_through(rng.uniform(s.channels, -1.0f, 1.0f), dt);
  const ConvWant want = conv1d_oracle(x, weight, bias, s);
  testing::TestSetup setup(conv1d_name(s.width), dt);
  setup.input("x", x)
      .input("weight", weight)
      .input("bias", bias)
      .output("out", n)
      .output("conv_state", want.state.size())
      .constant("batch", static_cast<double>(s.batch))
      .constant("seqlen", static_cast<double>(s.seqlen))
      .constant("channels", static_cast<double>(s.channels))
      .constant("use_bias", s.use_bias ? 1.0 : 0.0)
      .constant("silu", s.silu ? 1.0 : 0.0)
      .expect("out", want.out)
      .expect("conv_state", want.state)
      .tolerance("out", conv_tolerance(dt, s.width, s.silu, want.max_abs_sum, want.max_abs_pre))
      .tolerance("conv_state", testing::tolerance::exact());
  if (groups == 0) return setup.grid(testing::geometry_grid(setup));
  return setup.grid({{groups}, {32}});
}

bench::BenchSetup conv1d_bench(const ConvShape& s, DType dt) {
  const std::size_t n = s.batch * s.seqlen * s.channels;
  const std::size_t state = s.batch * s.channels * (s.width - 1);
  bench::BenchSetup setup(conv1d_name(s.width), dt);
  setup.random("x", n)
      .random("weight", s.channels * s.width, -0.5f, 0.5f)
      .random("bias", s.channels)
      .output("out", n)
      .output("conv_state", state)
      .constant("batch", static_cast<double>(s.batch))
      .constant("seqlen", static_cast<double>(s.seqlen))
      .constant("channels", static_cast<double>(s.channels))
      .constant("use_bias", 1.0)
      .constant("silu", 1.0);
  // x read once, out and the state written once, the weights and bias read once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((2 * n + state + s.channels * (s.width + 1)) * dtype_size(dt))
      .flops(2 * n * s.width)
      .peer("ssm_conv1d", {{"batch", static_cast<double>(s.batch)},
                           {"seqlen", static_cast<double>(s.seqlen)},
                           {"channels", static_cast<double>(s.channels)},
                           {"width", static_cast<double>(s.width)}});
}

}  // namespace

// Mamba's conv (bias, silu) over two sequences of 37 tokens: one chunk of 32 and a tail of 5.
IRON_TEST(iron_ssm_conv1d_w4, two_sequences_of_37, F32, F16, BF16) {
  return conv1d_setup({2, 37, 64, 4}, 0, dt, rng);
}
IRON_TEST(iron_ssm_conv1d_w3, two_sequences_of_37, F32, F16, BF16) {
  return conv1d_setup({2, 37, 64, 3}, 0, dt, rng);
}
IRON_TEST(iron_ssm_conv1d_w2, two_sequences_of_37, F32, F16, BF16) {
  return conv1d_setup({2, 37, 64, 2}, 0, dt, rng);
}

// One token a sequence: every tap but the last reads the zeros before it, and the state is zeros
// then the token. Neither bias nor silu; 8 channels (one vector in f16/bf16, two in f32).
IRON_TEST(iron_ssm_conv1d_w4, single_token_plain, F32, F16, BF16) {
  return conv1d_setup({3, 1, 8, 4, false, false}, 0, dt, rng);
}
IRON_TEST(iron_ssm_conv1d_w2, single_token_plain, F32, F16, BF16) {
  return conv1d_setup({3, 1, 8, 2, false, false}, 0, dt, rng);
}

// Two tokens (fewer than the W − 1 = 3 of the window) with the bias alone; and three chunks of
// 32 a sequence on one group of 32 threads, fewer than the items, so the grid-stride loop wraps.
IRON_TEST(iron_ssm_conv1d_w4, two_tokens_bias_only, F32, F16, BF16) {
  return conv1d_setup({2, 2, 24, 4, true, false}, 0, dt, rng);
}
IRON_TEST(iron_ssm_conv1d_w3, three_chunks_small_grid, F32, F16, BF16) {
  return conv1d_setup({2, 70, 80, 3}, 1, dt, rng);
}
IRON_TEST(iron_ssm_conv1d_w4, three_chunks_small_grid, F32, F16, BF16) {
  return conv1d_setup({1, 96, 96, 4}, 1, dt, rng);
}

// Mamba-2.8B's conv (5120 channels) over 4 sequences of 2048 tokens.
IRON_BENCH(iron_ssm_conv1d_w4, batch4_seqlen2048_channels5120, F32, BF16) {
  return conv1d_bench({4, 2048, 5120, 4}, dt);
}
IRON_BENCH(iron_ssm_conv1d_w3, batch4_seqlen2048_channels5120, BF16) {
  return conv1d_bench({4, 2048, 5120, 3}, dt);
}
IRON_BENCH(iron_ssm_conv1d_w2, batch4_seqlen2048_channels5120, BF16) {
  return conv1d_bench({4, 2048, 5120, 2}, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
