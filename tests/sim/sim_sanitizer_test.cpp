/// Every sanitizer finding of the simulator on a deliberately broken kernel, with the message
/// naming the kernel, group, thread(s), buffer, index and source line.
#include <gtest/gtest.h>

#include <string>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using ir::OpKind;
using runtime::Grid;
using Kind = runtime::SimError::Kind;

// The finding of a run that must end in one, with its kind checked.
std::string expect_finding(Kind kind, const ir::Kernel& k, std::vector<runtime::Arg> args,
                           const Grid& grid, const runtime::SimOptions& options = {}) {
  const auto e = finding(k, std::move(args), grid, options);
  if (!e) {
    ADD_FAILURE() << "the run ended without a finding";
    return "";
  }
  EXPECT_EQ(e->kind(), kind) << e->what();
  return e->what();
}

// out[i] = select(i < n, x[i], 0): the load runs for every thread, so i == n is out of bounds.
TEST(SimSanitizer, OutOfBoundsLoadBehindASelect) {
  IrBuilder b("guarded_by_select");
  const int x = b.input("x", DType::F32);
  const int out = b.output("out", DType::F32);
  const int n = b.constexpr_param("n", DType::U32);
  const auto i = b.gid();
  const auto in_range = b.op(OpKind::Lt, {i, b.constexpr_ref(n)});
  b.at(12);
  const auto v = b.load(x, i);
  b.at(13);
  b.store(out, i, b.select(in_range, v, b.constant(DType::F32, 0)));
  const ir::Kernel k = b.build();
  runtime::HostTensor hx = zeros(DType::F32, 100), ho = zeros(DType::F32, 128);
  EXPECT_EQ(expect_finding(Kind::OutOfBounds, k, {&hx, &ho, scalar(DType::U32, 100)},
                           Grid::elementwise(128, 64)),
            "guarded_by_select: out-of-bounds load of 'x' at index 100 ('x' has 100 elements) "
            "by thread 36 (36,0,0) in group (1,0,0) at tests/sim/kernels.cpp:12");
}

TEST(SimSanitizer, OutOfBoundsStoreAndNegativeIndex) {
  IrBuilder b("off_by_one");
  const int out = b.output("out", DType::U16);
  const auto i = b.gid();
  b.at(20);
  b.store(out, b.op(OpKind::Add, {i, b.u32(1)}), b.constant(DType::U16, 1));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U16, 64);
  EXPECT_EQ(expect_finding(Kind::OutOfBounds, k, {&ho}, Grid::elementwise(64, 32)),
            "off_by_one: out-of-bounds store of 'out' at index 64 ('out' has 64 elements) by "
            "thread 31 (31,0,0) in group (1,0,0) at tests/sim/kernels.cpp:20");

  IrBuilder c("negative");
  const int x = c.input("x", DType::F32);
  const int o = c.output("o", DType::F32);
  const auto t = c.cast(DType::I32, c.tid());
  c.at(30);
  c.store(o, c.tid(), c.load(x, c.op(OpKind::Sub, {t, c.i32(1)})));
  const ir::Kernel kc = c.build();
  runtime::HostTensor hx = zeros(DType::F32, 8), h8 = zeros(DType::F32, 8);
  EXPECT_EQ(expect_finding(Kind::OutOfBounds, kc, {&hx, &h8}, Grid::per_row(1, 8)),
            "negative: out-of-bounds load of 'x' at index -1 ('x' has 8 elements) by thread 0 "
            "(0,0,0) in group (0,0,0) at tests/sim/kernels.cpp:30");
}

TEST(SimSanitizer, OutOfBoundsOnSharedMemoryAndAtomics) {
  IrBuilder b("shared_oob");
  b.group_contract();
  const int out = b.output("out", DType::U32);
  const int s = b.shared("smem0", DType::U32, 32);
  b.shared_store(s, b.tid(), b.u32(0));
  b.barrier();
  b.at(40);
  b.shared_atomic(OpKind::AtomicAdd, s, b.op(OpKind::Add, {b.tid(), b.u32(16)}), b.u32(1));
  b.store(out, b.tid(), b.u32(0));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 32);
  EXPECT_EQ(expect_finding(Kind::OutOfBounds, k, {&ho}, Grid::per_row(1, 32)),
            "shared_oob: out-of-bounds atomic.add of 'smem0' at index 32 ('smem0' has 32 "
            "elements) by thread 16 (16,0,0) in group (0,0,0) at tests/sim/kernels.cpp:40");
}

