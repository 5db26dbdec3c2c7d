/// Whole kernels as the library writes them, on thousands of rows: softmax and RMS norm match a
/// reference, run fast enough for the test suite, and give the same bits on every run.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using ir::OpKind;
using runtime::Grid;

// Strided loop over one row: body(j, base + j).
template <class Body>
void over_row(IrBuilder& b, ir::ValueId base, ir::ValueId n, Body body) {
  b.loop(b.tid(), n, b.builtin(ir::Builtin::GroupSize), [&](auto j) {
    body(b.op(OpKind::Add, {base, j}));
  });
}

// One group per row: max, then sum of exp, then the normalised row (f32 accumulation).
ir::Kernel softmax(DType t) {
  IrBuilder b("iron_softmax");
  const int x = b.input("x", t);
  const int y = b.output("y", t);
  const int n_param = b.constexpr_param("n", DType::U32);
  b.mode(ir::DispatchMode::Reduction);
  b.rule(ir::SizeRule::Kind::MultipleOf, 32);
  const auto n = b.constexpr_ref(n_param);
  const auto base = b.op(OpKind::Mul, {b.builtin(ir::Builtin::GroupId), n});
  const auto m = b.var(b.constant(DType::F32, -std::numeric_limits<double>::infinity()));
  over_row(b, base, n, [&](auto i) {
    b.var_store(m, b.op(OpKind::Max, {b.var_load(m), b.cast(DType::F32, b.load(x, i))}));
  });
  const auto row_max = b.collective(OpKind::ReduceMax, b.var_load(m));
  const auto s = b.var(b.constant(DType::F32, 0));
  over_row(b, base, n, [&](auto i) {
    const auto e =
        b.op(OpKind::Exp, {b.op(OpKind::Sub, {b.cast(DType::F32, b.load(x, i)), row_max})});
    b.var_store(s, b.op(OpKind::Add, {b.var_load(s), e}));
  });
  const auto inv = b.op(OpKind::Recip, {b.collective(OpKind::ReduceSum, b.var_load(s))});
  over_row(b, base, n, [&](auto i) {
    const auto e =
        b.op(OpKind::Exp, {b.op(OpKind::Sub, {b.cast(DType::F32, b.load(x, i)), row_max})});
    b.store(y, i, b.cast(t, b.op(OpKind::Mul, {e, inv})));
  });
  return b.build();
}

// One group per row: y = x * rsqrt(mean(x^2) + eps) * w, with a shared-memory simd reduction.
ir::Kernel rms_norm(DType t) {
  IrBuilder b("iron_rms_norm");
  b.group_contract();
  const int x = b.input("x", t);
  const int w = b.input("w", t);
  const int y = b.output("y", t);
  const int n_param = b.constexpr_param("n", DType::U32);
  const int partial = b.shared("smem0", DType::F32, 32);
  const auto n = b.constexpr_ref(n_param);
  const auto base = b.op(OpKind::Mul, {b.builtin(ir::Builtin::GroupId), n});
  const auto acc = b.var(b.constant(DType::F32, 0));
  over_row(b, base, n, [&](auto i) {
    const auto v = b.cast(DType::F32, b.load(x, i));
    b.var_store(acc, b.op(OpKind::Fma, {v, v, b.var_load(acc)}));
  });
  const auto lane_sum = b.collective(OpKind::SimdSum, b.var_load(acc));
  b.branch(b.op(OpKind::Eq, {b.builtin(ir::Builtin::Lane), b.u32(0)}),
           [&] { b.shared_store(partial, b.builtin(ir::Builtin::Simdgroup), lane_sum); });
  b.barrier();
  const auto total = b.var(b.constant(DType::F32, 0));
  b.loop(b.u32(0), b.builtin(ir::Builtin::SimdgroupCount), b.u32(1), [&](auto k) {
    b.var_store(total, b.op(OpKind::Add, {b.var_load(total), b.shared_load(partial, k)}));
  });
  const auto mean = b.op(OpKind::Div, {b.var_load(total), b.cast(DType::F32, n)});
  const auto scale = b.op(OpKind::Rsqrt, {b.op(OpKind::Add, {mean, b.constant(DType::F32, 1e-6)})});
  over_row(b, base, n, [&](auto i) {
    const auto v = b.op(OpKind::Mul, {b.cast(DType::F32, b.load(x, i)), scale});
    const auto col = b.op(OpKind::Sub, {i, base});
    b.store(y, i, b.cast(t, b.op(OpKind::Mul, {v, b.cast(DType::F32, b.load(w, col))})));
  });
  return b.build();
}

