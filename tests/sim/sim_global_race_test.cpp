/// Races on tensors: two threads (of one group or of two) storing one element, a store and a
/// load or an atomic that nothing orders; what is not a race (atomics only, a thread re-storing
/// its own element, accesses ordered by a barrier); the same report and outputs whatever the
/// host thread count; and the last writer of every element.
#include <gtest/gtest.h>

#include <string>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using ir::OpKind;
using runtime::Grid;
using Kind = runtime::SimError::Kind;

std::string expect_race(const ir::Kernel& k, std::vector<runtime::Arg> args, const Grid& grid,
                        const runtime::SimOptions& options = {}) {
  const auto e = finding(k, std::move(args), grid, options);
  if (!e) {
    ADD_FAILURE() << "the run ended without a finding";
    return "";
  }
  EXPECT_EQ(e->kind(), Kind::GlobalRace) << e->what();
  return e->what();
}

// Threads 2k and 2k + 1 both store out[k].
TEST(SimGlobalRace, TwoThreadsOfOneGroupStoreOneElement) {
  IrBuilder b("pair_writers");
  const int out = b.output("out", DType::U32);
  const auto tid = b.tid();
  b.at(10).store(out, b.op(OpKind::Shr, {tid, b.u32(1)}), tid);
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 16);
  EXPECT_EQ(expect_race(k, {&ho}, Grid::per_row(1, 32)),
            "pair_writers: global-memory race on 'out' at index 0 ('out' has 16 elements): "
            "thread 1 (1,0,0) in group (0,0,0) wrote it at tests/sim/kernels.cpp:10 after "
            "thread 0 (0,0,0) in group (0,0,0) wrote it at tests/sim/kernels.cpp:10; an element "
            "has one writer per launch (give each element one thread, or use atomics)");
}

// A barrier orders the two stores, but the element still has two writers.
TEST(SimGlobalRace, TwoWritersAcrossABarrier) {
  IrBuilder b("handover");
  b.group_contract();
  const int out = b.output("out", DType::U32);
  const auto tid = b.tid();
  const auto zero = b.u32(0);
  b.at(11).branch(b.op(OpKind::Eq, {tid, zero}), [&] { b.store(out, zero, tid); });
  b.barrier();
  b.at(12).branch(b.op(OpKind::Eq, {tid, b.u32(1)}), [&] { b.store(out, zero, tid); });
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 1);
  EXPECT_EQ(expect_race(k, {&ho}, Grid::per_row(1, 32)),
            "handover: global-memory race on 'out' at index 0 ('out' has 1 elements): thread 1 "
            "(1,0,0) in group (0,0,0) wrote it at tests/sim/kernels.cpp:12 after thread 0 (0,0,0) "
            "in group (0,0,0) wrote it at tests/sim/kernels.cpp:11; an element has one writer "
            "per launch (give each element one thread, or use atomics)");
}

// Every group stores out[thread]: group 1 overwrites group 0.
TEST(SimGlobalRace, TwoGroupsStoreOneElement) {
  IrBuilder b("per_thread_not_per_group");
  const int out = b.output("out", DType::U32);
  b.at(20).store(out, b.tid(), b.builtin(ir::Builtin::GroupId));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 32);
  EXPECT_EQ(expect_race(k, {&ho}, Grid::per_row(2, 32)),
            "per_thread_not_per_group: global-memory race on 'out' at index 0 ('out' has 32 "
            "elements): thread 0 (0,0,0) in group (1,0,0) wrote it at tests/sim/kernels.cpp:20 "
            "after thread 0 (0,0,0) in group (0,0,0) wrote it at tests/sim/kernels.cpp:20; "
            "nothing orders the threads of two groups");
}

// Group 1 reads what group 0 stored: on a GPU group 1 may run first.
TEST(SimGlobalRace, LoadOfAnotherGroupsStore) {
  IrBuilder b("cross_group_read");
  const int out = b.output("out", DType::U32);
  const int res = b.output("res", DType::U32);
  const auto tid = b.tid();
  const auto gid = b.gid();
  b.at(30).store(out, gid, gid);
  b.branch(b.op(OpKind::Eq, {b.builtin(ir::Builtin::GroupId), b.u32(1)}),
           [&] { b.at(31).store(res, tid, b.load(out, tid)); });
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 64), hr = zeros(DType::U32, 32);
  EXPECT_EQ(expect_race(k, {&ho, &hr}, Grid::per_row(2, 32)),
            "cross_group_read: global-memory race on 'out' at index 0 ('out' has 64 elements): "
            "thread 0 (0,0,0) in group (1,0,0) read it at tests/sim/kernels.cpp:31 after thread "
            "0 (0,0,0) in group (0,0,0) wrote it at tests/sim/kernels.cpp:30; nothing orders the "
            "threads of two groups");
}

