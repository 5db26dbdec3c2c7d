/// Threads working together on the simulator: threadgroup memory with barriers, every simd op on
/// each simdgroup, group reductions, and atomics on tensors and shared memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using ir::OpKind;
using runtime::Grid;

// One group per row of 64: a tree reduction in shared memory, barrier after every level.
TEST(SimCollective, SharedMemoryTreeReductionWithBarriers) {
  IrBuilder b("tree_sum");
  b.group_contract();
  const int x = b.input("x", DType::F32);
  const int out = b.output("out", DType::F32);
  const int partial = b.shared("smem0", DType::F32, 64);
  const auto tid = b.tid();
  const auto row = b.builtin(ir::Builtin::GroupId);
  b.shared_store(partial, tid,
                 b.load(x, b.op(OpKind::Add, {b.op(OpKind::Mul, {row, b.u32(64)}), tid})));
  b.barrier();
  for (std::uint32_t s = 32; s > 0; s /= 2) {  // unrolled at build time, as the DSL traces it
    b.branch(b.op(OpKind::Lt, {tid, b.u32(s)}), [&] {
      const auto other = b.shared_load(partial, b.op(OpKind::Add, {tid, b.u32(s)}));
      b.shared_store(partial, tid, b.op(OpKind::Add, {b.shared_load(partial, tid), other}));
    });
    b.barrier();
  }
  b.branch(b.op(OpKind::Eq, {tid, b.u32(0)}),
           [&] { b.store(out, row, b.shared_load(partial, b.u32(0))); });
  const ir::Kernel k = b.build();

  constexpr std::uint32_t kRows = 5;
  std::vector<double> xv(kRows * 64);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>(i % 13);
  runtime::HostTensor hx = make_tensor(DType::F32, xv), ho = zeros(DType::F32, kRows);
  run(k, {&hx, &ho}, Grid::per_row(kRows, 64));
  const std::vector<double> got = read_tensor(ho);
  for (std::uint32_t r = 0; r < kRows; ++r) {
    double want = 0;
    for (std::uint32_t i = 0; i < 64; ++i) want += xv[r * 64 + i];
    EXPECT_EQ(got[r], want) << "row " << r;
  }
}

struct SimdCase {
  OpKind kind;
  std::int64_t operand;  // lane, mask or delta; unused by the reductions
  // want(values of one simdgroup, lane) -> value
  std::function<double(const std::vector<double>&, std::uint32_t)> want;
};

