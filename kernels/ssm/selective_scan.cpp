/// iron_ssm_selective_scan_n16: Mamba-1's selective scan over a prefill, for N = 16 states a
/// channel (every Mamba-1 model's d_state). For each sequence b, channel d and state n, from
/// h = state[b, d, n] (initial = 1) or 0:
///   dt = softplus(delta[b, t, d] + delta_bias[d]) (softplus = 1; else the sum)
///   h  = exp(dt · A[d, n]) · h + dt · u[b, t, d] · B[b, t, n]
///   y[b, t, d] = (Σ_n C[b, t, n] · h + D[d] · u[b, t, d]) · silu(z[b, t, d]) (the gate with use_z)
/// and the last token's h is written back to state[b, d, n]: the decode step
/// (iron_ssm_selective_scan_update_n16) continues from it. The state math is f32.
///
/// Channels-last ([batch, seqlen, dim]) like the conv that feeds u, and B, C [batch, seqlen, N]
/// as x_proj writes them (one group of B and C shared by every channel).
///
/// ## Error bound
/// A running error analysis of the f32 recurrence, evaluated by the oracle
/// (kernels/ssm/scan_oracle.hpp) on each case's data: dt errs by u·|v| (+ 5u + 2u·dt under
/// softplus), each decay exp2(dt · A·log2 e) by |A|·Δdt + (2u + γ_T)·|dt·A| + 5u relative (γ_T
/// covers a chunk's decay taken from the chunk's summed dt), each input dt·u·B by its Δdt and two
/// roundings; the propagated errors decay with the state, and every term passes at most 2T + 2
/// roundings on a magnitude M (the recurrence on |·|). y adds γ_(N+1) for its N + 1 fused
/// multiply-adds and the gate's silu (γ_6, or (|z| + 10)·u with the approximate ops of f16/bf16)
/// with one rounding; y is then rounded to T.
///
/// ## How it runs
/// A group takes one sequence and 32 consecutive channels (one a lane, so every access to u,
/// delta, z and y is 32 consecutive elements) and splits the sequence into one chunk a simdgroup
/// (up to 8). Each thread keeps its channel's 16 states in registers. Pass 1 scans the chunk from
/// zero and sums its dt; the chunk's end state and dt sum go through threadgroup memory, and each
/// thread combines the chunks before its own from the initial state (decay exp(A·Σdt)). Pass 2
/// scans the chunk again from that start and writes y; the last chunk's thread writes the state.
/// B and C of a token are one broadcast vector load for the whole simdgroup. u and delta are read
/// twice (pass 2 mostly from the L2), z once, y written once.
///
/// ## Layout
/// - `u, delta, z, y  [batch, seqlen, dim]` T (z read only with use_z = 1: give any such buffer)
/// - `delta_bias, D   [dim]` f32 (zeros for a model without them)
/// - `A               [dim, 16]` f32 (−exp(A_log))
/// - `B, C            [batch, seqlen, 16]` T
/// - `state           [batch, dim, 16]` f32, InOut: read with initial = 1, written with the last
///   token's states
///
/// ## Dispatch
/// Reduction: batch · ⌈dim / 32⌉ groups, tpg a multiple of 32 up to 256 (a chunk a simdgroup).
/// Lanes past dim compute the last channel again and store nothing. softplus, use_z and initial
/// 0 or 1.
#include <array>
#include <cstdint>
#include <iron/iron.hpp>
#include <string>
#include <vector>

#include "../primitives/activation.hpp"
#include "scan_step.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr u32 kMaxChunks = 8;  ///< simdgroups a group: 256 threads
}  // namespace

