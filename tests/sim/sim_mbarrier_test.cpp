/// The simulator on TMA copies and mbarriers: a specialized pipeline (a producer warpgroup that
/// issues copy.tensor on a ring of full/empty mbarriers, consumers that wait, read and free their
/// slots) runs with its two sides as concurrent strands and lands the right elements; and each
/// breach of the protocol, made by editing the expanded IR, is a finding: a read before the
/// phase's wait, a slot freed before it is read, a missing arrival or a wrong byte count (a
/// hang), a producer that never waits for a free slot (its barriers run phases ahead), an arrival
/// too many, a barrier used before mbar.init, a tensor map the GPU could not encode.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

#include "iron/codegen/passes/expand_pipelines.hpp"
#include "iron/codegen/passes/lower_tile_copies.hpp"
#include "iron/codegen/target.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "sim_helpers.hpp"

namespace iron::sim_test {
namespace {

using runtime::SimError;

// Steps of 64 columns of x (m×k f16) through a ring of 2 slots of 8×64; the first warpgroup's
// threads copy slot element e = t, t + 128, … of step s to out[s·512 + e].
constexpr std::string_view kRingCopy = R"(kernel ring_copy dtype=f16 mode=tiled
  param in x: f16
  param out out: f16
  param constexpr m: u32
  param constexpr k: u32
  shared t: f16[512] ring swizzle 64
  rule exactly 256
  values 19
{
  %0 = const 0 : u32
  %1 = constexpr m : u32
  %2 = constexpr k : u32
  %3 = const 64 : u32
  %4 = const 512 : u32
  pipeline %0 to %2 step %3 stages 2 consumers 128 : u32 {
    %5 = pipeline.index step : u32
    %6 = pipeline.index slot : u32
    %7 = mul %6, %4 : u32
    copy.tile @t[%7], x[%0], %1, %2, %0, %5, box 8, 64 : f16
  } then {
    %8 = pipeline.index step : u32
    %9 = pipeline.index slot : u32
    %10 = builtin thread_id.x : u32
    %11 = mul %9, %4 : u32
    %12 = div %8, %3 : u32
    %13 = mul %12, %4 : u32
    %14 = const 128 : u32
    for %15 = %10 to %4 step %14 : u32 {
      %16 = add %11, %15 : u32
      %17 = shared.load @t[%16] : f16
      %18 = add %13, %15 : u32
      store out[%18], %17 : f16
    }
  }
}
)";

/// The same ring without a producer: one warpgroup, whose first thread issues the copies.
std::string plain_ring() {
  std::string text(kRingCopy);
  text.replace(text.find(" consumers 128"), 14, "");
  text.replace(text.find("rule exactly 256"), 16, "rule exactly 128");
  return text;
}

/// The kernel's IR text as sm_90a runs it: tile copies kept for TMA, the pipeline expanded.
std::string expanded(std::string_view source = kRingCopy) {
  ir::Kernel kernel = ir::parse_kernel(source);
  const auto hopper = codegen::TargetProfile::cuda(90, codegen::MmaStrategy::Wgmma);
  codegen::lower_tile_copies(kernel, hopper);
  codegen::expand_pipelines(kernel, hopper);
  return ir::print_kernel(kernel);
}

/// `text` with the first `from` after the first `after` replaced by `to`.
std::string edited(std::string text, std::string_view after, std::string_view from,
                   std::string_view to) {
  const std::size_t start = text.find(after);
  EXPECT_NE(start, std::string::npos) << after;
  const std::size_t at = text.find(from, start);
  EXPECT_NE(at, std::string::npos) << from << "\n" << text;
  return text.replace(at, from.size(), to);
}

/// The text's line holding `what` (after `after`) made empty.
std::string without_line(std::string text, std::string_view after, std::string_view what) {
  const std::size_t at = text.find(what, text.find(after));
  EXPECT_NE(at, std::string::npos) << what << "\n" << text;
  const std::size_t begin = text.rfind('\n', at) + 1;
  return text.erase(begin, text.find('\n', at) + 1 - begin);
}

struct RingRun {
  std::uint32_t m = 0, k = 0;
  std::vector<double> x;
  runtime::HostTensor in, out;