// 64 threads: two simdgroups, each on its own values (the group-size rule the verifier asks of
// a kernel with simd ops makes every simdgroup complete).
TEST(SimCollective, EverySimdOpOnEachSimdgroup) {
  constexpr std::uint32_t kThreads = 64;
  auto sum = [](const std::vector<double>& v, std::uint32_t) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  };
  auto own_or = [](const std::vector<double>& v, std::uint32_t lane, std::int64_t src) {
    return src >= 0 && src < static_cast<std::int64_t>(v.size()) ? v[src] : v[lane];
  };
  const std::vector<SimdCase> cases = {
      {OpKind::SimdSum, 0, sum},
      {OpKind::SimdMax, 0,
       [](const auto& v, std::uint32_t) { return *std::max_element(v.begin(), v.end()); }},
      {OpKind::SimdMin, 0,
       [](const auto& v, std::uint32_t) { return *std::min_element(v.begin(), v.end()); }},
      {OpKind::SimdPrefixSum, 0,
       [](const auto& v, std::uint32_t l) {
         double s = 0;
         for (std::uint32_t i = 0; i <= l; ++i) s += v[i];
         return s;
       }},
      {OpKind::SimdPrefixExclusiveSum, 0,
       [](const auto& v, std::uint32_t l) {
         double s = 0;
         for (std::uint32_t i = 0; i < l; ++i) s += v[i];
         return s;
       }},
      {OpKind::SimdShuffle, 5, [&](const auto& v, std::uint32_t l) { return own_or(v, l, 5); }},
      {OpKind::SimdBroadcast, 9, [&](const auto& v, std::uint32_t l) { return own_or(v, l, 9); }},
      {OpKind::SimdShuffleXor, 3,
       [&](const auto& v, std::uint32_t l) { return own_or(v, l, l ^ 3); }},
      {OpKind::SimdShuffleUp, 2,
       [&](const auto& v, std::uint32_t l) { return own_or(v, l, std::int64_t{l} - 2); }},
      {OpKind::SimdShuffleDown, 4,
       [&](const auto& v, std::uint32_t l) { return own_or(v, l, std::int64_t{l} + 4); }},
  };
  for (DType t : {DType::F32, DType::I32}) {
    for (const SimdCase& c : cases) {
      IrBuilder b("simd");
      b.group_contract();
      const int x = b.input("x", t);
      const int out = b.output("out", t);
      const auto tid = b.tid();
      const bool shuffle = c.kind >= OpKind::SimdShuffle && c.kind <= OpKind::SimdBroadcast;
      const auto r = shuffle ? b.collective(c.kind, b.load(x, tid),
                                            b.u32(static_cast<std::uint32_t>(c.operand)))
                             : b.collective(c.kind, b.load(x, tid));
      b.store(out, tid, r);
      const ir::Kernel k = b.build();
      std::vector<double> xv(kThreads);
      for (std::uint32_t i = 0; i < kThreads; ++i) xv[i] = static_cast<double>((i * 37) % 23) - 9;
      runtime::HostTensor hx = make_tensor(t, xv), ho = zeros(t, kThreads);
      run(k, {&hx, &ho}, Grid::per_row(1, kThreads));
      const std::vector<double> got = read_tensor(ho);
      for (std::uint32_t i = 0; i < kThreads; ++i) {
        const std::uint32_t first = i / 32 * 32;
        const std::vector<double> group(xv.begin() + first,
                                        xv.begin() + std::min(first + 32, kThreads));
        EXPECT_EQ(got[i], c.want(group, i - first))
            << ir::op_name(c.kind) << " " << dtype_name(t) << " thread " << i;
      }
    }
  }
}

TEST(SimCollective, SimdSumOfF16IsRoundedOnce) {
  IrBuilder b("simd_f16");
  b.group_contract();
  const int x = b.input("x", DType::F16);
  const int out = b.output("out", DType::F16);
  b.store(out, b.tid(), b.collective(OpKind::SimdSum, b.load(x, b.tid())));
  const ir::Kernel k = b.build();
  // 2048 plus 31 ones: each f16 step alone would round back to 2048; the f32 sum does not.
  std::vector<double> xv(32, 1.0);
  xv[0] = 2048;
  runtime::HostTensor hx = make_tensor(DType::F16, xv), ho = zeros(DType::F16, 32);
  run(k, {&hx, &ho}, Grid::per_row(1, 32));
  EXPECT_EQ(read_tensor(ho)[7], 2080);
}

TEST(SimCollective, GroupReductionsGiveEveryThreadTheResult) {
  constexpr std::uint32_t kThreads = 96;
  for (OpKind kind : {OpKind::ReduceSum, OpKind::ReduceMax, OpKind::ReduceMin}) {
    for (DType t : {DType::F32, DType::I32, DType::U8}) {
      IrBuilder b("reduce");
      b.group_contract();
      const int x = b.input("x", t);
      const int out = b.output("out", t);
      b.store(out, b.tid(), b.collective(kind, b.load(x, b.tid())));
      const ir::Kernel k = b.build();
      std::vector<double> xv(kThreads);
      for (std::uint32_t i = 0; i < kThreads; ++i) {
        xv[i] = t == DType::U8 ? (i * 41) % 256 : static_cast<double>((i * 41) % 97) - 40;
      }
      double want = kind == OpKind::ReduceSum ? 0 : xv[0];
      for (double v : xv) {
        if (kind == OpKind::ReduceSum) want += v;
        if (kind == OpKind::ReduceMax) want = std::max(want, v);
        if (kind == OpKind::ReduceMin) want = std::min(want, v);
      }
      if (t == DType::U8 && kind == OpKind::ReduceSum) want = std::fmod(want, 256);
      runtime::HostTensor hx = make_tensor(t, xv), ho = zeros(t, kThreads);
      run(k, {&hx, &ho}, Grid::per_row(1, kThreads));
      EXPECT_EQ(read_tensor(ho), std::vector<double>(kThreads, want))
          << ir::op_name(kind) << " " << dtype_name(t);
    }
  }
}