IRON_KERNEL_TEMPLATE(iron_ssm_selective_scan, (u32 N),
                     (Tensor<T> u, Tensor<T> delta, Tensor<f32> delta_bias, Tensor<f32> A,
                      Tensor<T> B, Tensor<T> C, Tensor<f32> D, Tensor<T> z, InOut<f32> state,
                      Out<T> y, Constexpr<u32> batch, Constexpr<u32> seqlen, Constexpr<u32> dim,
                      Constexpr<u32> softplus, Constexpr<u32> use_z, Constexpr<u32> initial)) {
  constexpr u32 L = 16 / lane_bytes<T>();  // B and C elements in a 16-byte vector
  static_assert(N % L == 0 && N % 4 == 0);
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(32 * std::int64_t{kMaxChunks})});
  grid("[batch * ceil_div(dim, 32), 1, 1]");
  const std::string states = std::to_string(N);
  layout(u, "[batch, seqlen, dim]");
  layout(delta, "[batch, seqlen, dim]");
  layout(delta_bias, "[dim]");
  layout(A, "[dim, " + states + "]");
  layout(B, "[batch, seqlen, " + states + "]");
  layout(C, "[batch, seqlen, " + states + "]");
  layout(D, "[dim]");
  layout(z, "[batch, seqlen, dim]");
  layout(state, "[batch, dim, " + states + "]");
  layout(y, "[batch, seqlen, dim]");
  static_cast<void>(batch);  // the grid and layouts name it; the group id gives the sequence

  auto lane = lane_id();
  auto chunk = simdgroup_id();
  auto blocks = (dim + 31u) / 32u;
  auto b = program_id<0>() / blocks;
  auto channel = program_id<0>() % blocks * 32u + lane;
  auto active = channel < dim;
  auto d = min(channel, dim - 1u);
  auto length = (seqlen + simdgroup_count() - 1u) / simdgroup_count();
  auto first = min(chunk * length, seqlen);
  auto end = min(first + length, seqlen);

  std::vector<Expr<f32>> a2;  // A[d, n] · log2 e: exp(dt · A) = exp2(dt · a2)
  for (u32 v = 0; v < N / 4; ++v) {
    for (const auto& e : load_lanes<4>(A[d * N + v * 4])) a2.push_back(e * kLog2eF32);
  }
  auto bias = load(delta_bias[d]);
  auto skip = load(D[d]);

  // One token: h = exp(dt·A)·h + dt·u·B; returns dt and u.
  Regs<f32, N> h(0.0f);
  auto step = [&](const Expr<u32>& t) {
    auto at = (b * seqlen + t) * dim + d;
    auto dt = scan_dt(cast<f32>(load(delta[at])), bias, softplus);
    auto x = cast<f32>(load(u[at]));
    auto x_dt = dt * x;
    auto bc = (b * seqlen + t) * N;
    for (u32 v = 0; v < N / L; ++v) {
      const auto bv = load_lanes<L>(B[bc + v * L]);
      for (u32 l = 0; l < L; ++l) {
        const u32 n = v * L + l;
        h[n] = fma(exp2(dt * a2[n]), h[n].get(), x_dt * cast<f32>(bv[l]));
      }
    }
    return std::array<Expr<f32>, 2>{dt, x};
  };

  // Pass 1: the chunk from zero, and its summed dt.
  Var<f32> total = 0.0f;
  for (auto t : range(first, end, 1u)) total += step(t)[0];
  auto ends = shared<f32>(kMaxChunks * N * 32);  // chunk j's state n of lane l at (j·N + n)·32 + l
  auto sums = shared<f32>(kMaxChunks * 32);      // chunk j's dt sum of lane l at j·32 + l
  for (u32 n = 0; n < N; ++n) store(ends[(chunk * N + n) * 32u + lane], h[n].get());
  store(sums[chunk * 32u + lane], Expr<f32>(total));
  barrier();

  // The chunk's start: the initial state through the chunks before it.
  auto row = (b * dim + d) * N;
  IRON_IF(initial != 0u) {
    for (u32 n = 0; n < N; ++n) h[n] = load(state[row + n]);
  }
  IRON_ELSE {
    for (u32 n = 0; n < N; ++n) h[n] = 0.0f;
  }
  for (auto j : range(0u, chunk, 1u)) {
    auto sum = load(sums[j * 32u + lane]);
    for (u32 n = 0; n < N; ++n) {
      h[n] = fma(exp2(sum * a2[n]), h[n].get(), load(ends[(j * N + n) * 32u + lane]));
    }
  }

  // Pass 2: the chunk again from its start, writing y.
  for (auto t : range(first, end, 1u)) {
    const auto [dt, x] = step(t);
    auto bc = (b * seqlen + t) * N;
    Var<f32> out = skip * x;
    for (u32 v = 0; v < N / L; ++v) {
      const auto cv = load_lanes<L>(C[bc + v * L]);
      for (u32 l = 0; l < L; ++l) out = fma(cast<f32>(cv[l]), h[v * L + l].get(), Expr<f32>(out));
    }
    auto at = (b * seqlen + t) * dim + d;
    IRON_IF(use_z != 0u) { out = Expr<f32>(out) * silu<T>(cast<f32>(load(z[at]))); }
    IRON_IF(active) { store(y[at], cast<T>(Expr<f32>(out))); }
  }

  barrier();  // every thread has read the initial state
  IRON_IF(active && chunk == simdgroup_count() - 1u) {
    for (u32 n = 0; n < N; ++n) store(state[row + n], h[n].get());
  }
}
IRON_KERNEL_VARIANT(iron_ssm_selective_scan, n16, 16);

