/// A simdgroup staging its accumulator through shared memory of its own: frag.store of a column
/// window (store_columns) writes one band of columns, and barrier.simdgroup (simdgroup_barrier)
/// orders the lanes' accesses around it. The simulator runs the window under both lane maps and
/// reports a lane's read of another lane's write without the barrier, and another simdgroup's
/// read after it; CUDA takes it as __syncwarp and Metal as simdgroup_barrier.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
using iron::runtime::SimError;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;

constexpr std::uint32_t kSimdgroups = 2;
constexpr std::uint32_t kCols = 64;
constexpr std::uint32_t kBand = 32;
constexpr std::uint32_t kPitch = kBand + 8;
constexpr std::uint32_t kArea = 16 * kPitch;

/// What stands between a band's store and its reads.
enum class Order : std::uint8_t { Barrier, Nothing, OtherSimdgroup };

// Each simdgroup s holds a 16×64 accumulator whose element (r, c) is s·10000 + r·100 + c and
// copies it to out[s·1024 + r·64 + c] through its own 16×40 area, a band of 32 columns at a time.
// ORDER: simdgroup barriers around the reads; none; or the reads from the other simdgroup's area.
IRON_KERNEL_TEMPLATE(band_copy, (Order ORDER), (Out<f32> out)) {
  dispatch(tiled, {exactly(32 * kSimdgroups)});
  auto staged = shared<f32>(kSimdgroups * kArea);
  auto s = simdgroup_id();
  auto lane = thread_id<0>() % 32u;
  FragAcc<16, kCols> acc;
  acc.map([&](const Expr<f32>&, const Expr<u32>& r, const Expr<u32>& c) {
    return cast<f32>(s * 10000u + r * 100u + c);
  });
  auto own = s * kArea;
  auto read_from = ORDER == Order::OtherSimdgroup ? (s ^ 1u) * kArea : own;
  for (std::uint32_t b = 0; b < kCols / kBand; ++b) {
    acc.store_columns(staged, own, kPitch, b * kBand, kBand);
    if (ORDER != Order::Nothing) simdgroup_barrier();
    for (auto v : range(lane, 16u * kBand, 32u)) {
      auto r = v / kBand;
      auto c = v % kBand;
      store(out[s * (16u * kCols) + r * kCols + b * kBand + c],
            load(staged[read_from + r * kPitch + c]));
    }
    if (ORDER != Order::Nothing) simdgroup_barrier();
  }
}
IRON_KERNEL_VARIANT(band_copy, ordered, Order::Barrier);
IRON_KERNEL_VARIANT(band_copy, unordered, Order::Nothing);
IRON_KERNEL_VARIANT(band_copy, across, Order::OtherSimdgroup);

struct BandRun {
  std::optional<SimError> finding;
  std::vector<double> out;
};

BandRun run(const std::string& variant) {
  const ir::Kernel k = kernel_ir_for("band_copy_" + variant, DType::F32);
  iron::runtime::HostTensor out = sim_test::zeros(DType::F32, kSimdgroups * 16 * kCols);
  BandRun r;
  r.finding = sim_test::finding(k, {&out}, {{1, 1, 1}, {32 * kSimdgroups, 1, 1}});
  if (!r.finding) r.out = sim_test::read_tensor(out);
  return r;
}

TEST(SimdgroupStaging, EachSimdgroupCopiesItsAccumulatorBandByBand) {
  const BandRun r = run("ordered");
  ASSERT_FALSE(r.finding.has_value()) << r.finding->what();
  for (std::uint32_t s = 0; s < kSimdgroups; ++s) {
    for (std::uint32_t row = 0; row < 16; ++row) {
      for (std::uint32_t c = 0; c < kCols; ++c) {
        EXPECT_EQ(r.out[s * 16 * kCols + row * kCols + c], s * 10000.0 + row * 100.0 + c)
            << "simdgroup " << s << " (" << row << ", " << c << ")";
      }
    }
  }
}

TEST(SimdgroupStaging, ReadsOfOtherLanesWritesWithoutTheBarrierAreRaces) {
  const BandRun r = run("unordered");
  ASSERT_TRUE(r.finding.has_value());
  EXPECT_EQ(r.finding->kind(), SimError::Kind::SharedRace) << r.finding->what();
}

