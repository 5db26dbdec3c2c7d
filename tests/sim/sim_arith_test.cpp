/// The simulator's arithmetic: every dtype elementwise with exact f16/bf16 rounding after each
/// op, integer wrap-around, casts, bitcasts and the builtins of a three-dimensional grid.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using ir::OpKind;
using runtime::Grid;

float round_to(DType t, float v) {
  if (t == DType::F16) return round_to_f16(v);
  if (t == DType::BF16) return round_to_bf16(v);
  return v;
}

// out[i] = sqrt(|(a*b + 0.1) / b|) - exp(a) * b, guarded by i < n, one op at a time.
ir::Kernel float_kernel(DType t) {
  IrBuilder b("float_ops");
  const int a = b.input("a", t);
  const int bb = b.input("b", t);
  const int out = b.output("out", t);
  const int n = b.constexpr_param("n", DType::U32);
  const auto i = b.gid();
  b.branch(b.op(OpKind::Lt, {i, b.constexpr_ref(n)}), [&] {
    const auto x = b.load(a, i);
    const auto y = b.load(bb, i);
    const auto q =
        b.op(OpKind::Div, {b.op(OpKind::Add, {b.op(OpKind::Mul, {x, y}), b.constant(t, 0.1)}), y});
    const auto s = b.op(OpKind::Sqrt, {b.op(OpKind::Abs, {q})});
    b.store(out, i, b.op(OpKind::Sub, {s, b.op(OpKind::Mul, {b.op(OpKind::Exp, {x}), y})}));
  });
  return b.build();
}

TEST(SimArith, EveryFloatTypeRoundsAfterEachOp) {
  constexpr std::size_t kN = 1000;
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    std::vector<double> av(kN), bv(kN);
    for (std::size_t i = 0; i < kN; ++i) {
      av[i] = std::sin(0.37 * static_cast<double>(i)) * 3;
      bv[i] = 0.5 + std::cos(0.11 * static_cast<double>(i)) * 0.25;
    }
    runtime::HostTensor a = make_tensor(t, av), b = make_tensor(t, bv), out = zeros(t, kN);
    const ir::Kernel k = float_kernel(t);
    run(k, {&a, &b, &out, scalar(DType::U32, kN)}, Grid::elementwise(kN, 128));
    const std::vector<double> ar = read_tensor(a), br = read_tensor(b), got = read_tensor(out);
    for (std::size_t i = 0; i < kN; ++i) {
      const auto x = static_cast<float>(ar[i]);
      const auto y = static_cast<float>(br[i]);
      const float q = round_to(t, round_to(t, round_to(t, x * y) + round_to(t, 0.1f)) / y);
      const float s = round_to(t, std::sqrt(round_to(t, std::fabs(q))));
      const float want = round_to(t, s - round_to(t, round_to(t, std::exp(x)) * y));
      ASSERT_EQ(got[i], want) << dtype_name(t) << " element " << i;
    }
  }
}

// out[i] = (a*b + a) ^ (a >> 1) - b / 3, in the type itself.
TEST(SimArith, IntegersWrapToTheirWidth) {
  for (DType t : {DType::U8, DType::I8, DType::U16, DType::I32, DType::U32}) {
    IrBuilder b("int_ops");
    const int a = b.input("a", t);
    const int bb = b.input("b", t);
    const int out = b.output("out", t);
    const auto i = b.tid();
    const auto x = b.load(a, i);
    const auto y = b.load(bb, i);
    const auto mix = b.op(OpKind::Xor, {b.op(OpKind::Add, {b.op(OpKind::Mul, {x, y}), x}),
                                        b.op(OpKind::Shr, {x, b.constant(t, 1)})});
    b.store(out, i, b.op(OpKind::Sub, {mix, b.op(OpKind::Div, {y, b.constant(t, 3)})}));
    const ir::Kernel k = b.build();

    const bool is_signed = t == DType::I8 || t == DType::I32;
    const int bits = static_cast<int>(dtype_size(t)) * 8;
    auto wrap = [&](std::int64_t v) -> std::int64_t {
      const std::uint64_t u = static_cast<std::uint64_t>(v) & ((std::uint64_t{1} << bits) - 1);
      const auto value = static_cast<std::int64_t>(u);
      return is_signed && (u >> (bits - 1)) != 0 ? value - (std::int64_t{1} << bits) : value;
    };
    std::vector<double> av(64), bv(64);
    for (int j = 0; j < 64; ++j) {
      av[j] = static_cast<double>(wrap(j * 7919 - 2000));
      bv[j] = static_cast<double>(wrap(j * 104729 + 13));
    }
    runtime::HostTensor ha = make_tensor(t, av), hb = make_tensor(t, bv), ho = zeros(t, 64);
    run(k, {&ha, &hb, &ho}, Grid::per_row(1, 64));
    const std::vector<double> got = read_tensor(ho);
    for (int j = 0; j < 64; ++j) {
      const auto x = static_cast<std::int64_t>(av[j]);
      const auto y = static_cast<std::int64_t>(bv[j]);
      const std::int64_t shifted = is_signed ? (x >> 1) : (wrap(x) >> 1);
      const auto product =
          static_cast<std::int64_t>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y));
      const std::int64_t mix = wrap(wrap(wrap(product) + x) ^ shifted);
      ASSERT_EQ(got[j], wrap(mix - y / 3)) << dtype_name(t) << " element " << j;
    }
  }
}