// One group a sequence and 32 channels; 8 chunks (256 threads) while that leaves under four
// groups a multiprocessor, else 4.
IRON_GEOMETRY(iron_ssm_selective_scan_n16) {
  const std::uint64_t groups = q.constant("batch") * ((q.constant("dim") + 31) / 32);
  const std::uint32_t tpg = groups < 4ull * q.device.multiprocessors ? 256 : 128;
  return Geometry::per_row(groups, q.threads_per_group(tpg));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <limits>

#include "scan_oracle.hpp"

namespace iron::kernels {

namespace {

/// The case; tpg 0 takes the kernel's geometry. Without an initial state the state starts as NaN,
/// which the kernel must not read.
testing::TestSetup scan_setup(const ScanShape& s, std::uint32_t tpg, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const ScanInputs in = scan_inputs(s, dt, rng);
  const ScanWant want = scan_oracle(in);
  const std::size_t n = in.u.size();
  testing::TestSetup setup("iron_ssm_selective_scan_n16", dt);
  setup.input("u", in.u)
      .input("delta", in.delta)
      .input("delta_bias", in.delta_bias)
      .input("A", in.A)
      .input("B", in.B)
      .input("C", in.C)
      .input("D", in.D)
      .input("z", in.z)
      .output("state", want.state.size())
      .initial("state", s.initial ? in.h0
                                  : std::vector<float>(want.state.size(),
                                                       std::numeric_limits<float>::quiet_NaN()))
      .output("y", n)
      .constant("batch", static_cast<double>(s.batch))
      .constant("seqlen", static_cast<double>(s.seqlen))
      .constant("dim", static_cast<double>(s.dim))
      .constant("softplus", s.softplus ? 1.0 : 0.0)
      .constant("use_z", s.use_z ? 1.0 : 0.0)
      .constant("initial", s.initial ? 1.0 : 0.0)
      .expect("y", want.y)
      .expect("state", want.state)
      .tolerance("y", tol::stored(dt, want.y_bound, 0.0))
      .tolerance("state", tol::stored(DType::F32, want.state_bound, 0.0));
  if (tpg == 0) return setup.grid(testing::geometry_grid(setup));
  return setup.grid_rows(static_cast<std::uint32_t>(s.batch * ((s.dim + 31) / 32)), tpg);
}

bench::BenchSetup scan_bench(const ScanShape& s, DType dt) {
  const std::size_t n = s.batch * s.seqlen * s.dim;
  const std::size_t bc = s.batch * s.seqlen * kStates;
  const std::size_t states = s.batch * s.dim * kStates;
  bench::BenchSetup setup("iron_ssm_selective_scan_n16", dt);
  setup.random("u", n)
      .random("delta", n)
      .random("delta_bias", s.dim, -6.0f, -2.0f)
      .random("A", s.dim * kStates, -16.0f, -1.0f)
      .random("B", bc)
      .random("C", bc)
      .random("D", s.dim, 0.5f, 1.5f)
      .random("z", n)
      .output("state", states)
      .output("y", n)
      .constant("batch", static_cast<double>(s.batch))
      .constant("seqlen", static_cast<double>(s.seqlen))
      .constant("dim", static_cast<double>(s.dim))
      .constant("softplus", 1.0)
      .constant("use_z", 1.0)
      .constant("initial", 0.0);
  // u, delta and z read once, y written once, B and C read once, the state written once; A,
  // delta_bias and D read once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(4 * n * dtype_size(dt) + 2 * bc * dtype_size(dt) +
                   4 * (states + s.dim * (kStates + 2)))
      .peer("ssm_selective_scan", {{"batch", static_cast<double>(s.batch)},
                                   {"seqlen", static_cast<double>(s.seqlen)},
                                   {"dim", static_cast<double>(s.dim)},
                                   {"states", static_cast<double>(kStates)}});
}

}  // namespace

// Two sequences of 37 tokens, 40 channels (a second group of 8 active lanes), four chunks of 10
// (the last of 7): softplus, gate, from zero.
IRON_TEST(iron_ssm_selective_scan_n16, two_sequences_of_37, F32, F16, BF16) {
  return scan_setup({2, 37, 40}, 128, dt, rng);
}

// From a given state, eight chunks, the kernel's geometry.
IRON_TEST(iron_ssm_selective_scan_n16, from_a_state, F32, F16, BF16) {
  return scan_setup({1, 100, 64, true, true, true}, 0, dt, rng);
}

// One token from a state: every chunk but the first is empty and passes the start through.
IRON_TEST(iron_ssm_selective_scan_n16, single_token_from_a_state, F32, F16, BF16) {
  return scan_setup({3, 1, 32, true, true, true}, 128, dt, rng);
}

// Three tokens, no softplus (dt = delta + bias) and no gate, one chunk a simdgroup of 32.
IRON_TEST(iron_ssm_selective_scan_n16, plain_one_chunk, F32, F16, BF16) {
  return scan_setup({2, 3, 16, false, false, false}, 32, dt, rng);
}

// Mamba-2.8B's scan (5120 channels) over 4 sequences of 2048 tokens.
IRON_BENCH(iron_ssm_selective_scan_n16, batch4_seqlen2048_dim5120, F32, BF16) {
  return scan_bench({4, 2048, 5120}, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
