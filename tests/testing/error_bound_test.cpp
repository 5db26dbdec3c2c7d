/// Every library kernel states its error bound and every library test derives its tolerance from
/// it: the kernel file's doc comment has an "## Error bound" section, its IRON_TEST cases list
/// bare dtypes (so the setup states the tolerance), and no tolerance is written as bare numbers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "iron/core/error.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"

namespace iron::testing {
namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The library's kernel files: every .cpp under kernels/ that defines a kernel.
std::vector<std::filesystem::path> kernel_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(IRON_SOURCE_DIR) + "/kernels")) {
    if (entry.path().extension() != ".cpp") continue;
    if (read(entry.path()).find("IRON_KERNEL") != std::string::npos) files.push_back(entry.path());
  }
  return files;
}

TEST(ErrorBounds, EveryKernelFileStatesItsBound) {
  const auto files = kernel_files();
  ASSERT_GE(files.size(), 15u) << "found too few kernel files";
  for (const auto& file : files) {
    const std::string text = read(file);
    const std::string doc = text.substr(0, text.find("#include"));
    const auto at = doc.find("/// ## Error bound\n/// ");
    EXPECT_NE(at, std::string::npos)
        << file << ": the doc comment has no \"## Error bound\" section stating the kernel's bound";
  }
}

TEST(ErrorBounds, EveryLibraryTestDerivesItsTolerance) {
  // IRON_TEST(kernel, case, <dtypes>) {: the dtypes must be bare tags, never F32(atol, rtol).
  const std::regex header(R"(IRON_TEST\(\s*\w+\s*,\s*\w+\s*,([^{]*)\{)");
  const std::regex bare(R"(^\s*(F32|F16|BF16)(\s*,\s*(F32|F16|BF16))*\s*\)\s*$)");
  std::size_t tests = 0;
  for (const auto& file : kernel_files()) {
    const std::string text = read(file);
    for (auto m = std::sregex_iterator(text.begin(), text.end(), header);
         m != std::sregex_iterator(); ++m) {
      ++tests;
      EXPECT_TRUE(std::regex_match((*m)[1].str(), bare))
          << file << ": " << m->str()
          << "\nlist bare dtypes and state the tolerance in the setup from the kernel's bound";
    }
    EXPECT_EQ(text.find("Tolerance{"), std::string::npos)
        << file << ": a tolerance written as numbers; derive it with testing::tolerance";
  }
  EXPECT_GE(tests, 100u) << "found too few library tests";
}

TEST(ErrorBounds, EveryLibraryCaseStatesATolerance) {
  auto backend = runtime::make_backend("sim");
  for (const TestCase& test : registered_tests()) {
    if (!test.loc.file.starts_with("kernels/")) continue;
    for (const DTypeTolerance& d : test.dtypes) {
      EXPECT_FALSE(d.stated) << test.name << " registers a fixed tolerance";
      Rng rng(case_seed(1, test.name, d.dtype));
      const TestSetup setup = test.make(d.dtype, rng);
      for (const auto& [output, count] : setup.outputs()) {
        EXPECT_TRUE(setup.has_tolerance() || setup.output_tolerances().count(output) > 0)
            << test.name << " [" << dtype_name(d.dtype) << "] states no tolerance for " << output;
      }
    }
  }
}

}  // namespace
}  // namespace iron::testing
