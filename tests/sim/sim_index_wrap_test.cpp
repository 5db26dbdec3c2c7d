/// Index arithmetic computed exactly: a u32 row * stride past 2^32, a u32 that goes negative, an
/// i32 that overflows into the negatives and a loop counter that wraps are reported where they
/// feed an index, even when the wrapped index lands in bounds; a wrapped value a select discards,
/// and a hash that wraps but indexes nothing, are not.
#include <gtest/gtest.h>

#include <string>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using ir::OpKind;
using runtime::Grid;
using Kind = runtime::SimError::Kind;

std::string expect_wrap(const ir::Kernel& k, std::vector<runtime::Arg> args, const Grid& grid) {
  const auto e = finding(k, std::move(args), grid);
  if (!e) {
    ADD_FAILURE() << "the run ended without a finding";
    return "";
  }
  EXPECT_EQ(e->kind(), Kind::IndexOverflow) << e->what();
  return e->what();
}

// out[t] = x[row * stride + t]: row 2 of a stride of 2^31 is element 2^32, which wraps to t.
TEST(SimIndexWrap, RowTimesStridePast2To32) {
  IrBuilder b("strided_rows");
  const int x = b.input("x", DType::F32);
  const int out = b.output("out", DType::F32);
  const int row = b.constexpr_param("row", DType::U32);
  const int stride = b.constexpr_param("stride", DType::U32);
  const auto tid = b.tid();
  const auto offset = b.at(10).op(OpKind::Mul, {b.constexpr_ref(row), b.constexpr_ref(stride)});
  const auto v = b.at(11).load(x, b.op(OpKind::Add, {offset, tid}));
  b.at(12).store(out, tid, v);
  const ir::Kernel k = b.build();
  runtime::HostTensor hx = zeros(DType::F32, 32), ho = zeros(DType::F32, 32);
  EXPECT_EQ(expect_wrap(k, {&hx, &ho, scalar(DType::U32, 2), scalar(DType::U32, 2147483648.0)},
                        Grid::per_row(1, 32)),
            "strided_rows: index arithmetic wraps: mul of 2 and 2147483648 is 4294967296, which "
            "does not fit u32, by thread 0 (0,0,0) in group (0,0,0) at tests/sim/kernels.cpp:10; "
            "the value feeds the index of the load of 'x' at tests/sim/kernels.cpp:11");
  // Row 0 never wraps.
  EXPECT_FALSE(finding(k, {&hx, &ho, scalar(DType::U32, 0), scalar(DType::U32, 2147483648.0)},
                       Grid::per_row(1, 32)));
}

// out[t] = x[(t - 1) % 32]: for thread 0, t - 1 is -1, which u32 holds as 2^32 - 1, and the %
// brings it back in bounds (to 31, not to the intended 31 of a wrap-around, by luck only).
TEST(SimIndexWrap, NegativeU32) {
  IrBuilder b("previous");
  const int x = b.input("x", DType::F32);
  const int out = b.output("out", DType::F32);
  const auto tid = b.tid();
  const auto prev = b.at(20).op(OpKind::Sub, {tid, b.u32(1)});
  b.at(21).store(out, tid, b.load(x, b.op(OpKind::Rem, {prev, b.u32(32)})));
  const ir::Kernel k = b.build();
  runtime::HostTensor hx = zeros(DType::F32, 32), ho = zeros(DType::F32, 32);
  EXPECT_EQ(expect_wrap(k, {&hx, &ho}, Grid::per_row(1, 32)),
            "previous: index arithmetic wraps: sub of 0 and 1 is -1, which does not fit u32, by "
            "thread 0 (0,0,0) in group (0,0,0) at tests/sim/kernels.cpp:20; the value feeds the "
            "index of the load of 'x' at tests/sim/kernels.cpp:21");
}

// select(t > 0, t - 1, 0): thread 0 computes t - 1 too (both sides of a select run), but the
// wrapped value never reaches the index.
TEST(SimIndexWrap, WrapDiscardedByASelectIsNoFinding) {
  IrBuilder b("guarded_previous");
  const int x = b.input("x", DType::F32);
  const int out = b.output("out", DType::F32);
  const auto tid = b.tid();
  const auto zero = b.u32(0);
  const auto prev =
      b.select(b.op(OpKind::Gt, {tid, zero}), b.op(OpKind::Sub, {tid, b.u32(1)}), zero);
  b.store(out, tid, b.load(x, prev));
  const ir::Kernel k = b.build();
  runtime::HostTensor hx = make_tensor(DType::F32, std::vector<double>(32, 3.0));
  runtime::HostTensor ho = zeros(DType::F32, 32);
  const auto e = finding(k, {&hx, &ho}, Grid::per_row(1, 32));
  EXPECT_FALSE(e) << e->what();
  EXPECT_EQ(read_tensor(ho)[0], 3);
}