TEST(SimdgroupStaging, TheBarrierOrdersNoOtherSimdgroup) {
  const BandRun r = run("across");
  ASSERT_TRUE(r.finding.has_value());
  EXPECT_EQ(r.finding->kind(), SimError::Kind::SharedRace) << r.finding->what();
}

TEST(SimdgroupStaging, CudaTakesWarpBarriersAndWindowedStoresAndMetalItsOwn) {
  const ir::Kernel k = kernel_ir_for("band_copy_ordered", DType::F32);
  using iron::codegen::MmaStrategy;
  using iron::codegen::TargetProfile;
  const auto cuda = iron::codegen::compile_kernel(k, TargetProfile::cuda(90));
  EXPECT_NE(cuda.source.find("__syncwarp();"), std::string::npos);
  EXPECT_NE(cuda.source.find("iron_frag_store<false, 0, 0, 32, 32>("), std::string::npos)
      << cuda.source;
  const auto wmma = iron::codegen::compile_kernel(k, TargetProfile::cuda(90, MmaStrategy::Wmma));
  EXPECT_NE(wmma.source.find("iron_wmma_store<false, 32, 32>("), std::string::npos) << wmma.source;
  const auto metal = iron::codegen::compile_kernel(k, TargetProfile::metal(31));
  EXPECT_NE(metal.source.find("simdgroup_barrier(mem_flags::mem_threadgroup);"), std::string::npos);
  EXPECT_NE(metal.source.find("iron_frag_store<false, 32, 32>("), std::string::npos)
      << metal.source;
}

TEST(SimdgroupStaging, TheWindowAndTheBarrierPrintAndParseBack) {
  const ir::Kernel k = kernel_ir_for("band_copy_ordered", DType::F32);
  const std::string text = ir::print_kernel(k);
  EXPECT_NE(text.find(", cols 32 32"), std::string::npos) << text;
  EXPECT_NE(text.find("barrier.simdgroup"), std::string::npos) << text;
  EXPECT_EQ(ir::print_kernel(ir::parse_kernel(text)), text);
}

TEST(SimdgroupStaging, TheVerifierWantsWholeWindowsOfAccumulatorStores) {
  const std::string head = R"(kernel t dtype=f32 mode=reduction
  param out out: f32
  rule multiple_of 32
  values 8
{
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 64 : f32
  %2 = frag %0, a, 16, 32 : f32
  %3 = const 0 : u32
)";
  const auto problems = [&](const std::string& line) {
    std::string all;
    for (const std::string& p : ir::verify(ir::parse_kernel(head + line + "}\n"))) {
      all += p + "\n";
    }
    return all;
  };
  EXPECT_EQ(problems("  frag.store out[%3], %1, %3, row, cols 16 48 : f32\n"), "");
  for (const char* bad : {"  frag.store out[%3], %1, %3, row, cols 8 16 : f32  ; k.cpp:4\n",
                          "  frag.store out[%3], %1, %3, row, cols 48 32 : f32  ; k.cpp:4\n",
                          "  frag.store out[%3], %1, %3, row, cols 16 0 : f32  ; k.cpp:4\n"}) {
    EXPECT_NE(problems(bad).find("k.cpp:4: frag.store of columns"), std::string::npos)
        << bad << problems(bad);
  }
  EXPECT_NE(problems("  frag.store out[%3], %2, %3, row, cols 0 16 : f32  ; k.cpp:5\n")
                .find("k.cpp:5: a column window is an accumulator's frag.store's"),
            std::string::npos);
}

// A window of columns that is not whole 16-column multiples fails the trace.
IRON_KERNEL(band_misplaced, (Out<f32> out)) {
  dispatch(tiled, {exactly(32)});
  FragAcc<16, 64> acc;
  acc.store_columns(out, 0u, 64u, 8, 16);
}

TEST(SimdgroupStaging, AMisplacedWindowFailsTheTrace) {
  try {
    kernel_ir_for("band_misplaced", DType::F32);
    FAIL() << "a window of columns 8 … 24 traced";
  } catch (const iron::Error& e) {
    EXPECT_NE(std::string(e.what()).find("columns 8 … 24 of a fragment of 64"), std::string::npos)
        << e.what();
  }
}

}  // namespace
