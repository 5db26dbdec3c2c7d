// Tensor-core fragments from the DSL to the emitters: traced as frag ops that print and parse
// back, checked by the verifier with their lines, run by the simulator with every report a
// fragment access can earn, and lowered per strategy (mma.sync with ldmatrix, software shuffles,
// Metal simdgroup matrices). The probe kernels (probe/fragments.cpp) check the results.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../sim/sim_helpers.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/error.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"
#include "iron/iron.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;
namespace sim_test = iron::sim_test;

const std::string kFile = "tests/dsl/fragments_test.cpp:";

// One simdgroup: a and b through shared memory at `offset`, the product written to out.
IRON_KERNEL(frag_product, (Tensor<f16> a, Tensor<f16> b, Out<f32> out, Constexpr<u32> offset)) {
  dispatch(tiled, {exactly(32)});
  auto sa = shared<f16>(16 * 16 + 8);
  auto sb = shared<f16>(16 * 8 + 8);
  for (auto i : range(lane_id(), 16u * 16u, 32u)) store(sa[offset + i], load(a[i]));
  for (auto i : range(lane_id(), 16u * 8u, 32u)) store(sb[offset + i], load(b[i]));
  barrier();
  FragA<f16, 16, 16> fa;
  FragB<f16, 16, 8> fb;
  FragAcc<16, 8> acc;
  fa.load(sa, offset, 16u);
  fb.load(sb, offset, 8u);
  mma(acc, fa, fb);
  acc.store(out, 0u, 8u);
}

// Each lane asks for another offset: not one fragment.
IRON_KERNEL(frag_lane_offsets, (Tensor<f32> inp, Out<f32> out)) {
  dispatch(tiled, {exactly(32)});
  FragAcc<16, 8> acc;
  acc.load(inp, lane_id(), 8u);
  acc.store(out, 0u, 8u);
}

// A fragment reaching past the end of its tensor (rows 16 of 8 elements from `offset`).
IRON_KERNEL(frag_past_the_end, (Tensor<f32> inp, Out<f32> out, Constexpr<u32> offset)) {
  dispatch(tiled, {exactly(32)});
  FragAcc<16, 8> acc;
  acc.load(inp, offset, 8u);
  acc.store(out, 0u, 8u);
}

// Copies 16 bytes a thread into shared memory asynchronously, then reads them back: after the
// wait (and a barrier) when `wait` is set, else too early.
int g_early_read_line = 0;
IRON_KERNEL(async_roundtrip, (Tensor<f16> inp, Out<f16> out, Constexpr<u32> wait)) {
  dispatch(tiled, {exactly(32)});
  auto s = shared<f16>(32 * 8);
  auto t = thread_id<0>();
  copy_async<8>(s[t * 8u], inp[t * 8u], t % 4u != 3u);  // every fourth piece zeros
  async_commit();
  IRON_IF(wait == 1u) { async_wait(0); }
  barrier();
  g_early_read_line = __LINE__ + 1;
  store(out[t], load(s[(t * 9u) % 256u]));
  async_wait(0);
}

int g_slot_line = 0;
IRON_KERNEL(frag_slot_past_the_end, (Out<f32> out)) {
  dispatch(tiled, {exactly(32)});
  FragAcc<16, 8> acc;
  g_slot_line = __LINE__ + 1;
  store(out[lane_id()], acc.get(FragAcc<16, 8>::elements));
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

std::vector<double> iota(std::size_t n, double scale) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i % 7) * scale - 3.0;
  return x;
}

TEST(Fragments, TraceAsFragOpsAndPrintParseBack) {
  const ir::Kernel k = kernel_ir_for("frag_product", DType::F32);
  EXPECT_EQ(count_ops(k, ir::OpKind::FragDecl), 3u);
  EXPECT_EQ(count_ops(k, ir::OpKind::FragLoad), 2u);
  EXPECT_EQ(count_ops(k, ir::OpKind::FragMma), 1u);
  EXPECT_EQ(count_ops(k, ir::OpKind::FragStore), 1u);
  const std::string text = ir::print_kernel(k);
  EXPECT_NE(text.find(", acc, 16, 8 : f32"), std::string::npos) << text;
  EXPECT_NE(text.find("frag.mma %"), std::string::npos) << text;
  EXPECT_EQ(ir::print_kernel(ir::parse_kernel(text)), text);
}

