/// Every kernel file keeps its tests and benches in its `#if IRON_KERNEL_TESTS` section, after
/// its kernels: the kernel library compiles the file without the section, so a test or a harness
/// include outside it would make the library depend on the harness, and a kernel inside it would
/// be registered nowhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

/// Lines that belong in the test section, and lines that must stay out of it.
constexpr std::array<std::string_view, 6> kHarness{"#include <iron/testing/",
                                                   "#include <iron/bench/",
                                                   "#include \"iron/testing/",
                                                   "#include \"iron/bench/",
                                                   "IRON_TEST(",
                                                   "IRON_BENCH("};
constexpr std::array<std::string_view, 3> kKernel{"IRON_KERNEL(", "IRON_KERNEL_TEMPLATE(",
                                                  "IRON_KERNEL_VARIANT("};

/// Whether `line` starts with one of `prefixes`.
bool starts_with_any(const std::string& line, std::span<const std::string_view> prefixes) {
  return std::ranges::any_of(prefixes,
                             [&](std::string_view prefix) { return line.starts_with(prefix); });
}

/// "LINE: problem" for each breach of the layout in the kernel file `text`.
std::vector<std::string> layout_problems(const std::string& text) {
  std::vector<std::string> found;
  std::istringstream in(text);
  std::string line;
  std::string last;
  int number = 0;
  int section = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string at = std::to_string(number) + ": ";
    if (line == "#if IRON_KERNEL_TESTS") {
      if (section != 0) found.push_back(at + "a second test section");
      section = number;
    } else if (section == 0 && starts_with_any(line, kHarness)) {
      found.push_back(at + "a test, bench or harness include before the test section");
    } else if (section != 0 && starts_with_any(line, kKernel)) {
      found.push_back(at + "a kernel inside the test section");
    }
    if (!line.empty()) last = line;
  }
  if (section == 0) found.emplace_back("no `#if IRON_KERNEL_TESTS` section");
  if (section != 0 && last != "#endif  // IRON_KERNEL_TESTS") {
    found.emplace_back("the test section does not end the file");
  }
  return found;
}

TEST(KernelLibrary, TestsAndBenchesStayInTheTestSection) {
  const std::filesystem::path root = std::string(IRON_SOURCE_DIR) + "/kernels";
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".cpp") continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    for (const std::string& problem : layout_problems(text.str())) {
      ADD_FAILURE() << entry.path().lexically_relative(IRON_SOURCE_DIR).string() << ":" << problem;
    }
  }
  EXPECT_GE(files, 5) << "found too few kernel files under kernels/";
}

TEST(KernelLibrary, TheLayoutCheckFindsEachBreach) {
  EXPECT_EQ(layout_problems("#include <iron/iron.hpp>\nIRON_KERNEL(k, ()) {}\n"),
            std::vector<std::string>{"no `#if IRON_KERNEL_TESTS` section"});
  EXPECT_EQ(layout_problems("#include <iron/testing/registry.hpp>\n"
                            "IRON_KERNEL(k, ()) {}\n"
                            "IRON_TEST(k, a, F32) {}\n"
                            "#if IRON_KERNEL_TESTS\n"
                            "IRON_KERNEL_VARIANT(k, v, 1);\n"
                            "#endif  // IRON_KERNEL_TESTS\n"
                            "IRON_BENCH(k, b, F32) {}\n"),
            (std::vector<std::string>{"1: a test, bench or harness include before the test section",
                                      "3: a test, bench or harness include before the test section",
                                      "5: a kernel inside the test section",
                                      "the test section does not end the file"}));
  EXPECT_EQ(layout_problems("IRON_KERNEL(k, ()) {}\n"
                            "#if IRON_KERNEL_TESTS\n"
                            "#include <iron/bench/registry.hpp>\n"
                            "IRON_BENCH(k, b, F32) {}\n"
                            "#endif  // IRON_KERNEL_TESTS\n\n"),
            std::vector<std::string>{});
}

}  // namespace