// smem[tid] = x; then each thread reads its neighbour's element with no barrier in between.
ir::Kernel neighbour_exchange(bool with_barrier) {
  IrBuilder b("neighbours");
  b.group_contract();
  const int out = b.output("out", DType::F32);
  const int s = b.shared("smem0", DType::F32, 64);
  const auto tid = b.tid();
  b.at(50);
  b.shared_store(s, tid, b.cast(DType::F32, tid));
  if (with_barrier) b.barrier();
  const auto next = b.op(OpKind::Rem, {b.op(OpKind::Add, {tid, b.u32(1)}), b.u32(64)});
  b.at(52);
  b.store(out, tid, b.shared_load(s, next));
  return b.build();
}

TEST(SimSanitizer, SharedRaceReadAfterAnotherThreadsWrite) {
  const ir::Kernel racy = neighbour_exchange(false);
  runtime::HostTensor ho = zeros(DType::F32, 64);
  EXPECT_EQ(expect_finding(Kind::SharedRace, racy, {&ho}, Grid::per_row(2, 64)),
            "neighbours: shared-memory race on 'smem0' at index 1 ('smem0' has 64 elements): "
            "thread 0 (0,0,0) read it after thread 1 (1,0,0) wrote it at "
            "tests/sim/kernels.cpp:50, with no barrier in between, in group (0,0,0) at "
            "tests/sim/kernels.cpp:52");

  const ir::Kernel fixed = neighbour_exchange(true);
  EXPECT_FALSE(finding(fixed, {&ho}, Grid::per_row(1, 64)));
  EXPECT_EQ(read_tensor(ho)[63], 0);
}

// Everyone reads smem[0], then thread 5 writes it: a write after other threads' reads.
TEST(SimSanitizer, SharedRaceWriteAfterAnotherThreadsRead) {
  IrBuilder b("write_after_read");
  b.group_contract();
  const int out = b.output("out", DType::I32);
  const int s = b.shared("smem0", DType::I32, 4);
  const auto tid = b.tid();
  b.branch(b.op(OpKind::Eq, {tid, b.u32(0)}), [&] { b.shared_store(s, b.u32(0), b.i32(7)); });
  b.barrier();
  b.at(60);
  b.store(out, tid, b.shared_load(s, b.u32(0)));
  b.at(61);
  b.branch(b.op(OpKind::Eq, {tid, b.u32(5)}), [&] { b.shared_store(s, b.u32(0), b.i32(8)); });
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::I32, 32);
  EXPECT_EQ(expect_finding(Kind::SharedRace, k, {&ho}, Grid::per_row(1, 32)),
            "write_after_read: shared-memory race on 'smem0' at index 0 ('smem0' has 4 "
            "elements): thread 5 (5,0,0) wrote it after thread 0 (0,0,0) read it at "
            "tests/sim/kernels.cpp:60, with no barrier in between, in group (0,0,0) at "
            "tests/sim/kernels.cpp:61");
}

TEST(SimSanitizer, SharedRaceBetweenAPlainWriteAndAnAtomic) {
  IrBuilder b("write_then_atomic");
  b.group_contract();
  const int out = b.output("out", DType::U32);
  const int s = b.shared("smem0", DType::U32, 1);
  const auto tid = b.tid();
  const auto zero = b.u32(0);
  b.at(70);
  b.branch(b.op(OpKind::Eq, {tid, zero}), [&] { b.shared_store(s, zero, zero); });
  b.at(71);
  b.store(out, tid, b.shared_atomic(OpKind::AtomicAdd, s, zero, b.u32(1)));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 32);
  EXPECT_EQ(expect_finding(Kind::SharedRace, k, {&ho}, Grid::per_row(1, 32)),
            "write_then_atomic: shared-memory race on 'smem0' at index 0 ('smem0' has 1 "
            "elements): thread 1 (1,0,0) atomically updated it after thread 0 (0,0,0) wrote it "
            "at tests/sim/kernels.cpp:70, with no barrier in between, in group (0,0,0) at "
            "tests/sim/kernels.cpp:71");
}

