/// The compiler's CI checks on the whole library: every registered kernel in each of its dtypes,
/// through the pipeline and both emitters, compiles with NVRTC for sm_90 without a warning and
/// without local memory (ptxas reports no stack frame and no spill), passes the MSL shim check
/// (clang, not Apple's compiler) and has no empty body; the forms with warpgroup products also
/// compile for sm_90a that way.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "checks_test_support.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/codegen/passes/lower_warpgroup_products.hpp"
#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/runtime/nvrtc.hpp"
#include "resource_checks.hpp"
#include "support/checks.hpp"

namespace iron::checks_test {
namespace {

struct KernelCase {
  std::string name;
  DType dtype;
};

/// Every dtype of every kernel of the library: those defined under kernels/. The test binary
/// also registers test kernels, some of which fail to trace on purpose.
std::vector<KernelCase> library_cases() {
  std::vector<KernelCase> cases;
  for (const auto& info : dsl::registered_kernels()) {
    if (info.loc.file.rfind("kernels/", 0) != 0) continue;
    for (const DType dtype : info.dtypes) cases.push_back({info.name, dtype});
  }
  return cases;
}

/// How gtest (and so ctest's test list) shows a case.
void PrintTo(const KernelCase& kernel, std::ostream* out) {
  *out << kernel.name << ' ' << dtype_name(kernel.dtype);
}

std::string case_name(const testing::TestParamInfo<KernelCase>& info) {
  return fmt::format("{}_{}", info.param.name, dtype_name(info.param.dtype));
}

/// The kernel through the pipeline and the emitter of `target`.
codegen::CompiledKernel emit(const KernelCase& kernel, const codegen::TargetProfile& target) {
  return codegen::compile_kernel(dsl::kernel_ir_for(kernel.name, kernel.dtype), target);
}

/// `source` with line numbers, to read a failure against.
std::string numbered(const std::string& source) {
  std::string out;
  int line = 1;
  std::size_t start = 0;
  while (start < source.size()) {
    const std::size_t end = source.find('\n', start);
    const std::size_t stop = end == std::string::npos ? source.size() : end;
    out += fmt::format("{:4} | {}\n", line++, source.substr(start, stop - start));
    start = stop + 1;
  }
  return out;
}

class ChecksLibrary : public testing::TestWithParam<KernelCase> {};

TEST_P(ChecksLibrary, CudaCompilesWithNvrtcForSm90WithoutWarningsOrLocalMemory) {
  IRON_REQUIRE_NVRTC();
  const auto cuda = emit(GetParam(), codegen::TargetProfile::cuda(90));
  try {
    const runtime::CubinResult compiled = runtime::compile_cubin(cuda.source, cuda.symbol, 90);
    EXPECT_FALSE(compiled.cubin.empty());
    EXPECT_EQ(resource_problems(compiled.resources, cuda.symbol), "")
        << GetParam().name << ' ' << dtype_name(GetParam().dtype) << " for sm_90\n"
        << numbered(cuda.source);
  } catch (const Error& error) {
    FAIL() << error.what() << "\n" << numbered(cuda.source);
  }
}

// The forms a compute capability 9.0 device compiles for sm_90a (those with warpgroup
// products): NVRTC for sm_90a, with wgmma in the source, no warning (C7514, serialized products,
// among them) and no local memory.
TEST(ChecksLibraryHopper, KernelsWithWarpgroupProductsCompileForSm90a) {
  IRON_REQUIRE_NVRTC();
  const codegen::TargetProfile hopper =
      codegen::TargetProfile::cuda(90, codegen::MmaStrategy::Wgmma);
  std::size_t forms = 0;
  std::vector<KernelCase> cases = library_cases();
  for (const auto& info : dsl::registered_kernels()) {  // and the probes
    if (info.loc.file.rfind("probe/", 0) != 0) continue;
    for (const DType dtype : info.dtypes) cases.push_back({info.name, dtype});
  }
  for (const KernelCase& c : cases) {
    const ir::Kernel traced = dsl::kernel_ir_for(c.name, c.dtype);
    if (!codegen::has_warpgroup_products(traced) || c.dtype == DType::F32) continue;
    ++forms;
    const auto cuda = codegen::compile_kernel(traced, hopper);
    EXPECT_NE(cuda.source.find("wgmma.mma_async"), std::string::npos) << cuda.symbol;
    try {
      const runtime::CubinResult compiled =
          runtime::compile_cubin(cuda.source, cuda.symbol, 90, /*arch_specific=*/true);
      EXPECT_EQ(resource_problems(compiled.resources, cuda.symbol), "") << cuda.symbol;
    } catch (const Error& error) {
      ADD_FAILURE() << error.what() << "\n" << numbered(cuda.source);
    }
  }
  EXPECT_GE(forms, 8u) << "the warpgroup GEMM and probes in f16 and bf16";
}

/// The MSL of the kernel, or nothing for a form past Metal's limits (its threadgroup memory):
/// such a form is not emitted for Metal at all (`iron build` and the snapshots say so).
std::optional<codegen::CompiledKernel> emit_msl(const KernelCase& kernel) {
  try {
    return emit(kernel, codegen::TargetProfile::metal(31));
  } catch (const TargetLimitError& e) {
    EXPECT_NE(std::string(e.what()).find("threadgroup memory"), std::string::npos) << e.what();
    return std::nullopt;
  }
}

TEST_P(ChecksLibrary, MslPassesTheShimCheck) {
  const auto msl = emit_msl(GetParam());
  if (!msl) GTEST_SKIP() << "not emitted for Metal: past its threadgroup memory";
  const std::string diagnostics = checks::check_msl(msl->source);
  EXPECT_EQ(diagnostics, "") << numbered(msl->source);
}

TEST_P(ChecksLibrary, HasNoEmptyBodies) {
  const auto cuda = emit(GetParam(), codegen::TargetProfile::cuda(90));
  EXPECT_EQ(checks::find_empty_bodies(cuda.source, cuda.symbol + ".cu"), std::vector<std::string>{})
      << numbered(cuda.source);
  if (const auto msl = emit_msl(GetParam())) {
    EXPECT_EQ(checks::find_empty_bodies(msl->source, msl->symbol + ".metal"),
              std::vector<std::string>{})
        << numbered(msl->source);
  }
}

INSTANTIATE_TEST_SUITE_P(Library, ChecksLibrary, testing::ValuesIn(library_cases()), case_name);

}  // namespace
}  // namespace iron::checks_test