// Group 0 reads buf[32 + t], which group 1 then overwrites: the reverse order races too.
TEST(SimGlobalRace, StoreOverAnotherGroupsLoad) {
  IrBuilder b("cross_group_overwrite");
  const int buf = b.inout("buf", DType::U32);
  const int res = b.output("res", DType::U32);
  const auto tid = b.tid();
  const auto gid = b.gid();
  b.at(40).store(res, gid, b.load(buf, b.op(OpKind::Add, {tid, b.u32(32)})));
  b.branch(b.op(OpKind::Eq, {b.builtin(ir::Builtin::GroupId), b.u32(1)}),
           [&] { b.at(41).store(buf, gid, tid); });
  const ir::Kernel k = b.build();
  runtime::HostTensor hb = zeros(DType::U32, 64), hr = zeros(DType::U32, 64);
  EXPECT_EQ(expect_race(k, {&hb, &hr}, Grid::per_row(2, 32)),
            "cross_group_overwrite: global-memory race on 'buf' at index 32 ('buf' has 64 "
            "elements): thread 0 (0,0,0) in group (1,0,0) wrote it at tests/sim/kernels.cpp:41 "
            "after thread 0 (0,0,0) in group (0,0,0) read it at tests/sim/kernels.cpp:40; "
            "nothing orders the threads of two groups");
}

// Every thread of every group adds 1 to one counter: atomics never race with each other.
TEST(SimGlobalRace, AtomicsOnlyAreNotARace) {
  IrBuilder b("counter");
  const int count = b.inout("count", DType::U32);
  const int seen = b.output("seen", DType::U32);
  b.at(50).store(seen, b.gid(), b.atomic(OpKind::AtomicAdd, count, b.u32(0), b.u32(1)));
  const ir::Kernel k = b.build();
  runtime::HostTensor hc = zeros(DType::U32, 1), hs = zeros(DType::U32, 128);
  EXPECT_FALSE(finding(k, {&hc, &hs}, Grid::per_row(4, 32)));
  EXPECT_EQ(read_tensor(hc)[0], 128);
  EXPECT_EQ(read_tensor(hs)[127], 127);  // threads update in order in the simulator
}

// Thread 0 zeroes the counter, then every thread adds to it: a plain store and atomics race
// unless a barrier of their one group orders them.
ir::Kernel zero_then_add(bool with_barrier) {
  IrBuilder b("zero_then_add");
  b.group_contract();
  const int count = b.output("count", DType::U32);
  const auto zero = b.u32(0);
  b.at(55).branch(b.op(OpKind::Eq, {b.gid(), zero}), [&] { b.store(count, zero, zero); });
  if (with_barrier) b.barrier();
  b.at(56).atomic(OpKind::AtomicAdd, count, zero, b.u32(1));
  return b.build();
}

TEST(SimGlobalRace, PlainStoreAndAtomics) {
  runtime::HostTensor hc = zeros(DType::U32, 1);
  EXPECT_EQ(expect_race(zero_then_add(false), {&hc}, Grid::per_row(1, 32)),
            "zero_then_add: global-memory race on 'count' at index 0 ('count' has 1 elements): "
            "thread 1 (1,0,0) in group (0,0,0) atomically updated it at tests/sim/kernels.cpp:56 "
            "after thread 0 (0,0,0) in group (0,0,0) wrote it at tests/sim/kernels.cpp:55; with "
            "no barrier in between");

  const ir::Kernel ordered = zero_then_add(true);
  EXPECT_FALSE(finding(ordered, {&hc}, Grid::per_row(1, 32)));
  EXPECT_EQ(read_tensor(hc)[0], 32);
  // A barrier orders one group only: group 1's atomics may run before group 0's store.
  EXPECT_EQ(expect_race(ordered, {&hc}, Grid::per_row(2, 32)),
            "zero_then_add: global-memory race on 'count' at index 0 ('count' has 1 elements): "
            "thread 0 (0,0,0) in group (1,0,0) atomically updated it at tests/sim/kernels.cpp:56 "
            "after thread 0 (0,0,0) in group (0,0,0) wrote it at tests/sim/kernels.cpp:55; "
            "nothing orders the threads of two groups");
}

// Each thread stores its element, reads it back and stores it again; then, after a barrier,
// reads its neighbour's: nothing races.
TEST(SimGlobalRace, OwnElementsAndOrderedReadsAreNotARace) {
  IrBuilder b("own_elements");
  b.group_contract();
  const int out = b.output("out", DType::F32);
  const int next = b.output("next", DType::F32);
  const auto tid = b.tid();
  const auto gid = b.gid();
  b.store(out, gid, b.constant(DType::F32, 1));
  const auto v = b.load(out, gid);
  b.store(out, gid, b.op(OpKind::Add, {v, b.constant(DType::F32, 1)}));
  b.barrier();
  const auto base = b.op(OpKind::Sub, {gid, tid});
  const auto neighbour = b.op(OpKind::Rem, {b.op(OpKind::Add, {tid, b.u32(1)}), b.u32(32)});
  b.store(next, gid, b.load(out, b.op(OpKind::Add, {base, neighbour})));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::F32, 64), hn = zeros(DType::F32, 64);
  EXPECT_FALSE(finding(k, {&ho, &hn}, Grid::per_row(2, 32)));
  EXPECT_EQ(read_tensor(ho)[63], 2);
  EXPECT_EQ(read_tensor(hn)[63], 2);
}

