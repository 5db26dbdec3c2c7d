/// The compiler's CI checks on the whole library: every registered kernel in each of its dtypes,
/// through the pipeline and both emitters, compiles with NVRTC for sm_90 without a warning and
/// without local memory (ptxas reports no stack frame and no spill), passes the MSL shim check
/// (clang, not Apple's compiler) and has no empty body.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "checks_test_support.hpp"
#include "iron/codegen/compile.hpp"
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

TEST_P(ChecksLibrary, MslPassesTheShimCheck) {
  const auto msl = emit(GetParam(), codegen::TargetProfile::metal(31));
  const std::string diagnostics = checks::check_msl(msl.source);
  EXPECT_EQ(diagnostics, "") << numbered(msl.source);
}

TEST_P(ChecksLibrary, HasNoEmptyBodies) {
  const auto cuda = emit(GetParam(), codegen::TargetProfile::cuda(90));
  const auto msl = emit(GetParam(), codegen::TargetProfile::metal(31));
  EXPECT_EQ(checks::find_empty_bodies(cuda.source, cuda.symbol + ".cu"), std::vector<std::string>{})
      << numbered(cuda.source);
  EXPECT_EQ(checks::find_empty_bodies(msl.source, msl.symbol + ".metal"),
            std::vector<std::string>{})
      << numbered(msl.source);
}

INSTANTIATE_TEST_SUITE_P(Library, ChecksLibrary, testing::ValuesIn(library_cases()), case_name);

}  // namespace
}  // namespace iron::checks_test