// An i32 index base + t, with base near 2^31: thread 48 passes i32's maximum and would go
// negative. The sum goes through a variable and a cast on its way to the store's index.
TEST(SimIndexWrap, I32ThatGoesNegative) {
  IrBuilder b("signed_base");
  const int out = b.output("out", DType::F32);
  const int base = b.constexpr_param("base", DType::I32);
  const auto t = b.cast(DType::I32, b.tid());
  const auto acc = b.var(b.i32(0));
  b.at(30).var_store(acc, b.op(OpKind::Add, {b.constexpr_ref(base), t}));
  const auto index = b.op(OpKind::Rem, {b.var_load(acc), b.i32(64)});
  b.at(31).store(out, b.cast(DType::U32, index), b.constant(DType::F32, 1));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::F32, 64);
  const std::string msg =
      expect_wrap(k, {&ho, scalar(DType::I32, 2147483600.0)}, Grid::per_row(1, 64));
  EXPECT_EQ(msg.substr(0, msg.find(" by ")),
            "signed_base: index arithmetic wraps: add of 2147483600 and 48 is 2147483648, which "
            "does not fit i32,");
  EXPECT_NE(msg.find("by thread 48 (48,0,0) in group (0,0,0) at tests/sim/kernels.cpp:30; the "
                     "value feeds the index of the store of 'out' at tests/sim/kernels.cpp:31"),
            std::string::npos)
      << msg;
}

// A grid-stride loop whose counter passes 2^32 would start over at 0 on a GPU.
TEST(SimIndexWrap, LoopCounterThatWraps) {
  IrBuilder b("high_loop");
  const int out = b.output("out", DType::U32);
  const int start = b.constexpr_param("start", DType::U32);
  const auto first = b.op(OpKind::Add, {b.constexpr_ref(start), b.tid()});
  b.at(40).loop(first, b.u32(4294967295u), b.u32(256), [&](auto i) {
    b.at(41).store(out, b.op(OpKind::Sub, {i, b.constexpr_ref(start)}), i);
  });
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 256);
  EXPECT_EQ(expect_wrap(k, {&ho, scalar(DType::U32, 4294967040.0)}, Grid::per_row(1, 32)),
            "high_loop: index arithmetic wraps: the loop counter 4294967040 plus its step 256 is "
            "4294967296, which does not fit u32, by thread 0 (0,0,0) in group (0,0,0) at "
            "tests/sim/kernels.cpp:40; the value feeds the index of the store of 'out' at "
            "tests/sim/kernels.cpp:41");
}

// A multiplicative hash wraps by design: stored as data, or mixed by xor into a bin index, it is
// no index arithmetic and is not reported.
TEST(SimIndexWrap, HashesMayWrap) {
  IrBuilder b("hashes");
  const int out = b.output("out", DType::U32);
  const int bins = b.inout("bins", DType::U32);
  const auto tid = b.tid();
  const auto h = b.op(OpKind::Mul, {b.op(OpKind::Add, {tid, b.u32(1)}), b.u32(2654435761u)});
  b.store(out, tid, h);
  const auto bin = b.op(OpKind::Rem, {b.op(OpKind::Xor, {h, b.u32(0x5bd1e995u)}), b.u32(16)});
  b.atomic(OpKind::AtomicAdd, bins, bin, b.u32(1));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 64), hb = zeros(DType::U32, 16);
  const auto e = finding(k, {&ho, &hb}, Grid::per_row(1, 64));
  EXPECT_FALSE(e) << e->what();
  EXPECT_EQ(read_tensor(ho)[1], static_cast<std::uint32_t>(2u * 2654435761u));
  double total = 0;
  for (const double n : read_tensor(hb)) total += n;
  EXPECT_EQ(total, 64);
}

}  // namespace
}  // namespace iron::sim_test