TEST(Fragments, SimulatorMultipliesExactly) {
  const ir::Kernel k = kernel_ir_for("frag_product", DType::F32);
  const std::vector<double> a = iota(256, 1.0);
  const std::vector<double> b = iota(128, 0.5);
  auto ta = sim_test::make_tensor(DType::F16, a);
  auto tb = sim_test::make_tensor(DType::F16, b);
  auto out = sim_test::zeros(DType::F32, 128);
  sim_test::run(k, {&ta, &tb, &out, sim_test::scalar(DType::U32, 8)}, one_simdgroup());
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t i = 0; i < 16; ++i) {
    for (std::size_t j = 0; j < 8; ++j) {
      double want = 0.0;
      for (std::size_t p = 0; p < 16; ++p) want += a[i * 16 + p] * b[p * 8 + j];
      EXPECT_EQ(got[i * 8 + j], want) << i << ", " << j;
    }
  }
}

TEST(Fragments, SimulatorReportsAMisalignedSharedLoad) {
  const ir::Kernel k = kernel_ir_for("frag_product", DType::F32);
  auto ta = sim_test::make_tensor(DType::F16, iota(256, 1.0));
  auto tb = sim_test::make_tensor(DType::F16, iota(128, 1.0));
  auto out = sim_test::zeros(DType::F32, 128);
  const auto found =
      sim_test::finding(k, {&ta, &tb, &out, sim_test::scalar(DType::U32, 4)}, one_simdgroup());
  ASSERT_TRUE(found.has_value());
  const std::string what = found->what();
  EXPECT_NE(what.find("misaligned frag.load of 'shm0' with offset 4 and stride 16"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find(kFile), std::string::npos) << what;
}

TEST(Fragments, SimulatorReportsLanesThatDisagreeOnTheOffset) {
  const ir::Kernel k = kernel_ir_for("frag_lane_offsets", DType::F32);
  auto inp = sim_test::make_tensor(DType::F32, std::vector<double>(256, 1.0));
  auto out = sim_test::zeros(DType::F32, 128);
  const auto found = sim_test::finding(k, {&inp, &out}, one_simdgroup());
  ASSERT_TRUE(found.has_value());
  const std::string what = found->what();
  EXPECT_NE(what.find("frag.load of 'inp' with offset 1 and stride 8 in thread 1"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("differ from those of thread 0"), std::string::npos) << what;
}

TEST(Fragments, SimulatorReportsAnElementPastTheEnd) {
  const ir::Kernel k = kernel_ir_for("frag_past_the_end", DType::F32);
  auto inp = sim_test::make_tensor(DType::F32, std::vector<double>(128, 1.0));
  auto out = sim_test::zeros(DType::F32, 128);
  EXPECT_FALSE(
      sim_test::finding(k, {&inp, &out, sim_test::scalar(DType::U32, 0)}, one_simdgroup()));
  const auto found =
      sim_test::finding(k, {&inp, &out, sim_test::scalar(DType::U32, 1)}, one_simdgroup());
  ASSERT_TRUE(found.has_value());
  EXPECT_NE(std::string(found->what()).find("out-of-bounds frag.load of 'inp' at index 128"),
            std::string::npos)
      << found->what();
}

TEST(AsyncCopies, LandAtTheWaitWithZerosWhereNotValid) {
  const ir::Kernel k = kernel_ir_for("async_roundtrip", DType::F32);
  std::vector<double> in(256);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i % 50) - 20.0;
  auto inp = sim_test::make_tensor(DType::F16, in);
  auto out = sim_test::zeros(DType::F16, 32);
  sim_test::run(k, {&inp, &out, sim_test::scalar(DType::U32, 1)}, one_simdgroup());
  const std::vector<double> got = sim_test::read_tensor(out);
  for (std::size_t t = 0; t < 32; ++t) {
    const std::size_t i = (t * 9) % 256;
    EXPECT_EQ(got[t], i / 8 % 4 == 3 ? 0.0 : in[i]) << t;
  }
}

TEST(AsyncCopies, SimulatorReportsAReadBeforeTheWait) {
  const ir::Kernel k = kernel_ir_for("async_roundtrip", DType::F32);
  auto inp = sim_test::make_tensor(DType::F16, std::vector<double>(256, 1.0));
  auto out = sim_test::zeros(DType::F16, 32);
  const auto found =
      sim_test::finding(k, {&inp, &out, sim_test::scalar(DType::U32, 0)}, one_simdgroup());
  ASSERT_TRUE(found.has_value());
  const std::string what = found->what();
  EXPECT_NE(what.find("shared.load read of 'shm0' at index 0"), std::string::npos) << what;
  EXPECT_NE(what.find("asynchronous copy into it has not been waited for"), std::string::npos)
      << what;
  EXPECT_NE(what.find(kFile + std::to_string(g_early_read_line)), std::string::npos) << what;
}

TEST(AsyncCopies, LowerToCpAsyncOnCudaAndACopyOnMetal) {
  const ir::Kernel k = kernel_ir_for("async_roundtrip", DType::F32);
  const auto cuda = iron::codegen::compile_kernel(k, iron::codegen::TargetProfile::cuda(90));
  EXPECT_NE(cuda.source.find("cp.async.cg.shared.global [%0], [%1], 16, %2;"), std::string::npos);
  EXPECT_NE(cuda.source.find("cp.async.commit_group;"), std::string::npos);
  EXPECT_NE(cuda.source.find("cp.async.wait_group 0;"), std::string::npos);
  const auto metal = iron::codegen::compile_kernel(k, iron::codegen::TargetProfile::metal(31));
  EXPECT_NE(metal.source.find("for (uint e = 0; e < 8u; ++e) {"), std::string::npos);
  const std::string text = ir::print_kernel(k);
  EXPECT_NE(text.find("copy.async @shm0[%"), std::string::npos) << text;
  EXPECT_NE(text.find("async.wait 0"), std::string::npos) << text;
  EXPECT_EQ(ir::print_kernel(ir::parse_kernel(text)), text);
}

TEST(Fragments, ASlotPastTheLanesElementsFailsTheTrace) {
  try {
    kernel_ir_for("frag_slot_past_the_end", DType::F32);
    FAIL() << "traced slot 4 of a 16x8 accumulator";
  } catch (const iron::TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(kFile + std::to_string(g_slot_line)), std::string::npos) << what;
    EXPECT_NE(what.find("slot 4 of a fragment whose lanes hold 4 elements"), std::string::npos)
        << what;
  }
}

