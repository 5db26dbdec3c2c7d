/// iron_ssm_ssd_scan_n{64,128}: Mamba-2's state-space dual (SSD) layer over a prefill, N states a
/// head dimension, as a scan chunked over the sequence. For each sequence b, head h, head
/// dimension p and state n, with g = h · ngroups / heads the head's group of B and C, from
/// s = state[b, h, p, n] (initial = 1) or 0:
///   dt = softplus(dt_in[b, t, h] + dt_bias[h]) (softplus = 1; else the sum)
///   s  = exp(dt · A[h]) · s + dt · x[b, t, h, p] · B[b, t, g, n]
///   y[b, t, h, p] = (Σ_n C[b, t, g, n] · s + D[h] · x[b, t, h, p]) · silu(z[b, t, h, p]) (use_z)
/// and the last token's s is written back to state[b, h, p, n], where the decode step
/// (iron_ssm_ssd_update) continues. The state math is f32.
///
/// ## Error bound
/// The selective scan's (kernels/ssm/scan_oracle.hpp), a channel being a (head, head dimension)
/// pair whose decay is the head's: each decay exp(dt·A) errs by |A|·Δdt + (2u + γ_T)·|dt·A| + 5u
/// relative (γ_T for a chunk's decay from its summed dt), each input dt·x·B by its Δdt and two
/// roundings, every term passes at most 2T + 2 roundings; y's sum (N/4 fused multiply-adds a
/// lane, two shuffle additions, the D term) is within γ_(N+1); the gate's silu adds γ_6, or
/// (|z| + 10)·u with the approximate ops of f16/bf16.
///
/// ## How it runs
/// A group takes one sequence, one head and 8 of its head dimensions, and splits the sequence
/// into one chunk a simdgroup (up to 4). In a simdgroup, lane 4r + k holds states k·N/4 … of head
/// dimension r: one decay exp a token for all of them. Pass 1 scans the chunk from zero and sums
/// its dt; the chunk's end states and dt sum go through threadgroup memory and each thread joins
/// the chunks before its own to the initial state (decay exp(A·Σdt)); pass 2 scans the chunk
/// again from that start, and each head dimension's y is its four lanes' partial sums joined by
/// two shuffles. B and C of a token are read by every group of the sequence (from the L2); x, dt,
/// B and C are read twice (pass 2 mostly from the L2), z once, y written once.
///
/// ## Layout
/// - `x, z, y          [batch, seqlen, heads, head_dim]` T (z read only with use_z = 1)
/// - `dt               [batch, seqlen, heads]` T
/// - `dt_bias, A, D    [heads]` f32 (A = −exp(A_log))
/// - `B, C             [batch, seqlen, ngroups, N]` T; heads a multiple of ngroups
/// - `state            [batch, heads, head_dim, N]` f32, InOut: read with initial = 1, written
///   with the last token's states
/// - head_dim a multiple of 8 (every model's is)
///
/// ## Dispatch
/// Reduction: batch · heads · head_dim / 8 groups, tpg a multiple of 32 up to 128 (a chunk a
/// simdgroup). softplus, use_z and initial 0 or 1.
#include <array>
#include <cstdint>
#include <iron/iron.hpp>
#include <string>

#include "../primitives/activation.hpp"
#include "scan_step.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr u32 kSsdChunks = 4;  ///< simdgroups a group at most
constexpr u32 kSsdRows = 8;    ///< head dimensions a group
constexpr u32 kSsdSlices = 4;  ///< lanes a head dimension
}  // namespace