TEST(SimArith, SignedDivisionShiftsAndBooleans) {
  IrBuilder b("signed");
  const int out = b.output("out", DType::I32);
  const int flags = b.output("flags", DType::Bool);
  const auto min = b.i32(std::numeric_limits<std::int32_t>::min());
  const auto m7 = b.i32(-7);
  const auto two = b.i32(2);
  const std::vector<ir::ValueId> results = {b.op(OpKind::Div, {m7, two}),
                                            b.op(OpKind::Rem, {m7, two}),
                                            b.op(OpKind::Div, {min, b.i32(-1)}),
                                            b.op(OpKind::Shr, {m7, b.i32(1)}),
                                            b.op(OpKind::Shl, {b.i32(1), b.i32(33)}),
                                            b.op(OpKind::Neg, {min}),
                                            b.op(OpKind::Abs, {m7}),
                                            b.op(OpKind::Min, {m7, two}),
                                            b.op(OpKind::Not, {b.i32(0)})};
  for (std::size_t j = 0; j < results.size(); ++j) {
    b.store(out, b.u32(static_cast<std::uint32_t>(j)), results[j]);
  }
  const auto lt = b.op(OpKind::Lt, {m7, two});
  const auto ult = b.op(OpKind::Lt, {b.u32(0xFFFFFFF9u), b.u32(2)});
  b.store(flags, b.u32(0), b.op(OpKind::And, {lt, b.op(OpKind::Not, {ult})}));
  b.store(flags, b.u32(1), b.op(OpKind::Xor, {lt, lt}));
  const ir::Kernel k = b.build();
  runtime::HostTensor o = zeros(DType::I32, results.size()), f = zeros(DType::Bool, 2);
  run(k, {&o, &f}, Grid::per_row(1, 1));
  const double int_min = std::numeric_limits<std::int32_t>::min();
  EXPECT_EQ(read_tensor(o), (std::vector<double>{-3, -1, int_min, -4, 2, int_min, 7, -7, -1}));
  EXPECT_EQ(read_tensor(f), (std::vector<double>{1, 0}));
}

TEST(SimArith, IntegerDivisionByZeroIsReported) {
  IrBuilder b("div0");
  const int out = b.output("out", DType::U32);
  const auto i = b.tid();
  b.at(77);
  b.store(out, i, b.op(OpKind::Div, {b.u32(10), b.op(OpKind::Sub, {i, b.u32(3)})}));
  const ir::Kernel k = b.build();
  runtime::HostTensor o = zeros(DType::U32, 32);
  const auto e = finding(k, {&o}, Grid::per_row(1, 32));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), runtime::SimError::Kind::BadArgument);
  EXPECT_EQ(std::string(e->what()),
            "div0: integer division by zero ('div') by thread 3 (3,0,0) in group (0,0,0) at "
            "tests/sim/kernels.cpp:77");
}

TEST(SimArith, CastsTruncateSaturateAndRound) {
  const std::vector<double> in = {-1.5, 2.7, 300.0, -300.0, NAN, 1e10, 2049.0, 0.0};
  struct Case {
    DType from, to;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {DType::F32, DType::U8, {0, 2, 255, 0, 0, 255, 255, 0}},
      {DType::F32, DType::I8, {-1, 2, 127, -128, 0, 127, 127, 0}},
      {DType::F32, DType::I32, {-1, 2, 300, -300, 0, 2147483647, 2049, 0}},
      {DType::F32, DType::Bool, {1, 1, 1, 1, 1, 1, 1, 0}},
      {DType::I32, DType::F16, {-1, 2, 300, -300, 0, INFINITY, 2048, 0}},
      {DType::I32, DType::U8, {255, 2, 44, 212, 0, 255, 1, 0}},
      {DType::F32, DType::BF16, {-1.5, 2.703125, 300, -300, NAN, 9999220736.0, 2048, 0}},
  };
  for (const Case& c : cases) {
    IrBuilder b("casts");
    const int x = b.input("x", c.from);
    const int out = b.output("out", c.to);
    const auto i = b.tid();
    b.store(out, i, b.cast(c.to, b.load(x, i)));
    const ir::Kernel k = b.build();
    std::vector<double> src = in;
    if (c.from == DType::I32) {  // the f32 -> i32 results above, as the integer inputs
      src = {-1, 2, 300, -300, 0, 2147483647, 2049, 0};
    }
    if (c.to == DType::U8 && c.from == DType::I32) {
      src[5] = 0xFFFF;
      src[6] = 257;
    }
    runtime::HostTensor hx = make_tensor(c.from, src), ho = zeros(c.to, in.size());
    run(k, {&hx, &ho}, Grid::per_row(1, static_cast<std::uint32_t>(in.size())));
    const std::vector<double> got = read_tensor(ho);
    for (std::size_t j = 0; j < in.size(); ++j) {
      if (std::isnan(c.want[j])) {
        EXPECT_TRUE(std::isnan(got[j]));
      } else {
        EXPECT_EQ(got[j], c.want[j])
            << dtype_name(c.from) << " -> " << dtype_name(c.to) << " #" << j;
      }
    }
  }
}