  RingRun(std::uint32_t rows, std::uint32_t cols) : m(rows), k(cols) {
    for (std::uint32_t i = 0; i < m * k; ++i) x.push_back(static_cast<double>(i % 1789) - 900.0);
    in = make_tensor(DType::F16, x);
    out = make_tensor(DType::F16, std::vector<double>(steps() * 512, -7.0));  // poisoned
  }
  std::uint32_t steps() const { return (k + 63) / 64; }

  std::optional<SimError> run(const std::string& text, std::uint32_t threads = 256) {
    const ir::Kernel kernel = ir::parse_kernel(text);
    return finding(kernel, {&in, &out, scalar(DType::U32, m), scalar(DType::U32, k)},
                   runtime::Grid{{1, 1, 1}, {threads, 1, 1}});
  }

  /// out[s·512 + r·64 + c] = x[r][s·64 + c], zero outside the matrix.
  void expect_copied() const {
    const std::vector<double> got = read_tensor(out);
    for (std::uint32_t s = 0; s < steps(); ++s) {
      for (std::uint32_t r = 0; r < 8; ++r) {
        for (std::uint32_t c = 0; c < 64; ++c) {
          const std::uint32_t col = s * 64 + c;
          const double want = r < m && col < k ? x[r * k + col] : 0.0;
          ASSERT_EQ(got[s * 512 + r * 64 + c], want)
              << "step " << s << " row " << r << " col " << c;
        }
      }
    }
  }
};

/// `found` is a finding (of `kind`, when given) whose message holds `text`.
void expect_finding(const std::optional<SimError>& found, std::optional<SimError::Kind> kind,
                    std::string_view text) {
  ASSERT_TRUE(found);
  if (kind) EXPECT_EQ(found->kind(), *kind) << found->what();
  EXPECT_NE(std::string(found->what()).find(text), std::string::npos) << found->what();
}

TEST(SimMbarrier, ASpecializedRingLandsEveryStepThroughTwoStrands) {
  const std::string text = expanded();
  ASSERT_NE(text.find("copy.tensor"), std::string::npos) << text;
  ASSERT_NE(text.find("exit"), std::string::npos) << text;
  RingRun ring(8, 320);  // five steps: each slot refilled twice
  const auto found = ring.run(text);
  ASSERT_FALSE(found) << found->what();
  ring.expect_copied();
}

TEST(SimMbarrier, BoxesPastTheMatrixLandZeros) {
  RingRun ring(5, 136);  // three rows and, in the last step, 56 columns outside
  const auto found = ring.run(expanded());
  ASSERT_FALSE(found) << found->what();
  ring.expect_copied();
}

TEST(SimMbarrier, ARingWithoutAProducerLandsEveryStep) {
  const std::string text = expanded(plain_ring());
  ASSERT_NE(text.find("copy.tensor"), std::string::npos) << text;
  ASSERT_EQ(text.find("exit"), std::string::npos) << text;
  RingRun ring(7, 264);  // a row and, in the last step, 56 columns outside
  const auto found = ring.run(text, 128);
  ASSERT_FALSE(found) << found->what();
  ring.expect_copied();
}

TEST(SimMbarrier, ARingWithoutAProducerReadBeforeItsWaitIsReported) {
  const std::string text = without_line(expanded(plain_ring()), "for %", "mbar.wait");
  RingRun ring(8, 320);
  expect_finding(ring.run(text, 128), SimError::Kind::SharedRace, "before waiting for that phase");
}

TEST(SimMbarrier, AReadBeforeTheFullPhaseIsWaitedForIsReported) {
  const std::string text = without_line(expanded(), "wg.registers inc", "mbar.wait");
  RingRun ring(8, 320);
  expect_finding(ring.run(text), SimError::Kind::SharedRace, "before waiting for that phase");
}

TEST(SimMbarrier, ASlotFreedBeforeItIsReadIsReported) {
  // The consumers free the slot right after its wait, before reading it: the producer refills it
  // at once, and the read meets the next step's copy.
  std::string text = without_line(expanded(), "wg.registers inc", "mbar.arrive");
  const std::size_t wait = text.find("mbar.wait @", text.find("wg.registers inc"));
  const std::size_t open = text.find('[', wait);
  const std::string slot = text.substr(open, text.find(']', open) + 1 - open);
  const std::size_t next_line = text.find('\n', wait) + 1;
  text.insert(next_line, "      mbar.arrive @mbarriers1" + slot + "\n");
  RingRun ring(8, 320);
  expect_finding(ring.run(text), std::nullopt, "before waiting for that phase");
}

TEST(SimMbarrier, ConsumersThatNeverFreeASlotHangTheProducer) {
  const std::string text = without_line(expanded(), "wg.registers inc", "mbar.arrive");
  RingRun ring(8, 320);
  expect_finding(ring.run(text), SimError::Kind::Mbarrier, "would hang");
}

TEST(SimMbarrier, AProducerThatNeverWaitsForAFreeSlotRunsPhasesAheadOfItsWaiters) {
  // It refills each slot at once: the consumers' first wait finds phases 0 and 2 of their slot
  // complete, which a wait by parity cannot tell apart.
  const std::string text = without_line(expanded(), "wg.registers dec", "mbar.wait");
  RingRun ring(8, 320);
  expect_finding(ring.run(text), SimError::Kind::Mbarrier, "phases 0 and 2 of that parity");
}

TEST(SimMbarrier, ExpectingMoreBytesThanTheCopiesMoveHangsTheConsumers) {
  const std::string text = edited(expanded(), "wg.registers dec", "1024", "2048");
  RingRun ring(8, 128);
  expect_finding(ring.run(text), SimError::Kind::Mbarrier, "1024 bytes");
}

TEST(SimMbarrier, MoreArrivalsAPhaseThanTheBarrierCountsAreReported) {
  // the producer announces each step's bytes twice: two arrivals on a barrier of one
  std::string text = expanded();
  const std::size_t expect = text.find("mbar.expect @");
  const std::size_t line = text.rfind('\n', expect) + 1;
  text.insert(line, text.substr(line, text.find('\n', expect) + 1 - line));
  RingRun ring(8, 320);
  expect_finding(ring.run(text), SimError::Kind::Mbarrier,
                 "more arrivals a phase than its mbar.init counts");
}

TEST(SimMbarrier, ABarrierUsedBeforeItsInitIsReported) {
  const std::string text = without_line(expanded(), "{", "mbar.init @mbarriers1[");
  RingRun ring(8, 320);
  expect_finding(ring.run(text), SimError::Kind::Mbarrier, "not initialized");
}

TEST(SimMbarrier, ATensorMapTheGpuCannotEncodeIsReported) {
  RingRun ring(8, 100);  // rows of 200 bytes: not a multiple of 16
  expect_finding(ring.run(expanded()), std::nullopt, "not a multiple of 16 bytes");
}

TEST(SimMbarrier, AnExitBySomeThreadsOfABranchIsRefused) {
  // the producer's exit moved into its first thread's branch
  std::string text = without_line(expanded(), "wg.registers dec", "    exit\n");
  text = edited(text, "wg.registers dec", "      }\n    }\n", "      }\n      exit\n    }\n");
  RingRun ring(8, 320);
  expect_finding(ring.run(text), SimError::Kind::BadArgument, "exit reached by 1 of the 128");
}

}  // namespace
}  // namespace iron::sim_test
