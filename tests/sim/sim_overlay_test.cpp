/// Overlays (ir::SharedAlloc::overlays): an allocation placed over another's bytes. The simulator
/// keeps the two apart in time: an access of one that races with another thread's access of the
/// other, and a read of one over what the other wrote, are findings.
#include <gtest/gtest.h>

#include <string>

#include "ir_builder.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using ir::OpKind;
using runtime::Grid;
using Kind = runtime::SimError::Kind;

/// How the staging phase of `staged` starts after the ring phase ends.
enum class Handover {
  Barrier,        ///< a barrier between the ring's last read and the overlay's first write
  NoBarrier,      ///< none: another thread may still read the ring
  ReadRingAfter,  ///< a barrier, then the ring read again over the overlay's writes
};

// Each thread writes ring[tid] (i32), reads its neighbour's, then stages tid + that value
// through an f32 overlay of the ring, read back by its neighbour: out[tid].
ir::Kernel staged(Handover handover) {
  IrBuilder b("staged");
  b.group_contract();
  const int out = b.output("out", DType::F32);
  const int ring = b.shared("ring", DType::I32, 32);
  const int over = b.shared("over", DType::F32, 32);
  const auto tid = b.tid();
  const auto next = b.op(OpKind::Rem, {b.op(OpKind::Add, {tid, b.u32(1)}), b.u32(32)});
  b.shared_store(ring, tid, b.cast(DType::I32, tid));
  b.barrier();
  b.at(30);
  const auto neighbour = b.shared_load(ring, next);
  if (handover != Handover::NoBarrier) b.barrier();
  b.at(32);
  b.shared_store(over, tid,
                 b.cast(DType::F32, b.op(OpKind::Add, {neighbour, b.cast(DType::I32, tid)})));
  b.barrier();
  b.at(34);
  const auto value = handover == Handover::ReadRingAfter
                         ? b.cast(DType::F32, b.shared_load(ring, next))
                         : b.shared_load(over, next);
  b.store(out, tid, value);
  ir::Kernel k = b.build();
  k.shared[over].overlays = ring;
  return k;
}

TEST(SimOverlay, PhasesSeparatedByBarriersRunClean) {
  runtime::HostTensor ho = zeros(DType::F32, 32);
  const auto e = finding(staged(Handover::Barrier), {&ho}, Grid::per_row(1, 32));
  EXPECT_FALSE(e) << e->what();
  const std::vector<double> got = read_tensor(ho);
  for (std::uint32_t t = 0; t < 32; ++t) {
    const std::uint32_t n = (t + 1) % 32;
    EXPECT_EQ(got[t], static_cast<double>(n + (n + 1) % 32)) << t;
  }
}

TEST(SimOverlay, WritingTheOverlayWhileAnotherThreadReadsItsBaseIsARace) {
  runtime::HostTensor ho = zeros(DType::F32, 32);
  const auto e = finding(staged(Handover::NoBarrier), {&ho}, Grid::per_row(1, 32));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), Kind::SharedRace) << e->what();
  EXPECT_EQ(std::string(e->what()),
            "staged: thread 0 (0,0,0) wrote 'over' at index 0, whose bytes 'ring' shares, after "
            "thread 1 (1,0,0) read 'ring' at tests/sim/kernels.cpp:30, with no barrier in "
            "between, in group (0,0,0) at tests/sim/kernels.cpp:32");
}

TEST(SimOverlay, ReadingTheBaseOverTheOverlaysWritesIsReported) {
  runtime::HostTensor ho = zeros(DType::F32, 32);
  const auto e = finding(staged(Handover::ReadRingAfter), {&ho}, Grid::per_row(1, 32));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), Kind::UninitializedRead) << e->what();
  EXPECT_EQ(std::string(e->what()),
            "staged: read of shared memory 'ring' at index 1 ('ring' has 32 elements) over what "
            "'over', which shares its bytes, wrote: thread 0 (0,0,0) read it without storing to "
            "it since, in group (0,0,0) at tests/sim/kernels.cpp:34");
}

// The ring is written again after the staging phase (a persistent kernel's next tile): the
// overlay's elements are then unwritten, and the ring's are fresh.
TEST(SimOverlay, TheBaseWrittenAgainLeavesTheOverlayUnwritten) {
  IrBuilder b("again");
  b.group_contract();
  const int out = b.output("out", DType::F32);
  const int ring = b.shared("ring", DType::F32, 32);
  const int over = b.shared("over", DType::F32, 32);
  const auto tid = b.tid();
  b.shared_store(over, tid, b.cast(DType::F32, tid));
  b.barrier();
  b.shared_store(ring, tid, b.cast(DType::F32, tid));
  b.barrier();
  b.at(40);
  b.store(out, tid, b.shared_load(over, tid));
  ir::Kernel k = b.build();
  k.shared[over].overlays = ring;
  runtime::HostTensor ho = zeros(DType::F32, 32);
  const auto e = finding(k, {&ho}, Grid::per_row(1, 32));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), Kind::UninitializedRead) << e->what();
  EXPECT_NE(std::string(e->what()).find("over what 'ring', which shares its bytes, wrote"),
            std::string::npos)
      << e->what();
}

// An overlay wider than its base as the launch has it (a ring whose pipeline a specialization
// dropped is one stage) takes bytes of its own on every target: the launch runs, and the
// overlay is still held to its promise.
TEST(SimOverlay, AnOverlayWiderThanItsBaseRunsAndKeepsItsPromise) {
  ir::Kernel k = staged(Handover::Barrier);
  k.shared[1].size = 33;  // 132 bytes over the ring's 128
  runtime::HostTensor ho = zeros(DType::F32, 32);
  const auto clean = finding(k, {&ho}, Grid::per_row(1, 32));
  EXPECT_FALSE(clean) << clean->what();
  const std::vector<double> got = read_tensor(ho);
  for (std::uint32_t t = 0; t < 32; ++t) {
    const std::uint32_t n = (t + 1) % 32;
    EXPECT_EQ(got[t], static_cast<double>(n + (n + 1) % 32)) << t;
  }
  ir::Kernel racing = staged(Handover::NoBarrier);
  racing.shared[1].size = 33;
  const auto e = finding(racing, {&ho}, Grid::per_row(1, 32));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), Kind::SharedRace) << e->what();
}

}  // namespace
}  // namespace iron::sim_test
