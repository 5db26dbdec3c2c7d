/// Reads of memory nobody wrote: shared memory the group never stored to (even where a max()
/// would hide the poison), Out elements read before the launch wrote them, and InOut tensors,
/// whose contents at entry are defined.
#include <gtest/gtest.h>

#include <string>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using ir::OpKind;
using runtime::Grid;
using Kind = runtime::SimError::Kind;

std::string expect_unwritten(const ir::Kernel& k, std::vector<runtime::Arg> args,
                             const Grid& grid) {
  const auto e = finding(k, std::move(args), grid);
  if (!e) {
    ADD_FAILURE() << "the run ended without a finding";
    return "";
  }
  EXPECT_EQ(e->kind(), Kind::UninitializedRead) << e->what();
  return e->what();
}

// Half the group fills smem[0..32); every thread takes max(smem[t], smem[t + 32]). The unwritten
// half holds NaN, and fmax(x, NaN) = x: the output is right, the read is still a bug.
TEST(SimInitcheck, SharedReadHiddenByAMax) {
  IrBuilder b("half_filled");
  b.group_contract();
  const int x = b.input("x", DType::F32);
  const int out = b.output("out", DType::F32);
  const int s = b.shared("smem0", DType::F32, 64);
  const auto tid = b.tid();
  b.branch(b.op(OpKind::Lt, {tid, b.u32(32)}),
           [&] { b.at(10).shared_store(s, tid, b.load(x, tid)); });
  b.barrier();
  const auto lo = b.op(OpKind::Rem, {tid, b.u32(32)});
  const auto low = b.at(11).shared_load(s, lo);
  const auto high = b.at(12).shared_load(s, b.op(OpKind::Add, {lo, b.u32(32)}));
  b.at(13).store(out, tid, b.op(OpKind::Max, {low, high}));
  const ir::Kernel k = b.build();
  runtime::HostTensor hx = make_tensor(DType::F32, std::vector<double>(64, 2.0));
  runtime::HostTensor ho = zeros(DType::F32, 64);
  EXPECT_EQ(expect_unwritten(k, {&hx, &ho}, Grid::per_row(1, 64)),
            "half_filled: read of uninitialized shared memory 'smem0' at index 32 ('smem0' has "
            "64 elements): thread 0 (0,0,0) read it before any thread of the group stored to it, "
            "in group (0,0,0) at tests/sim/kernels.cpp:12");
}

// What one group stored is not there for the next group: every group starts unwritten.
TEST(SimInitcheck, SharedMemoryStartsUnwrittenInEveryGroup) {
  IrBuilder b("first_group_only");
  b.group_contract();
  const int out = b.output("out", DType::U32);
  const int s = b.shared("smem0", DType::U32, 32);
  const auto tid = b.tid();
  b.branch(b.op(OpKind::Eq, {b.builtin(ir::Builtin::GroupId), b.u32(0)}),
           [&] { b.shared_store(s, tid, tid); });
  b.barrier();
  b.at(20).store(out, b.gid(), b.shared_atomic(OpKind::AtomicAdd, s, tid, b.u32(1)));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 64);
  EXPECT_EQ(expect_unwritten(k, {&ho}, Grid::per_row(2, 32)),
            "first_group_only: read of uninitialized shared memory 'smem0' at index 0 ('smem0' "
            "has 32 elements): thread 0 (0,0,0) atomically updated it before any thread of the "
            "group stored to it, in group (1,0,0) at tests/sim/kernels.cpp:20");
}

// out[i] += 1 on an Out<f32>: its contents are undefined at entry.
ir::Kernel increment(bool in_out) {
  IrBuilder b("increment");
  const int out = in_out ? b.inout("out", DType::F32) : b.output("out", DType::F32);
  const auto i = b.gid();
  const auto v = b.at(30).load(out, i);
  b.at(31).store(out, i, b.op(OpKind::Add, {v, b.constant(DType::F32, 1)}));
  return b.build();
}

TEST(SimInitcheck, OutElementReadBeforeWritten) {
  runtime::HostTensor ho = zeros(DType::F32, 64);
  EXPECT_EQ(expect_unwritten(increment(false), {&ho}, Grid::per_row(2, 32)),
            "increment: read of uninitialized output 'out' at index 0 ('out' has 64 elements): "
            "thread 0 (0,0,0) read it before any thread of the launch wrote it, in group (0,0,0) "
            "at tests/sim/kernels.cpp:30; an Out<T> tensor is undefined at kernel entry (declare "
            "it InOut<T> if the kernel reads what it holds)");
}

TEST(SimInitcheck, InOutElementsAreDefinedAtEntry) {
  runtime::HostTensor ho = make_tensor(DType::F32, std::vector<double>(64, 41.0));
  EXPECT_FALSE(finding(increment(true), {&ho}, Grid::per_row(2, 32)));
  EXPECT_EQ(read_tensor(ho)[63], 42);
}

// An atomic reads the element it updates: on an Out nobody wrote, that is undefined too.
TEST(SimInitcheck, AtomicOnAnUnwrittenOutElement) {
  IrBuilder b("histogram");
  const int bins = b.output("bins", DType::U32);
  b.at(40).atomic(OpKind::AtomicAdd, bins, b.op(OpKind::Rem, {b.tid(), b.u32(4)}), b.u32(1));
  const ir::Kernel k = b.build();
  runtime::HostTensor hb = zeros(DType::U32, 4);
  EXPECT_EQ(expect_unwritten(k, {&hb}, Grid::per_row(1, 32)),
            "histogram: read of uninitialized output 'bins' at index 0 ('bins' has 4 elements): "
            "thread 0 (0,0,0) atomically updated it before any thread of the launch wrote it, in "
            "group (0,0,0) at tests/sim/kernels.cpp:40; an Out<T> tensor is undefined at kernel "
            "entry (declare it InOut<T> if the kernel reads what it holds)");
}

}  // namespace
}  // namespace iron::sim_test
