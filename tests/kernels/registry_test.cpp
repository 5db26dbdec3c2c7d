// Every kernel defined under kernels/ is registered, has at least two tests and a bench.
#include "iron/testing/registry.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "iron/bench/registry.hpp"
#include "iron/dsl/kernel.hpp"

namespace {

/// Kernel names defined in the source tree: IRON_KERNEL(name, …) and each
/// IRON_KERNEL_VARIANT(name, suffix, …) as name_suffix.
std::vector<std::string> kernels_in_source_tree() {
  const std::regex plain(R"(IRON_KERNEL\(\s*(\w+)\s*,)");
  const std::regex variant(R"(IRON_KERNEL_VARIANT\(\s*(\w+)\s*,\s*(\w+)\s*,)");
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(IRON_SOURCE_DIR) + "/kernels")) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (std::sregex_iterator it(s.begin(), s.end(), plain), end; it != end; ++it) {
      names.push_back((*it)[1]);
    }
    for (std::sregex_iterator it(s.begin(), s.end(), variant), end; it != end; ++it) {
      names.push_back((*it)[1].str() + "_" + (*it)[2].str());
    }
  }
  return names;
}

TEST(KernelLibrary, EveryKernelIsRegisteredWithAtLeastTwoTests) {
  const auto names = kernels_in_source_tree();
  ASSERT_GE(names.size(), 5u) << "found too few kernels under kernels/";
  std::map<std::string, int> tests_per_kernel;
  for (const auto& t : iron::testing::registered_tests()) ++tests_per_kernel[t.kernel];
  for (const auto& name : names) {
    EXPECT_NE(iron::dsl::find_kernel(name), nullptr) << name << " is not registered";
    EXPECT_GE(tests_per_kernel[name], 2) << name << " needs at least two tests";
  }
}

TEST(KernelLibrary, EveryKernelHasABench) {
  std::map<std::string, int> benches_per_kernel;
  for (const auto& b : iron::bench::registered_benches()) ++benches_per_kernel[b.kernel];
  for (const auto& name : kernels_in_source_tree()) {
    EXPECT_GE(benches_per_kernel[name], 1) << name << " needs a bench (IRON_BENCH)";
  }
  for (const auto& [kernel, count] : benches_per_kernel) {
    EXPECT_NE(iron::dsl::find_kernel(kernel), nullptr) << "a bench names " << kernel;
  }
}

TEST(KernelLibrary, EveryTestNamesARegisteredKernel) {
  for (const auto& t : iron::testing::registered_tests()) {
    EXPECT_NE(iron::dsl::find_kernel(t.kernel), nullptr) << t.name;
  }
}

TEST(KernelLibrary, EveryKernelTracesInEveryDtype) {
  for (const auto& name : kernels_in_source_tree()) {
    const auto* info = iron::dsl::find_kernel(name);
    ASSERT_NE(info, nullptr) << name;
    for (auto dt : info->dtypes) {
      EXPECT_NO_THROW(info->trace(dt)) << name << " " << iron::dtype_name(dt);
    }
  }
}

}  // namespace
