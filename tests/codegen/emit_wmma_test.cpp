/// The wmma strategy for CUDA fragments: its name in profiles and IRON_CUDA_MMA, the lines it
/// writes for each fragment op (on the probes), the kernels it leaves to the software strategy,
/// `iron inspect --mma wmma`, and NVRTC compiling every fragment kernel of the probes and the
/// gemm family under it for sm_80 and sm_90.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "checks_test_support.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/error.hpp"
#include "iron/iron.hpp"
#include "iron/runtime/nvrtc.hpp"
#include "resource_checks.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
using iron::codegen::MmaStrategy;
using iron::codegen::TargetProfile;

// An A fragment read by slot: wmma cannot name its elements' positions, so the kernel goes the
// software way.
IRON_KERNEL(wmma_operand_by_slot, (Tensor<f16> inp, Out<f16> out)) {
  dispatch(tiled, {exactly(32)});
  FragA<f16, 16, 16> fa;
  fa.load(inp, 0u, 16u);
  fa.map([&](const Expr<f16>& x, const Expr<u32>&, const Expr<u32>&) { return x + x; });
  fa.store(out, 0u, 16u);
}

std::string wmma_source(const std::string& kernel, DType dtype, int sm = 90) {
  return iron::codegen::compile_kernel(kernel_ir_for(kernel, dtype),
                                       TargetProfile::cuda(sm, MmaStrategy::Wmma))
      .source;
}

