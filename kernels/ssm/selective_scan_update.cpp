/// iron_ssm_selective_scan_update_n16: one decode step of Mamba-1's selective scan (N = 16
/// states a channel), updating the state in place. For each sequence b, channel d and state n:
///   dt = softplus(dt_in[b, d] + dt_bias[d]) (softplus = 1; else the sum)
///   state[b, d, n] = exp(dt · A[d, n]) · state[b, d, n] + dt · x[b, d] · B[b, n]
///   y[b, d] = (Σ_n C[b, n] · state[b, d, n] + D[d] · x[b, d]) · silu(z[b, d]) (gate with use_z)
/// The state is iron_ssm_selective_scan_n16's (f32, [batch, dim, 16]); the math is f32.
///
/// ## Error bound
/// iron_ssm_selective_scan_n16's for a scan of one token from the state (kernels/ssm/
/// scan_oracle.hpp, T = 1): the decay errs by |A|·Δdt + (2u + γ_1)·|dt·A| + 5u relative, the
/// input dt·x·B by its Δdt and two roundings, the update rounds twice; y's sum, here 4 fused
/// multiply-adds, two shuffle additions and the D term, is within the bound's γ_(N+1).
///
/// ## How it runs
/// Four threads a channel, each holding 4 of its 16 states: a thread reads and writes its states
/// as one 16-byte vector, so a simdgroup moves 512 consecutive bytes of the state each way, the
/// whole of it once. The four partial sums of y meet by two shuffles; the first of the four
/// writes y. x, dt and z are read by the four threads of a channel at one address.
///
/// ## Layout
/// - `state       [batch, dim, 16]` f32, InOut
/// - `x, dt, z, y [batch, dim]` T (z read only with use_z = 1: give any such buffer)
/// - `dt_bias, D  [dim]` f32 (zeros for a model without them)
/// - `A           [dim, 16]` f32
/// - `B, C        [batch, 16]` T
/// - dim a multiple of 8 (every model's is), so each simdgroup holds whole channels
///
/// ## Dispatch
/// Reduction (its shuffles need whole simdgroups), grid-stride over batch · dim · 4 threads, tpg a
/// multiple of 32 up to 1024: any grid up to one thread each. softplus and use_z 0 or 1.
#include <array>
#include <iron/iron.hpp>
#include <string>

#include "../primitives/activation.hpp"
#include "scan_step.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {
constexpr u32 kThreadStates = 4;  ///< states a thread: one 16-byte vector of f32
}  // namespace

IRON_KERNEL_TEMPLATE(iron_ssm_selective_scan_update, (u32 N),
                     (InOut<f32> state, Tensor<T> x, Tensor<T> dt, Tensor<f32> dt_bias,
                      Tensor<f32> A, Tensor<T> B, Tensor<T> C, Tensor<f32> D, Tensor<T> z, Out<T> y,
                      Constexpr<u32> batch, Constexpr<u32> dim, Constexpr<u32> softplus,
                      Constexpr<u32> use_z)) {
  constexpr u32 P = N / kThreadStates;  // threads a channel
  static_assert(N % kThreadStates == 0 && 32 % P == 0);
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[<= ceil_div(batch * dim * " + std::to_string(P) + ", tpg), 1, 1]");
  const std::string states = std::to_string(N);
  layout(state, "[batch, dim, " + states + "]");
  layout(x, "[batch, dim]");
  layout(dt, "[batch, dim]");
  layout(dt_bias, "[dim]");
  layout(A, "[dim, " + states + "]");
  layout(B, "[batch, " + states + "]");
  layout(C, "[batch, " + states + "]");
  layout(D, "[dim]");
  layout(z, "[batch, dim]");
  layout(y, "[batch, dim]");
  require_multiple_of(dim, 8);  // batch · dim · P is whole simdgroups: all lanes take each trip
  for (auto i : range(global_id<0>(), batch * dim * P, grid_threads<0>())) {
    auto row = i / P;  // b · dim + d
    auto first = i % P * kThreadStates;
    auto d = row % dim;
    auto b = row / dim;
    auto step = scan_dt(cast<f32>(load(dt[row])), load(dt_bias[d]), softplus);
    auto xin = cast<f32>(load(x[row]));
    auto x_dt = step * xin;
    const auto h = load_lanes<kThreadStates>(state[row * N + first]);
    const auto a = load_lanes<kThreadStates>(A[d * N + first]);
    const auto bv = load_lanes<kThreadStates>(B[b * N + first]);
    const auto cv = load_lanes<kThreadStates>(C[b * N + first]);
    std::array<Expr<f32>, kThreadStates> next;
    Expr<f32> partial = 0.0f;
    for (u32 q = 0; q < kThreadStates; ++q) {
      next[q] = fma(exp2(step * (a[q] * kLog2eF32)), h[q], x_dt * cast<f32>(bv[q]));
      partial = fma(cast<f32>(cv[q]), next[q], partial);
    }
    store_lanes(state[row * N + first], next);
    for (u32 m = 1; m < P; m *= 2) partial = partial + simd_shuffle_xor(partial, m);
    IRON_IF(first == 0u) {
      Var<f32> out = fma(load(D[d]), xin, partial);
      IRON_IF(use_z != 0u) { out = Expr<f32>(out) * silu<T>(cast<f32>(load(z[row]))); }
      store(y[row], cast<T>(Expr<f32>(out)));
    }
  }
}
IRON_KERNEL_VARIANT(iron_ssm_selective_scan_update, n16, 16);