// The then-branch writes, the else-branch of other threads reads: divergent paths still race.
TEST(SimSanitizer, SharedRaceAcrossTheTwoSidesOfABranch) {
  IrBuilder b("branch_race");
  b.group_contract();
  const int out = b.output("out", DType::F32);
  const int s = b.shared("smem0", DType::F32, 2);
  const auto tid = b.tid();
  b.branch(
      b.op(OpKind::Lt, {tid, b.u32(2)}),
      [&] { b.at(80).shared_store(s, tid, b.constant(DType::F32, 1)); },
      [&] { b.at(81).store(out, tid, b.shared_load(s, b.u32(1))); });
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::F32, 32);
  const std::string msg = expect_finding(Kind::SharedRace, k, {&ho}, Grid::per_row(1, 32));
  EXPECT_NE(msg.find("thread 2 (2,0,0) read it after thread 1 (1,0,0) wrote it at "
                     "tests/sim/kernels.cpp:80"),
            std::string::npos)
      << msg;
}

TEST(SimSanitizer, BarrierInADivergentBranch) {
  IrBuilder b("divergent_barrier");
  b.group_contract();
  const int out = b.output("out", DType::U32);
  const auto tid = b.tid();
  b.branch(b.op(OpKind::Lt, {tid, b.u32(16)}), [&] { b.at(90).barrier(); });
  b.store(out, tid, tid);
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 64);
  EXPECT_EQ(expect_finding(Kind::DivergentBarrier, k, {&ho}, Grid::per_row(1, 64)),
            "divergent_barrier: divergent barrier (a group-wide barrier) reached by 16 of 64 "
            "threads (thread 0 (0,0,0) is here, thread 16 (16,0,0) is not) in group (0,0,0) at "
            "tests/sim/kernels.cpp:90");
}

TEST(SimSanitizer, ReductionInADivergentLoop) {
  IrBuilder b("divergent_reduce");
  b.group_contract();
  const int out = b.output("out", DType::U32);
  const auto tid = b.tid();
  // Thread t loops t + 1 times: the second trip has lost thread 0.
  b.loop(b.u32(0), b.op(OpKind::Add, {tid, b.u32(1)}), b.u32(1),
         [&](auto j) { b.at(95).store(out, tid, b.collective(OpKind::ReduceSum, j)); });
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 32);
  EXPECT_EQ(expect_finding(Kind::DivergentBarrier, k, {&ho}, Grid::per_row(1, 32)),
            "divergent_reduce: divergent reduce.sum (a group-wide barrier) reached by 31 of 32 "
            "threads (thread 1 (1,0,0) is here, thread 0 (0,0,0) is not) in group (0,0,0) at "
            "tests/sim/kernels.cpp:95");
}

TEST(SimSanitizer, SimdOpWithSomeLanesOff) {
  IrBuilder b("divergent_simd");
  b.group_contract();
  const int out = b.output("out", DType::U32);
  const auto tid = b.tid();
  b.branch(b.op(OpKind::Ne, {tid, b.u32(35)}),
           [&] { b.at(100).store(out, tid, b.collective(OpKind::SimdSum, tid)); });
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 64);
  EXPECT_EQ(expect_finding(Kind::DivergentSimdgroup, k, {&ho}, Grid::per_row(1, 64)),
            "divergent_simd: divergent simd.sum: simdgroup 1 reaches it with 31 of its 32 lanes "
            "(thread 32 (32,0,0) is here, thread 35 (35,0,0) is not) in group (0,0,0) at "
            "tests/sim/kernels.cpp:100");

  // A whole simdgroup switched off is fine.
  IrBuilder c("uniform_simd");
  c.group_contract();
  const int o = c.output("o", DType::U32);
  const auto t = c.tid();
  c.branch(c.op(OpKind::Lt, {t, c.u32(32)}),
           [&] { c.store(o, t, c.collective(OpKind::SimdSum, c.u32(1))); });
  const ir::Kernel kc = c.build();
  EXPECT_FALSE(finding(kc, {&ho}, Grid::per_row(1, 64)));
  EXPECT_EQ(read_tensor(ho)[0], 32);
}