IRON_KERNEL_TEMPLATE(iron_ssm_ssd_scan, (u32 N),
                     (Tensor<T> x, Tensor<T> dt, Tensor<f32> dt_bias, Tensor<f32> A, Tensor<T> B,
                      Tensor<T> C, Tensor<f32> D, Tensor<T> z, InOut<f32> state, Out<T> y,
                      Constexpr<u32> batch, Constexpr<u32> seqlen, Constexpr<u32> heads,
                      Constexpr<u32> head_dim, Constexpr<u32> ngroups, Constexpr<u32> softplus,
                      Constexpr<u32> use_z, Constexpr<u32> initial)) {
  constexpr u32 Q = N / kSsdSlices;  // states a lane
  constexpr u32 L = 4;               // B and C elements a load: 16 bytes of f32, 8 of f16/bf16
  static_assert(kSsdRows * kSsdSlices == 32 && Q % L == 0);
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(32 * std::int64_t{kSsdChunks})});
  grid("[batch * heads * head_dim / " + std::to_string(kSsdRows) + ", 1, 1]");
  const std::string states = std::to_string(N);
  layout(x, "[batch, seqlen, heads, head_dim]");
  layout(dt, "[batch, seqlen, heads]");
  layout(dt_bias, "[heads]");
  layout(A, "[heads]");
  layout(B, "[batch, seqlen, ngroups, " + states + "]");
  layout(C, "[batch, seqlen, ngroups, " + states + "]");
  layout(D, "[heads]");
  layout(z, "[batch, seqlen, heads, head_dim]");
  layout(state, "[batch, heads, head_dim, " + states + "]");
  layout(y, "[batch, seqlen, heads, head_dim]");
  require_multiple_of(head_dim, kSsdRows);
  static_cast<void>(batch);  // the grid and layouts name it; the group id gives the sequence

  auto lane = lane_id();
  auto chunk = simdgroup_id();
  auto tiles = head_dim / kSsdRows;
  auto bh = program_id<0>() / tiles;  // b · heads + h
  auto h = bh % heads;
  auto b = bh / heads;
  auto p = program_id<0>() % tiles * kSsdRows + lane / kSsdSlices;
  auto slice = lane % kSsdSlices;
  auto first_state = slice * Q;
  auto g = h * ngroups / heads;
  auto length = (seqlen + simdgroup_count() - 1u) / simdgroup_count();
  auto first = min(chunk * length, seqlen);
  auto end = min(first + length, seqlen);
  auto rate = load(A[h]);
  auto bias = load(dt_bias[h]);
  auto skip = load(D[h]);

  // One token: s = exp(dt·A)·s + dt·x·B over the lane's states; returns dt and x.
  Regs<f32, Q> s(0.0f);
  auto step = [&](const Expr<u32>& t) {
    auto token = b * seqlen + t;
    auto step_dt = scan_dt(cast<f32>(load(dt[token * heads + h])), bias, softplus);
    auto decay = exp(step_dt * rate);
    auto xin = cast<f32>(load(x[(token * heads + h) * head_dim + p]));
    auto x_dt = step_dt * xin;
    auto bc = (token * ngroups + g) * N + first_state;
    for (u32 v = 0; v < Q / L; ++v) {
      const auto bv = load_lanes<L>(B[bc + v * L]);
      for (u32 l = 0; l < L; ++l) {
        s[v * L + l] = fma(decay, s[v * L + l].get(), x_dt * cast<f32>(bv[l]));
      }
    }
    return std::array<Expr<f32>, 2>{step_dt, xin};
  };

  // Pass 1: the chunk from zero, and its summed dt.
  Var<f32> total = 0.0f;
  for (auto t : range(first, end, 1u)) total += step(t)[0];
  auto ends = shared<f32>(kSsdChunks * Q * 32);  // chunk j's state q of lane l at (j·Q + q)·32 + l
  auto sums = shared<f32>(kSsdChunks);           // chunk j's dt sum
  for (u32 q = 0; q < Q; ++q) store(ends[(chunk * Q + q) * 32u + lane], s[q].get());
  IRON_IF(lane == 0u) { store(sums[chunk], Expr<f32>(total)); }
  barrier();

  // The chunk's start: the initial state through the chunks before it.
  auto row = (bh * head_dim + p) * N + first_state;
  IRON_IF(initial != 0u) {
    for (u32 q = 0; q < Q; ++q) s[q] = load(state[row + q]);
  }
  IRON_ELSE {
    for (u32 q = 0; q < Q; ++q) s[q] = 0.0f;
  }
  for (auto j : range(0u, chunk, 1u)) {
    auto decay = exp(rate * load(sums[j]));
    for (u32 q = 0; q < Q; ++q) {
      s[q] = fma(decay, s[q].get(), load(ends[(j * Q + q) * 32u + lane]));
    }
  }

  // Pass 2: the chunk again from its start, writing y.
  for (auto t : range(first, end, 1u)) {
    const auto [step_dt, xin] = step(t);
    auto token = b * seqlen + t;
    auto bc = (token * ngroups + g) * N + first_state;
    Expr<f32> partial = 0.0f;
    for (u32 v = 0; v < Q / L; ++v) {
      const auto cv = load_lanes<L>(C[bc + v * L]);
      for (u32 l = 0; l < L; ++l) partial = fma(cast<f32>(cv[l]), s[v * L + l].get(), partial);
    }
    for (u32 m = 1; m < kSsdSlices; m *= 2) partial = partial + simd_shuffle_xor(partial, m);
    IRON_IF(slice == 0u) {
      auto at = (token * heads + h) * head_dim + p;
      Var<f32> out = fma(skip, xin, partial);
      IRON_IF(use_z != 0u) { out = Expr<f32>(out) * silu<T>(cast<f32>(load(z[at]))); }
      store(y[at], cast<T>(Expr<f32>(out)));
    }
  }

  barrier();  // every thread has read the initial state
  IRON_IF(chunk == simdgroup_count() - 1u) {
    for (u32 q = 0; q < Q; ++q) store(state[row + q], s[q].get());
  }
}
IRON_KERNEL_VARIANT(iron_ssm_ssd_scan, n64, 64);
IRON_KERNEL_VARIANT(iron_ssm_ssd_scan, n128, 128);

