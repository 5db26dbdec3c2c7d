/// Fragment row reductions, row values and conversions from the DSL to the emitters: traced as
/// frag.rowreduce, frag.rowvalue and frag.convert, checked by the verifier at their lines, run
/// by the simulator from the logical elements, and lowered with quad shuffles (CUDA) or simdgroup
/// shuffles (Metal). The probe kernels (probe/fragment_rows.cpp) check the results per target.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/hash.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;

const std::string kFile = "tests/dsl/fragment_rows_test.cpp:";

// Row ops exist on accumulators only, and a row vector belongs to accumulators of its rows.
template <class F>
concept HasRowMax = requires(const F& f) {
  f.row_max();
};
template <class F, class V>
concept HasRowValueOf = requires(const F& f, const V& v) {
  f.row_value(v, 0u);
};
static_assert(HasRowMax<FragAcc<16, 32>>);
static_assert(!HasRowMax<FragA<f16, 16, 16>>);
static_assert(HasRowValueOf<FragAcc<32, 16>, FragAcc<32, 8>>);
static_assert(!HasRowValueOf<FragAcc<32, 16>, FragAcc<16, 8>>);
static_assert(!HasRowValueOf<FragAcc<32, 16>, FragAcc<32, 16>>);

// A softmax-like pass over a 16×32 accumulator: shift each row by its max, scale it by the sum
// of the shifted row, and write the result through an f16 A operand.
IRON_KERNEL(frag_rows, (Tensor<f32> inp, Out<f16> out)) {
  dispatch(tiled, {exactly(32)});
  FragAcc<16, 32> acc;
  acc.load(inp, 0u, 32u);
  const auto maxima = acc.row_max();
  acc.map([&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>&, std::uint32_t slot) {
    return x - acc.row_value(maxima, slot);
  });
  const auto sums = acc.row_sum();
  acc.map([&](const Expr<f32>& x, const Expr<u32>&, const Expr<u32>&, std::uint32_t slot) {
    return x * acc.row_value(sums, slot);
  });
  acc.to_a<f16>().store(out, 0u, 32u);
}

// A row vector one of whose columns is set apart from the rest, then read by row.
int g_row_value_line = 0;
IRON_KERNEL(frag_row_vector_set, (Out<f32> out)) {
  dispatch(tiled, {exactly(32)});
  FragAcc<16, 8> acc;
  auto maxima = acc.row_max();
  maxima.set(1, 5.0f);
  g_row_value_line = __LINE__ + 1;
  store(out[lane_id()], acc.row_value(maxima, 0));
}

// An accumulator filled from lane_id(): which element gets which lane is the target's.
IRON_KERNEL(frag_by_lane, (Out<f32> out)) {
  dispatch(tiled, {exactly(32)});
  FragAcc<16, 8> acc;
  for (std::uint32_t slot = 0; slot < FragAcc<16, 8>::elements; ++slot) {
    acc.set(slot, cast<f32>(lane_id() * 4u + slot));
  }
  acc.store(out, 0u, 8u);
}

// The same accumulator filled from each element's row and column: the same on every target.
IRON_KERNEL(frag_by_position, (Out<f32> out)) {
  dispatch(tiled, {exactly(32)});
  FragAcc<16, 8> acc;
  acc.map([](const Expr<f32>&, const Expr<u32>& r, const Expr<u32>& c) {
    return cast<f32>(r * 8u + c);
  });
  acc.store(out, 0u, 8u);
}

iron::runtime::Grid one_simdgroup() {
  iron::runtime::Grid grid;
  grid.groups = {1, 1, 1};
  grid.group_size = {32, 1, 1};
  return grid;
}

std::size_t count_ops(const ir::Kernel& k, ir::OpKind kind) {
  std::size_t n = 0;
  ir::walk(k.body, [&](const ir::Op& op) { n += op.kind == kind ? 1 : 0; });
  return n;
}