TEST(Fragments, EachStrategyLowersTheProduct) {
  const ir::Kernel k = kernel_ir_for("frag_product", DType::F32);
  using iron::codegen::MmaStrategy;
  using iron::codegen::TargetProfile;
  const auto sync = iron::codegen::compile_kernel(k, TargetProfile::cuda(90));
  EXPECT_NE(sync.source.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
            std::string::npos);
  EXPECT_NE(sync.source.find("iron_frag_load_shared<false>("), std::string::npos);
  EXPECT_NE(sync.source.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16"), std::string::npos);
  const TargetProfile software = TargetProfile::cuda(90, MmaStrategy::Software);
  EXPECT_EQ(software.name, "sm_90+mma=software");
  const auto soft = iron::codegen::compile_kernel(k, software);
  EXPECT_NE(soft.source.find("iron_frag_mma_software(v"), std::string::npos);
  EXPECT_EQ(soft.source.find("mma.sync"), std::string::npos);
  EXPECT_EQ(soft.source.find("ldmatrix"), std::string::npos);
  const auto metal = iron::codegen::compile_kernel(k, TargetProfile::metal(31));
  EXPECT_NE(metal.source.find("simdgroup_multiply_accumulate("), std::string::npos);
  EXPECT_NE(metal.source.find("iron_frag<half, 16, 16>"), std::string::npos);
}

TEST(Fragments, StrategyProfilesParseAndTheEnvironmentPicksOne) {
  using iron::codegen::MmaStrategy;
  using iron::codegen::TargetProfile;
  const auto soft = TargetProfile::by_name("sm_80+mma=software");
  ASSERT_TRUE(soft.has_value());
  EXPECT_EQ(soft->mma, MmaStrategy::Software);
  EXPECT_EQ(soft->cuda_sm, 80);
  EXPECT_FALSE(TargetProfile::by_name("sm_90+mma=wgmma").has_value());
  EXPECT_FALSE(TargetProfile::by_name("sm_90+mma=mmasync").has_value())
      << "the default strategy has one name, sm_90";
  ::setenv("IRON_CUDA_MMA", "software", 1);
  EXPECT_EQ(TargetProfile::cuda_device(90).name, "sm_90+mma=software");
  ::setenv("IRON_CUDA_MMA", "tensor", 1);
  EXPECT_THROW(TargetProfile::cuda_device(90), iron::Error);
  ::unsetenv("IRON_CUDA_MMA");
  EXPECT_EQ(TargetProfile::cuda_device(90).name, "sm_90");
}

TEST(Fragments, TheVerifierChecksShapesRolesAndSlotsAtTheirLines) {
  const std::string head = R"(kernel t dtype=f32 mode=reduction
  param in x: f32
  param out out: f32
  rule multiple_of 32
  values 8
{
  %0 = const 0 : f32
  %1 = frag %0, acc, 16, 8 : f32  ; k.cpp:3
  %2 = frag %0, a, 16, 32 : f32
  %3 = frag %0, b, 16, 8 : f32
)";
  const auto problems = [&](const std::string& tail) {
    std::string all;
    for (const std::string& p : ir::verify(ir::parse_kernel(head + tail + "}\n"))) all += p + "\n";
    return all;
  };
  const auto expect_problem = [&](const std::string& tail, const std::string& want) {
    const std::string found = problems(tail);
    EXPECT_NE(found.find(want), std::string::npos) << "want: " << want << "\ngot:\n" << found;
  };
  expect_problem(
      "  frag.mma %1, %2, %3 : f32  ; k.cpp:7\n  %4 = const 0 : u32\n"
      "  frag.store out[%4], %1, %4, row : f32\n",
      "k.cpp:7: frag.mma of a 16x32 by a 16x8 into a 16x8: the shapes do not fit");
  expect_problem(
      "  frag.mma %1, %3, %2 : f32  ; k.cpp:8\n  %4 = const 0 : u32\n"
      "  frag.store out[%4], %1, %4, row : f32\n",
      "k.cpp:8: frag.mma takes an acc, an a and a b fragment, got acc, b and a");
  expect_problem(
      "  %4 = frag.get %1, 4 : f32  ; k.cpp:9\n  %5 = const 0 : u32\n"
      "  store out[%5], %4 : f32\n",
      "k.cpp:9: frag.get of slot 4 of %1, whose lanes hold 4 elements each");
  expect_problem(
      "  %4 = const 0 : u32\n  frag.store x[%4], %1, %4, row : f32  ; k.cpp:10\n"
      "  store out[%4], %0 : f32\n",
      "k.cpp:10: stores into input tensor 'x'");
  expect_problem(
      "  %4 = frag %0, b, 16, 12 : f32  ; k.cpp:11\n  %5 = const 0 : u32\n"
      "  store out[%5], %0 : f32\n",
      "k.cpp:11: frag: a b fragment is made of 16x8 tiles, so 16x12 is not a "
      "fragment shape");
  expect_problem(
      "  %4 = add %1, %0 : f32  ; k.cpp:12\n  %5 = const 0 : u32\n"
      "  store out[%5], %4 : f32\n",
      "k.cpp:12: uses fragment %1 as a value");
}

}  // namespace
