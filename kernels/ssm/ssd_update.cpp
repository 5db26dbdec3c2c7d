/// iron_ssm_ssd_update_n{64,128}: one decode step of Mamba-2's state-space dual (SSD) layer, N
/// states a head dimension, updating the state in place. For each sequence b, head h, head
/// dimension p and state n, with g = h · ngroups / heads the head's group of B and C:
///   dt = softplus(dt_in[b, h] + dt_bias[h]) (softplus = 1; else the sum)
///   state[b, h, p, n] = exp(dt · A[h]) · state[b, h, p, n] + dt · x[b, h, p] · B[b, g, n]
///   y[b, h, p] = (Σ_n C[b, g, n] · state[b, h, p, n] + D[h] · x[b, h, p]) · silu(z[b, h, p])
///   (the gate with use_z)
/// The state is f32 and so is the math.
///
/// ## Error bound
/// The selective scan's for one token (kernels/ssm/scan_oracle.hpp, T = 1, a channel being a
/// (head, head dimension) pair whose decay is the head's): the decay errs by |A|·Δdt +
/// (2u + γ_1)·|dt·A| + 5u relative, the input dt·x·B by its Δdt and two roundings, the update
/// rounds twice; y's sum (N/32 fused multiply-adds a lane, five shuffle additions, the D term) is
/// within the bound's γ_(N+1).
///
/// ## How it runs
/// A simdgroup a (sequence, head, head dimension) row: each lane holds N/32 consecutive states,
/// read and written as one vector (16 bytes for N = 128, 8 for N = 64), so a row moves as one
/// coalesced 4N-byte access each way. B and C are read by every row of the group from the L1;
/// y is a simd_sum, written by lane 0.
///
/// ## Layout
/// - `state       [batch, heads, head_dim, N]` f32, InOut
/// - `x, z, y     [batch, heads, head_dim]` T (z read only with use_z = 1: give any such buffer)
/// - `dt          [batch, heads]` T
/// - `dt_bias, A, D [heads]` f32 (A = −exp(A_log))
/// - `B, C        [batch, ngroups, N]` T; heads a multiple of ngroups (each group serves
///   heads / ngroups consecutive heads)
///
/// ## Dispatch
/// Reduction: tpg a multiple of 32 up to 1024, a row a simdgroup, grid-stride: any grid up to
/// one simdgroup a row. softplus and use_z 0 or 1.
#include <array>
#include <iron/iron.hpp>
#include <string>

#include "../primitives/activation.hpp"
#include "scan_step.hpp"