bool has(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

TEST(Wmma, NamesParseAndTheEnvironmentPicksIt) {
  EXPECT_EQ(iron::codegen::parse_mma_strategy("wmma"), MmaStrategy::Wmma);
  EXPECT_EQ(iron::codegen::mma_strategy_name(MmaStrategy::Wmma), "wmma");
  EXPECT_EQ(TargetProfile::cuda(90, MmaStrategy::Wmma).name, "sm_90+mma=wmma");
  const auto profile = TargetProfile::by_name("sm_80+mma=wmma");
  ASSERT_TRUE(profile.has_value());
  EXPECT_EQ(profile->mma, MmaStrategy::Wmma);
  EXPECT_EQ(profile->cuda_sm, 80);
  ::setenv("IRON_CUDA_MMA", "wmma", 1);
  EXPECT_EQ(TargetProfile::cuda_device(90).name, "sm_90+mma=wmma");
  ::setenv("IRON_CUDA_MMA", "wmma16", 1);
  try {
    TargetProfile::cuda_device(90);
    ADD_FAILURE() << "IRON_CUDA_MMA=wmma16 was accepted";
  } catch (const iron::Error& e) {
    EXPECT_STREQ(e.what(), "IRON_CUDA_MMA=wmma16: expected mmasync, software, wmma or wgmma");
  }
  ::unsetenv("IRON_CUDA_MMA");
}

TEST(Wmma, LowersLoadsProductAndStoresToWmmaTiles) {
  const std::string rc = wmma_source("iron_mma_probe_rc", DType::F16);
  EXPECT_TRUE(has(rc, "#include <mma.h>")) << rc;
  EXPECT_TRUE(has(rc, "__shared__ __align__(32) float iron_wmma_tiles[1][256];")) << rc;
  EXPECT_TRUE(
      has(rc, "float* const iron_wmma_scratch = iron_wmma_tiles[iron_linear_thread() >> 5];"))
      << rc;
  EXPECT_TRUE(has(rc, "iron_wmma<__half, 0, 32, 32> v")) << rc;
  EXPECT_TRUE(has(rc, "iron_wmma<__half, 1, 32, 16> v")) << rc;
  EXPECT_TRUE(has(rc, "iron_wmma<float, 2, 32, 16> v")) << rc;
  EXPECT_TRUE(has(rc, "iron_wmma_fill(v")) << rc;
  EXPECT_TRUE(has(rc, "iron_wmma_load<false>(v")) << rc;
  EXPECT_TRUE(has(rc, "iron_wmma_load<true>(v")) << rc;
  EXPECT_TRUE(has(rc, "iron_wmma_mma(v")) << rc;
  EXPECT_TRUE(
      has(rc, "nvcuda::wmma::mma_sync(c, a.t[mt * (K / 16) + kt], b.t[kt * (N / 16) + nt], c);"))
      << rc;
  EXPECT_TRUE(has(rc, "iron_wmma_store<false>(v")) << rc;
  EXPECT_FALSE(has(rc, "mma.sync")) << rc;
  EXPECT_FALSE(has(rc, "ldmatrix")) << rc;
  EXPECT_FALSE(has(rc, "iron_wmma_acc_slots")) << "no slot is read by position\n" << rc;

  const std::string copy_b = wmma_source("iron_fragment_copy_probe_b_row", DType::BF16);
  EXPECT_TRUE(has(copy_b, "iron_wmma<__nv_bfloat16, 3, 32, 32> v")) << "row-major B tiles\n"
                                                                    << copy_b;
  EXPECT_TRUE(has(copy_b, "iron_wmma_store_operand<false>(v")) << copy_b;
  EXPECT_TRUE(has(copy_b, "T(static_cast<float>(e))")) << "positions from a coded tile\n" << copy_b;
}

TEST(Wmma, ReadsSlotPositionsFromACodedTile) {
  const std::string coord = wmma_source("iron_fragment_coord_probe", DType::F16);
  EXPECT_TRUE(has(coord, "__shared__ unsigned char iron_wmma_slot_table[32][8];")) << coord;
  EXPECT_TRUE(has(coord, "iron_wmma_acc_slots(iron_wmma_scratch, iron_wmma_where);")) << coord;
  EXPECT_TRUE(has(coord, "iron_wmma_coord<32, false>(iron_wmma_where, 0)")) << coord;
  EXPECT_TRUE(has(coord, "iron_wmma_coord<32, true>(iron_wmma_where, 31)")) << coord;
  EXPECT_TRUE(has(coord, ".t[3].x[7] = ")) << "frag.set of slot 31\n" << coord;
}

TEST(Wmma, LowersTheRowOpsThroughTheScratch) {
  const std::string sum = wmma_source("iron_fragment_rowreduce_probe_sum", DType::BF16);
  EXPECT_TRUE(has(sum, "iron_wmma_row_reduce<true>(v")) << sum;
  EXPECT_TRUE(has(sum, "iron_frag<float, 2, 32, 8> v")) << "row vectors keep the lane map\n" << sum;
  const std::string value = wmma_source("iron_fragment_rowvalue_probe", DType::F16);
  EXPECT_TRUE(has(value, "iron_wmma_row_reduce<false>(v")) << value;
  EXPECT_TRUE(has(value, "iron_wmma_row_value(v")) << value;
  EXPECT_TRUE(has(value, "__shfl_sync(0xffffffffu, rows.x[(j >> 1) * 4 + (j & 1) * 2], owner)"))
      << value;
  const std::string convert = wmma_source("iron_fragment_convert_probe", DType::F16);
  EXPECT_TRUE(has(convert, "iron_wmma_convert(v")) << convert;
  EXPECT_TRUE(has(convert, "iron_wmma_store_operand<false>(v")) << convert;
}

TEST(Wmma, LeavesKernelsItCannotHoldToTheSoftwareStrategy) {
  // f32 operands.
  const auto f32 = kernel_ir_for("iron_mma_probe_rr", DType::F32);
  const auto wmma = iron::codegen::compile_kernel(f32, TargetProfile::cuda(90, MmaStrategy::Wmma));
  const auto soft =
      iron::codegen::compile_kernel(f32, TargetProfile::cuda(90, MmaStrategy::Software));
  std::string renamed = wmma.source;
  const std::string from = "sm_90+mma=wmma";
  const std::string to = "sm_90+mma=software";
  for (std::size_t at = renamed.find(from); at != std::string::npos; at = renamed.find(from, at)) {
    renamed.replace(at, from.size(), to);
  }
  EXPECT_EQ(renamed, soft.source);
  // A B fragment of 8 columns, and an A read by slot.
  for (const char* kernel : {"frag_product", "wmma_operand_by_slot"}) {
    const std::string source = wmma_source(kernel, DType::F32);
    EXPECT_FALSE(has(source, "iron_wmma")) << kernel << "\n" << source;
    EXPECT_TRUE(has(source, "iron_frag<iron_f16")) << kernel << "\n" << source;
  }
}

TEST(Wmma, DefaultProfileIsUnchanged) {
  const std::string sync =
      iron::codegen::compile_kernel(kernel_ir_for("iron_mma_probe_rr", DType::F16),
                                    TargetProfile::cuda(90))
          .source;
  EXPECT_FALSE(has(sync, "wmma")) << sync;
  EXPECT_TRUE(has(sync, "mma.sync.aligned.m16n8k16")) << sync;
}

struct Outcome {
  int status = -1;
  std::string output;  ///< stdout and stderr together
};

Outcome run_iron(const std::string& args) {
  const std::string cmd = std::string(IRON_CLI) + " " + args + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return outcome;
  std::array<char, 4096> buffer{};
  std::size_t got = 0;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    outcome.output.append(buffer.data(), got);
  }
  const int status = pclose(pipe);
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

TEST(Wmma, InspectShowsTheWmmaForm) {
  const Outcome run = run_iron("inspect iron_mma_probe_cc --target cuda --dtype f16 --mma wmma");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(has(run.output, "sm_90+mma=wmma (CUDA C++ for NVRTC)")) << run.output;
  EXPECT_TRUE(has(run.output, "iron_wmma_mma(v")) << run.output;
  const Outcome profile =
      run_iron("inspect iron_mma_probe_cc --target cuda --dtype f16 --profile sm_80+mma=wmma");
  ASSERT_EQ(profile.status, 0) << profile.output;
  EXPECT_TRUE(has(profile.output, "sm_80+mma=wmma (CUDA C++ for NVRTC)")) << profile.output;
  const Outcome unknown = run_iron("inspect iron_mma_probe_cc --target cuda --mma hgmma");
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_TRUE(has(unknown.output, "hgmma")) << unknown.output;
  const Outcome ampere =
      run_iron("inspect iron_mma_probe_cc --target cuda --profile sm_80 --mma wgmma");
  EXPECT_EQ(ampere.status, 2) << ampere.output;
  EXPECT_TRUE(has(ampere.output, "sm_90a's")) << ampere.output;
}

struct KernelCase {
  std::string name;
  DType dtype;
};

void PrintTo(const KernelCase& kernel, std::ostream* out) {
  *out << kernel.name << ' ' << iron::dtype_name(kernel.dtype);
}

std::string case_name(const testing::TestParamInfo<KernelCase>& info) {
  return fmt::format("{}_{}", info.param.name, iron::dtype_name(info.param.dtype));
}

/// Every form of every kernel of the probes and the gemm family, listed by name only (the list
/// is made whenever the test program starts).
std::vector<KernelCase> wmma_cases() {
  std::vector<KernelCase> cases;
  for (const auto& info : registered_kernels()) {
    const bool ours =
        info.loc.file.rfind("probe/", 0) == 0 || info.loc.file.rfind("kernels/gemm/", 0) == 0;
    if (!ours) continue;
    for (const DType dtype : info.dtypes) cases.push_back({info.name, dtype});
  }
  return cases;
}

/// The compute capability a form is compiled for: sm_80 for bf16, sm_90 for the others, so that
/// a kernel with both 16-bit forms compiles for both at one compile a form.
int compiled_sm(DType dtype) { return dtype == DType::BF16 ? 80 : 90; }

class WmmaNvrtc : public testing::TestWithParam<KernelCase> {};

TEST_P(WmmaNvrtc, CompilesWithoutWarningsOrLocalMemory) {
  IRON_REQUIRE_NVRTC();
  const int sm = compiled_sm(GetParam().dtype);
  const auto cuda = iron::codegen::compile_kernel(kernel_ir_for(GetParam().name, GetParam().dtype),
                                                  TargetProfile::cuda(sm, MmaStrategy::Wmma));
  if (!has(cuda.source, "iron_wmma<")) {
    GTEST_SKIP() << "no fragments, or f32 A and B fragments: the software strategy's code";
  }
  try {
    const auto compiled = iron::runtime::compile_cubin(cuda.source, cuda.symbol, sm);
    EXPECT_FALSE(compiled.cubin.empty());
    EXPECT_EQ(iron::checks_test::resource_problems(compiled.resources, cuda.symbol), "")
        << "sm_" << sm << "\n"
        << cuda.source;
  } catch (const iron::Error& error) {
    ADD_FAILURE() << "sm_" << sm << ": " << error.what() << "\n" << cuda.source;
  }
}

INSTANTIATE_TEST_SUITE_P(FragmentKernels, WmmaNvrtc, testing::ValuesIn(wmma_cases()), case_name);

}  // namespace