// Every thread of 4 groups bumps one counter; sequential per group, in thread order, so each
// sees exactly the count before it. The other atomics on a second buffer.
TEST(SimCollective, TensorAtomicsReturnThePreviousValue) {
  IrBuilder b("atomics");
  const int counter = b.inout("counter", DType::U32);
  const int prev = b.output("prev", DType::U32);
  const int bits = b.inout("bits", DType::U32);
  const int fsum = b.inout("fsum", DType::F32);
  const auto gid = b.gid();
  const auto zero = b.u32(0);
  b.store(prev, gid, b.atomic(OpKind::AtomicAdd, counter, zero, b.u32(1)));
  b.atomic(OpKind::AtomicMax, bits, zero, gid);
  b.atomic(OpKind::AtomicMin, bits, b.u32(1), gid);
  b.atomic(OpKind::AtomicOr, bits, b.u32(2), b.op(OpKind::Shl, {b.u32(1), gid}));
  b.atomic(OpKind::AtomicAnd, bits, b.u32(3),
           b.op(OpKind::Not, {b.op(OpKind::Shl, {b.u32(1), gid})}));
  b.atomic(OpKind::AtomicXor, bits, b.u32(4), b.u32(1));
  b.atomic(OpKind::AtomicExchange, bits, b.u32(5), gid);
  b.atomic(OpKind::AtomicAdd, fsum, zero, b.constant(DType::F32, 0.5));
  const ir::Kernel k = b.build();

  runtime::HostTensor hc = zeros(DType::U32, 1), hp = zeros(DType::U32, 128),
                      hb = make_tensor(DType::U32, {0, 1000, 0, 0xFFFFFFFF, 0, 0}),
                      hf = zeros(DType::F32, 1);
  run(k, {&hc, &hp, &hb, &hf}, Grid::elementwise(128, 32));
  EXPECT_EQ(read_tensor(hc)[0], 128);
  const std::vector<double> p = read_tensor(hp);
  for (std::uint32_t i = 0; i < 128; ++i) EXPECT_EQ(p[i], i);
  EXPECT_EQ(read_tensor(hb), (std::vector<double>{127, 0, 0xFFFFFFFF, 0, 0, 127}));
  EXPECT_EQ(read_tensor(hf)[0], 64);
}

// A histogram of 4 bins in shared memory: atomics of different threads do not race.
TEST(SimCollective, SharedAtomicsDoNotRaceWithEachOther) {
  IrBuilder b("histogram");
  b.group_contract();
  const int x = b.input("x", DType::U32);
  const int out = b.output("out", DType::U32);
  const int bins = b.shared("smem0", DType::U32, 4);
  const auto tid = b.tid();
  const auto is_bin = b.op(OpKind::Lt, {tid, b.u32(4)});
  b.branch(is_bin, [&] { b.shared_store(bins, tid, b.u32(0)); });
  b.barrier();
  b.shared_atomic(OpKind::AtomicAdd, bins, b.op(OpKind::Rem, {b.load(x, tid), b.u32(4)}), b.u32(1));
  b.barrier();
  b.branch(is_bin, [&] { b.store(out, tid, b.shared_load(bins, tid)); });
  const ir::Kernel k = b.build();
  std::vector<double> xv(64);
  std::vector<double> want(4, 0);
  for (std::uint32_t i = 0; i < 64; ++i) {
    xv[i] = (i * i) % 11;
    want[(i * i) % 11 % 4] += 1;
  }
  runtime::HostTensor hx = make_tensor(DType::U32, xv), ho = zeros(DType::U32, 4);
  run(k, {&hx, &ho}, Grid::per_row(1, 64));
  EXPECT_EQ(read_tensor(ho), want);
}

}  // namespace
}  // namespace iron::sim_test