TEST(SimSanitizer, LoopWithStepZero) {
  IrBuilder b("zero_step");
  const int out = b.output("out", DType::U32);
  const int end = b.constexpr_param("end", DType::U32);
  const int step = b.constexpr_param("step", DType::U32);
  b.at(110);
  b.loop(b.tid(), b.constexpr_ref(end), b.constexpr_ref(step), [&](auto j) { b.store(out, j, j); });
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::U32, 8);
  EXPECT_EQ(
      expect_finding(Kind::ZeroStepLoop, k, {&ho, scalar(DType::U32, 8), scalar(DType::U32, 0)},
                     Grid::per_row(1, 32)),
      "zero_step: loop with step 0 never ends: thread 0 (0,0,0) starts at 0 below the end "
      "8 in group (0,0,0) at tests/sim/kernels.cpp:110");
  // A thread that starts at or past the end never loops, whatever the step.
  EXPECT_FALSE(
      finding(k, {&ho, scalar(DType::U32, 0), scalar(DType::U32, 0)}, Grid::per_row(1, 32)));
}

TEST(SimSanitizer, RunawayLoop) {
  IrBuilder b("runaway");
  const int out = b.output("out", DType::I32);
  const auto acc = b.var(b.i32(0));
  b.at(120);
  b.loop(b.i32(0), b.i32(10), b.i32(-1), [&](auto j) { b.var_store(acc, j); });  // counts down
  b.store(out, b.u32(0), b.var_load(acc));
  const ir::Kernel k = b.build();
  runtime::HostTensor ho = zeros(DType::I32, 1);
  runtime::SimOptions small;
  small.step_budget = 1000;
  EXPECT_EQ(expect_finding(Kind::RunawayLoop, k, {&ho}, Grid::per_row(1, 1), small),
            "runaway: runaway loop: the group ran more than 1000 loop iterations "
            "(SimOptions::step_budget); thread 0 (0,0,0) is still looping with counter -1000 "
            "(end 10, step -1) in group (0,0,0) at tests/sim/kernels.cpp:120");
}

// Malformed IR never runs: the simulator reports the verifier's findings, every one of them.
TEST(SimSanitizer, MalformedIrIsRefusedNotCrashedOn) {
  IrBuilder b("malformed");
  const int x = b.input("x", DType::F32);
  b.at(130);
  b.store(x, b.u32(0), b.constant(DType::F32, 1));
  ir::Kernel writes_input = b.build();
  runtime::HostTensor hx = zeros(DType::F32, 1);
  const std::string refused =
      expect_finding(Kind::BadArgument, writes_input, {&hx}, Grid::per_row(1, 1));
  EXPECT_EQ(refused, verifier_findings(writes_input));
  EXPECT_NE(refused.find("kernel malformed: tests/sim/kernels.cpp:130: "), std::string::npos)
      << refused;

  ir::Kernel dangling = writes_input;
  dangling.params[0].kind = ir::ParamKind::Output;
  dangling.body.ops.back().args[1] = 99;
  EXPECT_EQ(expect_finding(Kind::BadArgument, dangling, {&hx}, Grid::per_row(1, 1)),
            verifier_findings(dangling));

  ir::Kernel wrong_arity = writes_input;
  wrong_arity.params[0].kind = ir::ParamKind::Output;
  wrong_arity.body.ops.back().args.pop_back();
  EXPECT_EQ(expect_finding(Kind::BadArgument, wrong_arity, {&hx}, Grid::per_row(1, 1)),
            verifier_findings(wrong_arity));
}

// 64 groups run on two threads; of the two failing groups the first one is always reported.
TEST(SimSanitizer, TheFirstFailingGroupIsReportedWhateverTheThreading) {
  IrBuilder b("late_failure");
  const int out = b.output("out", DType::F32);
  const auto g = b.builtin(ir::Builtin::GroupId);
  const auto bad =
      b.op(OpKind::Or, {b.op(OpKind::Eq, {g, b.u32(41)}), b.op(OpKind::Eq, {g, b.u32(50)})});
  const auto i = b.op(OpKind::Add, {b.gid(), b.select(bad, b.u32(100000), b.u32(0))});
  b.at(140);
  b.store(out, i, b.constant(DType::F32, 1));
  const ir::Kernel k = b.build();
  for (int attempt = 0; attempt < 20; ++attempt) {
    runtime::HostTensor ho = zeros(DType::F32, 64 * 128);
    const auto e = finding(k, {&ho}, Grid::elementwise(64 * 128, 128));
    ASSERT_TRUE(e);
    ASSERT_NE(std::string(e->what()).find("in group (41,0,0)"), std::string::npos) << e->what();
  }
}

}  // namespace
}  // namespace iron::sim_test