namespace {

/// A group a sequence, head and 8 head dimensions; 4 chunks (128 threads) while that leaves under
/// four groups a multiprocessor, else 2.
Geometry ssd_scan_geometry(const GeometryQuery& q) {
  const std::uint64_t groups =
      q.constant("batch") * q.constant("heads") * q.constant("head_dim") / kSsdRows;
  const std::uint32_t tpg = groups < 4ull * q.device.multiprocessors ? 128 : 64;
  return Geometry::per_row(groups, q.threads_per_group(tpg));
}

}  // namespace

IRON_GEOMETRY(iron_ssm_ssd_scan_n64) { return ssd_scan_geometry(q); }
IRON_GEOMETRY(iron_ssm_ssd_scan_n128) { return ssd_scan_geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>
#include <limits>

#include "ssd_oracle.hpp"

namespace iron::kernels {

namespace {

std::string ssd_scan_name(std::size_t states) {
  return "iron_ssm_ssd_scan_n" + std::to_string(states);
}

/// The case; tpg 0 takes the kernel's geometry. Without an initial state the state starts as NaN,
/// which the kernel must not read.
testing::TestSetup ssd_scan_setup(const SsdShape& s, std::uint32_t tpg, DType dt,
                                  testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const SsdInputs in = ssd_inputs(s, dt, rng);
  const ScanWant want = scan_oracle(in.scan);
  testing::TestSetup setup(ssd_scan_name(s.states), dt);
  setup.input("x", in.scan.u)
      .input("dt", in.dt)
      .input("dt_bias", in.dt_bias)
      .input("A", in.A)
      .input("B", in.scan.B)
      .input("C", in.scan.C)
      .input("D", in.D)
      .input("z", in.scan.z)
      .output("state", want.state.size())
      .initial("state", s.initial ? in.scan.h0
                                  : std::vector<float>(want.state.size(),
                                                       std::numeric_limits<float>::quiet_NaN()))
      .output("y", want.y.size())
      .constant("batch", static_cast<double>(s.batch))
      .constant("seqlen", static_cast<double>(s.seqlen))
      .constant("heads", static_cast<double>(s.heads))
      .constant("head_dim", static_cast<double>(s.head_dim))
      .constant("ngroups", static_cast<double>(s.groups))
      .constant("softplus", s.softplus ? 1.0 : 0.0)
      .constant("use_z", s.use_z ? 1.0 : 0.0)
      .constant("initial", s.initial ? 1.0 : 0.0)
      .expect("y", want.y)
      .expect("state", want.state)
      .tolerance("y", tol::stored(dt, want.y_bound, 0.0))
      .tolerance("state", tol::stored(DType::F32, want.state_bound, 0.0));
  if (tpg == 0) return setup.grid(testing::geometry_grid(setup));
  return setup.grid_rows(static_cast<std::uint32_t>(s.batch * s.heads * s.head_dim / 8), tpg);
}

bench::BenchSetup ssd_scan_bench(const SsdShape& s, DType dt) {
  const std::size_t n = s.batch * s.seqlen * s.heads * s.head_dim;
  const std::size_t bc = s.batch * s.seqlen * s.groups * s.states;
  const std::size_t states = s.batch * s.heads * s.head_dim * s.states;
  bench::BenchSetup setup(ssd_scan_name(s.states), dt);
  setup.random("x", n)
      .random("dt", s.batch * s.seqlen * s.heads)
      .random("dt_bias", s.heads, -6.0f, -2.0f)
      .random("A", s.heads, -16.0f, -1.0f)
      .random("B", bc)
      .random("C", bc)
      .random("D", s.heads, 0.5f, 1.5f)
      .random("z", n)
      .output("state", states)
      .output("y", n)
      .constant("batch", static_cast<double>(s.batch))
      .constant("seqlen", static_cast<double>(s.seqlen))
      .constant("heads", static_cast<double>(s.heads))
      .constant("head_dim", static_cast<double>(s.head_dim))
      .constant("ngroups", static_cast<double>(s.groups))
      .constant("softplus", 1.0)
      .constant("use_z", 1.0)
      .constant("initial", 0.0);
  // x and z read once, y written once, dt, B and C read once, the state written once, the
  // per-head f32 values read once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((3 * n + s.batch * s.seqlen * s.heads + 2 * bc) * dtype_size(dt) + 4 * states +
                   12 * s.heads)
      .peer("ssm_ssd_scan", {{"batch", static_cast<double>(s.batch)},
                             {"seqlen", static_cast<double>(s.seqlen)},
                             {"heads", static_cast<double>(s.heads)},
                             {"head_dim", static_cast<double>(s.head_dim)},
                             {"ngroups", static_cast<double>(s.groups)},
                             {"states", static_cast<double>(s.states)}});
}

}  // namespace

// Two sequences of 37 tokens, 4 heads of 16 in 2 groups, four chunks of 10 (the last of 7):
// softplus, gate, from zero.
IRON_TEST(iron_ssm_ssd_scan_n128, two_sequences_of_37, F32, F16, BF16) {
  return ssd_scan_setup({2, 37, 4, 16, 2, 128, true, true, false}, 128, dt, rng);
}
IRON_TEST(iron_ssm_ssd_scan_n64, two_sequences_of_37, F32, F16, BF16) {
  return ssd_scan_setup({2, 37, 4, 16, 2, 64, true, true, false}, 128, dt, rng);
}

// One token from a state (every chunk but the first empty); and three tokens with neither
// softplus nor the gate, a group a head, one chunk a simdgroup of 32.
IRON_TEST(iron_ssm_ssd_scan_n128, single_token_from_a_state, F32, F16, BF16) {
  return ssd_scan_setup({3, 1, 2, 8, 1, 128}, 128, dt, rng);
}
IRON_TEST(iron_ssm_ssd_scan_n64, plain_one_chunk_from_a_state, F32, F16, BF16) {
  return ssd_scan_setup({2, 3, 3, 8, 3, 64, false, false, true}, 32, dt, rng);
}

// Mamba-2 2.7B's layer (80 heads of 64, one group, 128 states) over 4 sequences of 2048 tokens.
IRON_BENCH(iron_ssm_ssd_scan_n128, batch4_seqlen2048_heads80_dim64, F32, BF16) {
  return ssd_scan_bench({4, 2048, 80, 64, 1, 128}, dt);
}
IRON_BENCH(iron_ssm_ssd_scan_n64, batch4_seqlen2048_heads80_dim64, BF16) {
  return ssd_scan_bench({4, 2048, 80, 64, 1, 64}, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