TEST(FragmentRows, TheLaneMapsInverseFindsEveryElementsOwner) {
  for (const ir::LaneMap map : {ir::LaneMap::Mma, ir::LaneMap::Simdgroup8x8}) {
    for (const ir::FragmentRole role :
         {ir::FragmentRole::A, ir::FragmentRole::B, ir::FragmentRole::Acc}) {
      const ir::FragmentShape s{role, 32, 32};
      std::vector<int> seen(std::size_t{s.rows} * s.cols, 0);
      for (std::uint32_t lane = 0; lane < 32; ++lane) {
        for (std::uint32_t slot = 0; slot < s.elements_per_lane(); ++slot) {
          const ir::FragmentCoord at = ir::fragment_coord(map, s, lane, slot);
          ASSERT_LT(at.row, s.rows);
          ASSERT_LT(at.col, s.cols);
          ++seen[std::size_t{at.row} * s.cols + at.col];
          const ir::FragmentOwner owner = ir::fragment_owner(map, s, at.row, at.col);
          EXPECT_EQ(owner.lane, lane) << ir::lane_map_name(map) << " slot " << slot;
          EXPECT_EQ(owner.slot, slot) << ir::lane_map_name(map) << " lane " << lane;
        }
      }
      // Every element has exactly one owner.
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(seen.size()));
    }
  }
}

TEST(FragmentRows, SimulatorReportsResultsThatDependOnTheLaneMap) {
  const ir::Kernel by_lane = kernel_ir_for("frag_by_lane", DType::F32);
  auto out = sim_test::zeros(DType::F32, 128);
  const auto found = sim_test::finding(by_lane, {&out}, one_simdgroup());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->kind(), iron::runtime::SimError::Kind::LaneMapDependent);
  const std::string what = found->what();
  // Row 0's elements 0-3 sit with lanes 0 and 1 under both maps; element 4 is lane 2's under
  // m16n8k16 and lane 8's under the 8x8 map.
  EXPECT_NE(what.find("frag_by_lane: element 4 of 'out' differs between the m16n8k16 (CUDA) lane "
                      "map and the 8x8 simdgroup matrices (Metal) lane map"),
            std::string::npos)
      << what;

  const ir::Kernel by_position = kernel_ir_for("frag_by_position", DType::F32);
  EXPECT_FALSE(sim_test::finding(by_position, {&out}, one_simdgroup()).has_value());
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<double>(i));
}

TEST(FragmentRows, TraceAsRowOpsAndPrintParseBack) {
  const ir::Kernel k = kernel_ir_for("frag_rows", DType::F32);
  EXPECT_EQ(count_ops(k, ir::OpKind::FragRowReduce), 2u);
  EXPECT_EQ(count_ops(k, ir::OpKind::FragRowValue), 2u * (FragAcc<16, 32>::elements));
  EXPECT_EQ(count_ops(k, ir::OpKind::FragConvert), 1u);
  const std::string text = ir::print_kernel(k);
  EXPECT_NE(text.find(", max : f32"), std::string::npos) << text;
  EXPECT_NE(text.find(", sum : f32"), std::string::npos) << text;
  EXPECT_NE(text.find("frag.convert %"), std::string::npos) << text;
  EXPECT_EQ(ir::print_kernel(ir::parse_kernel(text)), text);
  std::string sum_first = text;
  sum_first.replace(sum_first.find(", max : f32"), 11, ", sum : f32");
  EXPECT_NE(ir::structural_hash(ir::parse_kernel(sum_first)), ir::structural_hash(k));
}

TEST(FragmentRows, SimulatorFollowsTheMath) {
  const ir::Kernel k = kernel_ir_for("frag_rows", DType::F32);
  std::vector<double> x(std::size_t{16} * 32);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 7) % 9) - 4.0;
  auto inp = sim_test::make_tensor(DType::F32, x);
  auto out = sim_test::zeros(DType::F16, x.size());
  sim_test::run(k, {&inp, &out}, one_simdgroup());
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t r = 0; r < 16; ++r) {
    double max = x[r * 32];
    for (std::size_t c = 0; c < 32; ++c) max = std::max(max, x[r * 32 + c]);
    double sum = 0.0;
    for (std::size_t c = 0; c < 32; ++c) sum += x[r * 32 + c] - max;
    for (std::size_t c = 0; c < 32; ++c) {
      EXPECT_EQ(got[r * 32 + c], (x[r * 32 + c] - max) * sum) << r << ", " << c;
    }
  }
}