// Four threads a channel, groups of 256.
IRON_GEOMETRY(iron_ssm_selective_scan_update_n16) {
  return Geometry::elementwise(q.constant("batch") * q.constant("dim") * (16 / kThreadStates),
                               q.threads_per_group(256));
}

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "scan_oracle.hpp"

namespace iron::kernels {

namespace {

/// One token a sequence from a state; groups 0 takes the kernel's geometry.
testing::TestSetup update_setup(std::size_t batch, std::size_t dim, bool softplus, bool use_z,
                                std::uint32_t groups, DType dt, testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const ScanInputs in = scan_inputs({batch, 1, dim, softplus, use_z, true}, dt, rng);
  const ScanWant want = scan_oracle(in);
  testing::TestSetup setup("iron_ssm_selective_scan_update_n16", dt);
  setup.output("state", want.state.size())
      .initial("state", in.h0)
      .input("x", in.u)
      .input("dt", in.delta)
      .input("dt_bias", in.delta_bias)
      .input("A", in.A)
      .input("B", in.B)
      .input("C", in.C)
      .input("D", in.D)
      .input("z", in.z)
      .output("y", want.y.size())
      .constant("batch", static_cast<double>(batch))
      .constant("dim", static_cast<double>(dim))
      .constant("softplus", softplus ? 1.0 : 0.0)
      .constant("use_z", use_z ? 1.0 : 0.0)
      .expect("state", want.state)
      .expect("y", want.y)
      .tolerance("state", tol::stored(DType::F32, want.state_bound, 0.0))
      .tolerance("y", tol::stored(dt, want.y_bound, 0.0));
  if (groups == 0) return setup.grid(testing::geometry_grid(setup));
  return setup.grid({{groups}, {32}});
}

bench::BenchSetup update_bench(std::size_t batch, std::size_t dim, DType dt) {
  const std::size_t n = batch * dim;
  const std::size_t states = n * kStates;
  bench::BenchSetup setup("iron_ssm_selective_scan_update_n16", dt);
  setup.output("state", states)
      .random("x", n)
      .random("dt", n)
      .random("dt_bias", dim, -6.0f, -2.0f)
      .random("A", dim * kStates, -16.0f, -1.0f)
      .random("B", batch * kStates)
      .random("C", batch * kStates)
      .random("D", dim, 0.5f, 1.5f)
      .random("z", n)
      .output("y", n)
      .constant("batch", static_cast<double>(batch))
      .constant("dim", static_cast<double>(dim))
      .constant("softplus", 1.0)
      .constant("use_z", 1.0);
  // The state read and written once, x, dt and z read and y written once, A, B, C, D and the
  // bias read once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(8 * states + 4 * n * dtype_size(dt) + 2 * batch * kStates * dtype_size(dt) +
                   4 * dim * (kStates + 2))
      .peer("ssm_selective_scan_update", {{"batch", static_cast<double>(batch)},
                                          {"dim", static_cast<double>(dim)},
                                          {"states", static_cast<double>(kStates)}});
}

}  // namespace

// A decode batch of 6 sequences of 48 channels (9 simdgroups' worth of threads), softplus and
// the gate.
IRON_TEST(iron_ssm_selective_scan_update_n16, batch6_dim48, F32, F16, BF16) {
  return update_setup(6, 48, true, true, 0, dt, rng);
}

// One sequence of 8 channels (one simdgroup), neither softplus nor the gate; and 5 sequences of
// 64 channels on one group of 32 threads, so the grid-stride loop wraps 40 times.
IRON_TEST(iron_ssm_selective_scan_update_n16, single_sequence_plain, F32, F16, BF16) {
  return update_setup(1, 8, false, false, 0, dt, rng);
}
IRON_TEST(iron_ssm_selective_scan_update_n16, small_grid, F32, F16, BF16) {
  return update_setup(5, 64, true, true, 1, dt, rng);
}

// Three simdgroups' worth of channels on one simdgroup: the loop wraps twice.
IRON_TEST(iron_ssm_selective_scan_update_n16, three_passes_small_grid, F32, F16, BF16) {
  return update_setup(3, 8, true, true, 1, dt, rng);
}

// A decode batch of 64 sequences of Falcon-Mamba-7B's 8192 channels: 32 MiB of state each way.
IRON_BENCH(iron_ssm_selective_scan_update_n16, batch64_dim8192, F32, BF16) {
  return update_bench(64, 8192, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