TEST(SimArith, BitcastsReinterpretBits) {
  IrBuilder b("bitcasts");
  const int o32 = b.output("o32", DType::U32);
  const int o16 = b.output("o16", DType::U16);
  const int of = b.output("of", DType::F16);
  const int ob = b.output("ob", DType::BF16);
  const int oi = b.output("oi", DType::I8);
  const auto zero = b.u32(0);
  b.store(o32, zero, b.bitcast(DType::U32, b.constant(DType::F32, 1.0)));
  b.store(o16, zero, b.bitcast(DType::U16, b.constant(DType::F16, 1.0)));
  b.store(o16, b.u32(1), b.bitcast(DType::U16, b.constant(DType::BF16, -2.0)));
  b.store(of, zero, b.bitcast(DType::F16, b.constant(DType::U16, 0x3C00)));
  b.store(ob, zero, b.bitcast(DType::BF16, b.constant(DType::F16, 1.0)));
  b.store(oi, zero, b.bitcast(DType::I8, b.constant(DType::U8, 0xFF)));
  const ir::Kernel k = b.build();
  runtime::HostTensor h32 = zeros(DType::U32, 1), h16 = zeros(DType::U16, 2),
                      hf = zeros(DType::F16, 1), hb = zeros(DType::BF16, 1),
                      hi = zeros(DType::I8, 1);
  run(k, {&h32, &h16, &hf, &hb, &hi}, Grid::per_row(1, 1));
  EXPECT_EQ(read_tensor(h32)[0], 0x3F800000u);
  EXPECT_EQ(read_tensor(h16), (std::vector<double>{0x3C00, 0xC000}));
  EXPECT_EQ(read_tensor(hf)[0], 1.0);
  EXPECT_EQ(read_tensor(hb)[0], bf16_bits_to_f32(0x3C00));
  EXPECT_EQ(read_tensor(hi)[0], -1);
}

// Every builtin of a 3-d grid, written out per thread.
TEST(SimArith, BuiltinsOfAThreeDimensionalGrid) {
  IrBuilder b("builtins");
  const int out = b.output("out", DType::U32);
  using B = ir::Builtin;
  const auto linear_group = b.op(
      OpKind::Add, {b.builtin(B::GroupId, 0),
                    b.op(OpKind::Mul, {b.builtin(B::GroupId, 1), b.builtin(B::GridGroups, 0)})});
  const auto linear_tid = b.op(
      OpKind::Add,
      {b.tid(),
       b.op(OpKind::Mul, {b.builtin(B::GroupSize, 0),
                          b.op(OpKind::Add, {b.builtin(B::ThreadId, 1),
                                             b.op(OpKind::Mul, {b.builtin(B::ThreadId, 2),
                                                                b.builtin(B::GroupSize, 1)})})})});
  const auto slot = b.op(
      OpKind::Mul,
      {b.op(OpKind::Add, {b.op(OpKind::Mul, {linear_group, b.u32(80)}), linear_tid}), b.u32(5)});
  const std::vector<ir::ValueId> fields = {b.builtin(B::GlobalId, 0), b.builtin(B::GlobalId, 2),
                                           b.builtin(B::Lane), b.builtin(B::Simdgroup),
                                           b.builtin(B::SimdgroupCount)};
  for (std::uint32_t f = 0; f < fields.size(); ++f) {
    b.store(out, b.op(OpKind::Add, {slot, b.u32(f)}), fields[f]);
  }
  const ir::Kernel k = b.build();
  const Grid g{{2, 3, 1}, {8, 5, 2}};  // 80 threads per group
  runtime::HostTensor o = zeros(DType::U32, 6 * 80 * 5);
  run(k, {&o}, g);
  const std::vector<double> got = read_tensor(o);
  for (std::uint32_t gy = 0; gy < 3; ++gy) {
    for (std::uint32_t gx = 0; gx < 2; ++gx) {
      for (std::uint32_t t = 0; t < 80; ++t) {
        const std::size_t at = ((gy * 2 + gx) * 80 + t) * 5;
        EXPECT_EQ(got[at], gx * 8 + t % 8);
        EXPECT_EQ(got[at + 1], t / 40);
        EXPECT_EQ(got[at + 2], t % 32);
        EXPECT_EQ(got[at + 3], t / 32);
        EXPECT_EQ(got[at + 4], 3);
      }
    }
  }
}

}  // namespace
}  // namespace iron::sim_test