// 128 groups of 64 threads (large enough for two host threads) store out[gid % 320]: group 5
// (on the second host thread) is the first to overwrite group 0, while each host thread alone
// would first see groups 10 and 0, or 15 and 5. The report and the outputs are those of the
// groups run in order, every time.
TEST(SimGlobalRace, SameReportAndOutputsWhateverTheHostThreads) {
  IrBuilder b("wrapped_around");
  const int out = b.output("out", DType::U32);
  const auto gid = b.gid();
  b.at(70).store(out, b.op(OpKind::Rem, {gid, b.u32(320)}), gid);
  const ir::Kernel k = b.build();
  const std::string want =
      "wrapped_around: global-memory race on 'out' at index 0 ('out' has 320 elements): thread "
      "0 (0,0,0) in group (5,0,0) wrote it at tests/sim/kernels.cpp:70 after thread 0 (0,0,0) "
      "in group (0,0,0) wrote it at tests/sim/kernels.cpp:70; nothing orders the threads of two "
      "groups";
  runtime::SimOptions one;
  one.host_threads = 1;
  runtime::HostTensor first = zeros(DType::U32, 320);
  EXPECT_EQ(expect_race(k, {&first}, Grid::per_row(128, 64), one), want);
  for (int attempt = 0; attempt < 10; ++attempt) {
    runtime::HostTensor ho = zeros(DType::U32, 320);
    EXPECT_EQ(expect_race(k, {&ho}, Grid::per_row(128, 64)), want);
    EXPECT_EQ(read_tensor(ho), read_tensor(first));
  }
  EXPECT_EQ(read_tensor(first)[319], 319);  // groups 0 to 4 ran; group 5 stopped at its first store
}

// A clean launch run on two host threads gives the outputs and last writers of the run in order.
TEST(SimGlobalRace, CleanParallelRunMatchesTheRunInOrder) {
  IrBuilder b("two_stores");
  const int out = b.output("out", DType::U32);
  const auto gid = b.gid();
  const auto odd = b.op(OpKind::Eq, {b.op(OpKind::And, {gid, b.u32(1)}), b.u32(1)});
  b.branch(
      odd, [&] { b.at(80).store(out, gid, gid); },
      [&] {
        b.at(81).store(out, gid, b.op(OpKind::Add, {gid, b.u32(1)}));
      });
  const ir::Kernel k = b.build();
  runtime::SimWriters in_order, parallel;
  runtime::SimOptions one;
  one.host_threads = 1;
  one.writers = &in_order;
  runtime::SimOptions two;
  two.writers = &parallel;
  runtime::HostTensor h1 = zeros(DType::U32, 8192 + 10), h2 = zeros(DType::U32, 8192 + 10);
  EXPECT_FALSE(finding(k, {&h1}, Grid::per_row(128, 64), one));
  EXPECT_FALSE(finding(k, {&h2}, Grid::per_row(128, 64), two));
  EXPECT_EQ(read_tensor(h1), read_tensor(h2));
  EXPECT_EQ(in_order.of(0, 8191), "tests/sim/kernels.cpp:80");
  EXPECT_EQ(parallel.of(0, 8191), "tests/sim/kernels.cpp:80");
  EXPECT_EQ(parallel.of(0, 8190), "tests/sim/kernels.cpp:81");
  EXPECT_EQ(parallel.of(0, 8192), "");  // no thread wrote it
  EXPECT_EQ(parallel.of(0, 9000), std::nullopt);
  EXPECT_EQ(parallel.of(1, 0), std::nullopt);
}

// The race bookkeeping names a thread of the launch in 32 bits: a larger grid is refused before
// anything runs (it would take the simulator days anyway).
TEST(SimGlobalRace, GridTooLargeToNameItsThreads) {
  IrBuilder b("huge");
  const int out = b.output("out", DType::U32);
  b.store(out, b.gid(), b.gid());
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 1);
  const auto e = finding(k, {&ho}, Grid{{4194304, 1, 1}, {1024, 1, 1}});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), Kind::BadArgument);
  EXPECT_STREQ(e->what(),
               "huge: the simulator runs at most 4294967294 threads per launch; this grid has "
               "4194304 groups of 1024");
}

}  // namespace
}  // namespace iron::sim_test