namespace iron::kernels {
using namespace iron::dsl;

IRON_KERNEL_TEMPLATE(iron_ssm_ssd_update, (u32 N),
                     (InOut<f32> state, Tensor<T> x, Tensor<T> dt, Tensor<f32> dt_bias,
                      Tensor<f32> A, Tensor<T> B, Tensor<T> C, Tensor<f32> D, Tensor<T> z, Out<T> y,
                      Constexpr<u32> batch, Constexpr<u32> heads, Constexpr<u32> head_dim,
                      Constexpr<u32> ngroups, Constexpr<u32> softplus, Constexpr<u32> use_z)) {
  constexpr u32 Q = N / 32;  // states a lane
  static_assert(N % 64 == 0 && Q * 4 <= 16);
  dispatch(reduction, {multiple_of(32), at_least(32), at_most(1024)});
  grid("[<= ceil_div(batch * heads * head_dim * 32, tpg), 1, 1]");
  const std::string states = std::to_string(N);
  layout(state, "[batch, heads, head_dim, " + states + "]");
  layout(x, "[batch, heads, head_dim]");
  layout(dt, "[batch, heads]");
  layout(dt_bias, "[heads]");
  layout(A, "[heads]");
  layout(B, "[batch, ngroups, " + states + "]");
  layout(C, "[batch, ngroups, " + states + "]");
  layout(D, "[heads]");
  layout(z, "[batch, heads, head_dim]");
  layout(y, "[batch, heads, head_dim]");
  auto lane = lane_id();
  auto first = lane * Q;
  auto rows_per_group = simdgroup_count();
  for (auto row : range(program_id<0>() * rows_per_group + simdgroup_id(), batch * heads * head_dim,
                        grid_groups<0>() * rows_per_group)) {
    auto bh = row / head_dim;  // b · heads + h
    auto h = bh % heads;
    auto bc = (bh / heads * ngroups + h * ngroups / heads) * N + first;
    auto step = scan_dt(cast<f32>(load(dt[bh])), load(dt_bias[h]), softplus);
    auto decay = exp(step * load(A[h]));
    auto xin = cast<f32>(load(x[row]));
    auto x_dt = step * xin;
    const auto old = load_lanes<Q>(state[row * N + first]);
    const auto bv = load_lanes<Q>(B[bc]);
    const auto cv = load_lanes<Q>(C[bc]);
    std::array<Expr<f32>, Q> next;
    Expr<f32> partial = 0.0f;
    for (u32 q = 0; q < Q; ++q) {
      next[q] = fma(decay, old[q], x_dt * cast<f32>(bv[q]));
      partial = fma(cast<f32>(cv[q]), next[q], partial);
    }
    store_lanes(state[row * N + first], next);
    auto total = simd_sum(partial);
    IRON_IF(lane == 0u) {
      Var<f32> out = fma(load(D[h]), xin, total);
      IRON_IF(use_z != 0u) { out = Expr<f32>(out) * silu<T>(cast<f32>(load(z[row]))); }
      store(y[row], cast<T>(Expr<f32>(out)));
    }
  }
}
IRON_KERNEL_VARIANT(iron_ssm_ssd_update, n64, 64);
IRON_KERNEL_VARIANT(iron_ssm_ssd_update, n128, 128);

namespace {

/// A simdgroup a row, groups of 256 threads.
Geometry ssd_update_geometry(const GeometryQuery& q) {
  return Geometry::elementwise(
      q.constant("batch") * q.constant("heads") * q.constant("head_dim") * 32,
      q.threads_per_group(256));
}

}  // namespace

IRON_GEOMETRY(iron_ssm_ssd_update_n64) { return ssd_update_geometry(q); }
IRON_GEOMETRY(iron_ssm_ssd_update_n128) { return ssd_update_geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "ssd_oracle.hpp"

namespace iron::kernels {

namespace {

std::string ssd_update_name(std::size_t states) {
  return "iron_ssm_ssd_update_n" + std::to_string(states);
}

/// One token a sequence from a state; grid_groups 0 takes the kernel's geometry.
testing::TestSetup ssd_update_setup(const SsdShape& s, std::uint32_t grid_groups, DType dt,
                                    testing::Rng& rng) {
  namespace tol = testing::tolerance;
  const SsdInputs in = ssd_inputs(s, dt, rng);
  const ScanWant want = scan_oracle(in.scan);
  testing::TestSetup setup(ssd_update_name(s.states), dt);
  setup.output("state", want.state.size())
      .initial("state", in.scan.h0)
      .input("x", in.scan.u)
      .input("dt", in.dt)
      .input("dt_bias", in.dt_bias)
      .input("A", in.A)
      .input("B", in.scan.B)
      .input("C", in.scan.C)
      .input("D", in.D)
      .input("z", in.scan.z)
      .output("y", want.y.size())
      .constant("batch", static_cast<double>(s.batch))
      .constant("heads", static_cast<double>(s.heads))
      .constant("head_dim", static_cast<double>(s.head_dim))
      .constant("ngroups", static_cast<double>(s.groups))
      .constant("softplus", s.softplus ? 1.0 : 0.0)
      .constant("use_z", s.use_z ? 1.0 : 0.0)
      .expect("state", want.state)
      .expect("y", want.y)
      .tolerance("state", tol::stored(DType::F32, want.state_bound, 0.0))
      .tolerance("y", tol::stored(dt, want.y_bound, 0.0));
  if (grid_groups == 0) return setup.grid(testing::geometry_grid(setup));
  return setup.grid({{grid_groups}, {64}});
}

bench::BenchSetup ssd_update_bench(std::size_t batch, std::size_t heads, std::size_t head_dim,
                                   std::size_t groups, std::size_t states, DType dt) {
  const std::size_t n = batch * heads * head_dim;
  const std::size_t bc = batch * groups * states;
  bench::BenchSetup setup(ssd_update_name(states), dt);
  setup.output("state", n * states)
      .random("x", n)
      .random("dt", batch * heads)
      .random("dt_bias", heads, -6.0f, -2.0f)
      .random("A", heads, -16.0f, -1.0f)
      .random("B", bc)
      .random("C", bc)
      .random("D", heads, 0.5f, 1.5f)
      .random("z", n)
      .output("y", n)
      .constant("batch", static_cast<double>(batch))
      .constant("heads", static_cast<double>(heads))
      .constant("head_dim", static_cast<double>(head_dim))
      .constant("ngroups", static_cast<double>(groups))
      .constant("softplus", 1.0)
      .constant("use_z", 1.0);
  // The state read and written once, x and z read and y written once, dt, B and C read once,
  // the per-head f32 values read once.
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved(8 * n * states + (3 * n + batch * heads + 2 * bc) * dtype_size(dt) + 12 * heads)
      .peer("ssm_ssd_update", {{"batch", static_cast<double>(batch)},
                               {"heads", static_cast<double>(heads)},
                               {"head_dim", static_cast<double>(head_dim)},
                               {"ngroups", static_cast<double>(groups)},
                               {"states", static_cast<double>(states)}});
}

}  // namespace

// 3 sequences, 4 heads of 16 in 2 groups of B and C, softplus and the gate.
IRON_TEST(iron_ssm_ssd_update_n128, heads4_groups2, F32, F16, BF16) {
  return ssd_update_setup({3, 1, 4, 16, 2, 128}, 0, dt, rng);
}
IRON_TEST(iron_ssm_ssd_update_n64, heads4_groups2, F32, F16, BF16) {
  return ssd_update_setup({3, 1, 4, 16, 2, 64}, 0, dt, rng);
}

// One sequence, a group a head, neither softplus nor the gate; and 5 sequences of 6 heads of 8
// on two groups of two simdgroups, so the grid-stride loop wraps.
IRON_TEST(iron_ssm_ssd_update_n128, group_a_head_plain, F32, F16, BF16) {
  return ssd_update_setup({1, 1, 3, 8, 3, 128, false, false}, 0, dt, rng);
}
IRON_TEST(iron_ssm_ssd_update_n64, small_grid, F32, F16, BF16) {
  return ssd_update_setup({5, 1, 6, 8, 1, 64}, 2, dt, rng);
}

// 15 rows, in three groups of B and C; and on one group of two simdgroups.
IRON_TEST(iron_ssm_ssd_update_n128, odd_rows, F32, F16, BF16) {
  return ssd_update_setup({1, 1, 3, 5, 1, 128}, 0, dt, rng);
}
IRON_TEST(iron_ssm_ssd_update_n64, odd_rows_small_grid, F32, F16, BF16) {
  return ssd_update_setup({1, 1, 3, 5, 3, 64}, 1, dt, rng);
}

// Mamba-2 2.7B's layer (80 heads of 64, one group, 128 states) for a decode batch of 32:
// 168 MB of state each way.
IRON_BENCH(iron_ssm_ssd_update_n128, batch32_heads80_dim64, F32, BF16) {
  return ssd_update_bench(32, 80, 64, 1, 128, dt);
}
IRON_BENCH(iron_ssm_ssd_update_n64, batch32_heads80_dim64, BF16) {
  return ssd_update_bench(32, 80, 64, 1, 64, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
