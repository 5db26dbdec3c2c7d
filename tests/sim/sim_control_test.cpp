/// The simulator's control flow: variables carried across loop iterations, per-thread loop trip
/// counts, nested branches and loops under divergence, and selects evaluating both sides.
#include <gtest/gtest.h>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using ir::OpKind;
using runtime::Grid;

// acc = 0; for (j = tid; j < n; j += group_size) acc += x[j]; out[tid] = acc
TEST(SimControl, VariableCarriesAcrossLoopIterations) {
  IrBuilder b("strided_sum");
  const int x = b.input("x", DType::F32);
  const int out = b.output("out", DType::F32);
  const int n = b.constexpr_param("n", DType::U32);
  const auto acc = b.var(b.constant(DType::F32, 0));
  b.loop(b.tid(), b.constexpr_ref(n), b.builtin(ir::Builtin::GroupSize), [&](auto j) {
    b.var_store(acc, b.op(OpKind::Add, {b.var_load(acc), b.load(x, j)}));
  });
  b.store(out, b.tid(), b.var_load(acc));
  const ir::Kernel k = b.build();

  constexpr std::uint32_t kN = 1000, kThreads = 64;
  std::vector<double> xv(kN);
  for (std::uint32_t i = 0; i < kN; ++i) xv[i] = i % 7 - 3.0;
  runtime::HostTensor hx = make_tensor(DType::F32, xv), ho = zeros(DType::F32, kThreads);
  run(k, {&hx, &ho, scalar(DType::U32, kN)}, Grid::per_row(1, kThreads));
  const std::vector<double> got = read_tensor(ho);
  for (std::uint32_t t = 0; t < kThreads; ++t) {
    float want = 0;
    for (std::uint32_t j = t; j < kN; j += kThreads) want += static_cast<float>(xv[j]);
    EXPECT_EQ(got[t], want) << "thread " << t;
  }
}

// Each thread loops `tid` times; inside, even iterations add j and odd ones subtract 1 unless
// j > 5, where a nested loop adds 2 three times. Afterwards threads split on tid > 20.
TEST(SimControl, NestedBranchesAndLoopsDiverge) {
  IrBuilder b("diverge");
  const int out = b.output("out", DType::I32);
  const auto tid = b.cast(DType::I32, b.tid());
  const auto acc = b.var(b.i32(0));
  const auto one = b.i32(1);
  b.loop(b.i32(0), tid, one, [&](auto j) {
    const auto even = b.op(OpKind::Eq, {b.op(OpKind::Rem, {j, b.i32(2)}), b.i32(0)});
    b.branch(
        even,
        [&] {
          b.var_store(acc, b.op(OpKind::Add, {b.var_load(acc), j}));
        },
        [&] {
          b.branch(
              b.op(OpKind::Gt, {j, b.i32(5)}),
              [&] {
                b.loop(b.i32(0), b.i32(3), one, [&](auto) {
                  b.var_store(acc, b.op(OpKind::Add, {b.var_load(acc), b.i32(2)}));
                });
              },
              [&] {
                b.var_store(acc, b.op(OpKind::Sub, {b.var_load(acc), one}));
              });
        });
  });
  b.branch(
      b.op(OpKind::Gt, {tid, b.i32(20)}),
      [&] {
        b.var_store(acc, b.op(OpKind::Mul, {b.var_load(acc), b.i32(-1)}));
      },
      [&] {
        b.var_store(acc, b.op(OpKind::Add, {b.var_load(acc), b.i32(1000)}));
      });
  b.store(out, b.tid(), b.var_load(acc));
  const ir::Kernel k = b.build();

  runtime::HostTensor ho = zeros(DType::I32, 48);
  run(k, {&ho}, Grid::per_row(1, 48));
  const std::vector<double> got = read_tensor(ho);
  for (int t = 0; t < 48; ++t) {
    int want = 0;
    for (int j = 0; j < t; ++j) {
      if (j % 2 == 0) {
        want += j;
      } else if (j > 5) {
        want += 6;
      } else {
        want -= 1;
      }
    }
    want = t > 20 ? -want : want + 1000;
    EXPECT_EQ(got[t], want) << "thread " << t;
  }
}

TEST(SimControl, SignedLoopsCompareSigned) {
  IrBuilder b("signed_loop");
  const int out = b.output("out", DType::I32);
  const auto count = b.var(b.i32(0));
  b.loop(b.i32(-5), b.i32(3), b.i32(2), [&](auto) {
    b.var_store(count, b.op(OpKind::Add, {b.var_load(count), b.i32(1)}));
  });
  b.store(out, b.u32(0), b.var_load(count));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::I32, 1);
  run(k, {&ho}, Grid::per_row(1, 1));
  EXPECT_EQ(read_tensor(ho)[0], 4) << "-5, -3, -1, 1";
}

TEST(SimControl, SelectPicksPerThreadAndAVarDeclInALoopRestarts) {
  IrBuilder b("select");
  const int out = b.output("out", DType::U32);
  const auto tid = b.tid();
  const auto last = b.var(b.u32(0));
  b.loop(b.u32(0), b.u32(3), b.u32(1), [&](auto j) {
    const auto fresh = b.var(b.u32(10));  // re-initialised every iteration
    b.var_store(fresh, b.op(OpKind::Add, {b.var_load(fresh), j}));
    b.var_store(last, b.var_load(fresh));
  });
  const auto odd = b.op(OpKind::Eq, {b.op(OpKind::And, {tid, b.u32(1)}), b.u32(1)});
  b.store(out, tid, b.select(odd, b.var_load(last), tid));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 4);
  run(k, {&ho}, Grid::per_row(1, 4));
  EXPECT_EQ(read_tensor(ho), (std::vector<double>{0, 12, 2, 12}));
}

}  // namespace
}  // namespace iron::sim_test