std::vector<double> inputs(std::size_t count) {
  std::vector<double> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = std::sin(static_cast<double>(i) * 0.731) * 4;
  return v;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(SimWorkload, SoftmaxOnThousandsOfRows) {
  constexpr std::uint32_t kRows = 4096, kCols = 512;
  for (DType t : {DType::F32, DType::BF16}) {
    const ir::Kernel k = softmax(t);
    runtime::HostTensor x = make_tensor(t, inputs(std::size_t{kRows} * kCols));
    runtime::HostTensor y = zeros(t, std::size_t{kRows} * kCols);
    const auto start = std::chrono::steady_clock::now();
    run(k, {&x, &y, scalar(DType::U32, kCols)}, Grid::per_row(kRows, 128));
    std::printf("softmax %s %ux%u: %.3f s\n", std::string(dtype_name(t)).c_str(), kRows, kCols,
                seconds_since(start));
    const std::vector<double> xs = read_tensor(x), got = read_tensor(y);
    const double tol = t == DType::F32 ? 1e-5 : 1e-2;
    for (std::uint32_t r = 0; r < kRows; r += 97) {
      double mx = -INFINITY, sum = 0;
      for (std::uint32_t c = 0; c < kCols; ++c) mx = std::max(mx, xs[r * kCols + c]);
      for (std::uint32_t c = 0; c < kCols; ++c) sum += std::exp(xs[r * kCols + c] - mx);
      for (std::uint32_t c = 0; c < kCols; ++c) {
        const double want = std::exp(xs[r * kCols + c] - mx) / sum;
        ASSERT_NEAR(got[r * kCols + c], want, tol * want) << "row " << r << " col " << c;
      }
    }
    runtime::HostTensor again = zeros(t, std::size_t{kRows} * kCols);
    run(k, {&x, &again, scalar(DType::U32, kCols)}, Grid::per_row(kRows, 128));
    EXPECT_EQ(again.bytes, y.bytes) << "bit-identical on a second run";
  }
}

TEST(SimWorkload, RmsNormOnThousandsOfRows) {
  constexpr std::uint32_t kRows = 4096, kCols = 256;
  const ir::Kernel k = rms_norm(DType::F16);
  runtime::HostTensor x = make_tensor(DType::F16, inputs(std::size_t{kRows} * kCols));
  std::vector<double> wv(kCols);
  for (std::uint32_t c = 0; c < kCols; ++c) wv[c] = 0.5 + c / 512.0;
  runtime::HostTensor w = make_tensor(DType::F16, wv);
  runtime::HostTensor y = zeros(DType::F16, std::size_t{kRows} * kCols);
  const auto start = std::chrono::steady_clock::now();
  run(k, {&x, &w, &y, scalar(DType::U32, kCols)}, Grid::per_row(kRows, 64));
  std::printf("rms_norm f16 %ux%u: %.3f s\n", kRows, kCols, seconds_since(start));
  const std::vector<double> xs = read_tensor(x), ws = read_tensor(w), got = read_tensor(y);
  for (std::uint32_t r = 0; r < kRows; r += 89) {
    double ss = 0;
    for (std::uint32_t c = 0; c < kCols; ++c) ss += xs[r * kCols + c] * xs[r * kCols + c];
    const double scale = 1 / std::sqrt(ss / kCols + 1e-6);
    for (std::uint32_t c = 0; c < kCols; ++c) {
      const double want = xs[r * kCols + c] * scale * ws[c];
      ASSERT_NEAR(got[r * kCols + c], want, 2e-3 * std::fabs(want) + 1e-6)
          << "row " << r << " col " << c;
    }
  }
}

}  // namespace
}  // namespace iron::sim_test