TEST(FragmentRows, SimulatorReportsARowVectorWhoseColumnsDiffer) {
  const ir::Kernel k = kernel_ir_for("frag_row_vector_set", DType::F32);
  auto out = sim_test::zeros(DType::F32, 32);
  const auto found = sim_test::finding(k, {&out}, one_simdgroup());
  ASSERT_TRUE(found.has_value());
  const std::string what = found->what();
  EXPECT_NE(what.find("frag.rowvalue of row 0 of %"), std::string::npos) << what;
  EXPECT_NE(what.find("whose columns differ (column 0 holds 0, column 1 holds 5)"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find(kFile + std::to_string(g_row_value_line)), std::string::npos) << what;
}

TEST(FragmentRows, EachTargetLowersTheRowOps) {
  const ir::Kernel k = kernel_ir_for("frag_rows", DType::F32);
  using iron::codegen::TargetProfile;
  for (const TargetProfile& profile :
       {TargetProfile::cuda(90), TargetProfile::cuda(90, iron::codegen::MmaStrategy::Software)}) {
    const std::string cuda = iron::codegen::compile_kernel(k, profile).source;
    EXPECT_NE(cuda.find("iron_frag_row_reduce<false>(v"), std::string::npos) << profile.name;
    EXPECT_NE(cuda.find("iron_frag_row_reduce<true>(v"), std::string::npos) << profile.name;
    EXPECT_NE(cuda.find("__shfl_xor_sync(0xffffffffu, v, mask)"), std::string::npos);
    EXPECT_NE(cuda.find("iron_frag_convert(v"), std::string::npos) << profile.name;
  }
  const std::string metal = iron::codegen::compile_kernel(k, TargetProfile::metal(31)).source;
  EXPECT_NE(metal.find("iron_frag_row_reduce<false>(v"), std::string::npos);
  EXPECT_NE(metal.find("simd_shuffle_xor(v, mask)"), std::string::npos);
  EXPECT_NE(metal.find(".m[0][0].thread_elements()[0]"), std::string::npos);
  EXPECT_NE(metal.find("iron_frag_convert(v"), std::string::npos);
}

TEST(FragmentRows, TheVerifierChecksRolesShapesAndSlotsAtTheirLines) {
  const std::string head = R"(kernel t dtype=f32 mode=reduction
  param out out: f32
  rule multiple_of 32
  values 12
{
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 32 : f32
  %2 = frag %0, acc, 16, 8 : f32
  %3 = frag %0, acc, 32, 8 : f32
  %4 = frag %0, a, 16, 32 : f32
  %5 = const 0 : f16
  %6 = frag %5, a, 16, 16 : f16
  %7 = const 0 : u32
  store out[%7], %0 : f32
)";
  const auto expect_problem = [&](const std::string& tail, const std::string& want) {
    std::string found;
    for (const std::string& p : ir::verify(ir::parse_kernel(head + tail + "}\n"))) {
      found += p + "\n";
    }
    EXPECT_NE(found.find(want), std::string::npos) << "want: " << want << "\ngot:\n" << found;
  };
  expect_problem("  frag.rowreduce %2, %4, max : f32  ; k.cpp:20\n",
                 "k.cpp:20: frag.rowreduce takes acc fragments, got acc and a");
  expect_problem("  frag.rowreduce %3, %1, sum : f32  ; k.cpp:21\n",
                 "k.cpp:21: frag.rowreduce of a 16x32 accumulator with a 32x8 row vector: the "
                 "row vector is 16x8");
  expect_problem("  frag.rowreduce %1, %1, sum : f32  ; k.cpp:22\n",
                 "k.cpp:22: frag.rowreduce of a 16x32 accumulator with a 16x32 row vector");
  expect_problem("  %8 = frag.rowvalue %1, %3, 0 : f32  ; k.cpp:23\n",
                 "k.cpp:23: frag.rowvalue of a 16x32 accumulator with a 32x8 row vector");
  expect_problem("  %8 = frag.rowvalue %4, %2, 0 : f32  ; k.cpp:24\n",
                 "k.cpp:24: frag.rowvalue takes acc fragments, got a and acc");
  expect_problem("  %8 = frag.rowvalue %1, %2, 16 : f32  ; k.cpp:25\n",
                 "k.cpp:25: frag.rowvalue of slot 16 of %1, whose lanes hold 16 elements each");
  expect_problem("  frag.convert %2, %1 : f32  ; k.cpp:26\n",
                 "k.cpp:26: frag.convert writes an a fragment from an acc, got acc from acc");
  expect_problem("  frag.convert %6, %1 : f16  ; k.cpp:27\n",
                 "k.cpp:27: frag.convert of a 16x32 accumulator into a 16x16 a: the shapes differ");
  expect_problem("  frag.convert %4, %1 : f16  ; k.cpp:28\n",
                 "k.cpp:28: frag.convert: types differ (f32, f16)");
  expect_problem("  %8 = frag.rowvalue %1, %0, 0 : f32  ; k.cpp:29\n",
                 "k.cpp:29: frag.rowvalue of %0, which is not a fragment");
  EXPECT_THROW(ir::parse_kernel(head + "  frag.rowreduce %2, %1, min : f32\n}\n"), iron::Error);
}

}  // namespace
