// `iron run` refuses, before anything runs, a launch whose buffers do not match the kernel's
// layouts or whose grid breaks its grid rules: exit code 3 and the dispatch guard's message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "iron/testing/data.hpp"
#include "iron/testing/npy.hpp"

namespace iron::run_guard_test {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("iron-run-guard-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

struct Outcome {
  int exit_code = -1;
  std::string stderr_text;
};

/// Runs `iron run ARGS --backend sim`, capturing the exit code and stderr.
Outcome iron_run(const std::string& args) {
  const std::string err = scratch("stderr.txt").string();
  const std::string cmd =
      std::string(IRON_CLI) + " run " + args + " --backend sim > /dev/null 2> " + err;
  const int status = std::system(cmd.c_str());
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

/// A 2 x 4 f32 input file; returns its path.
std::string two_rows_of_four() {
  const auto path = scratch("x.npy").string();
  testing::write_npy(path, {testing::pack({1, 2, 3, 4, 5, 6, 7, 8}, DType::F32), {2, 4}});
  return path;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(IronRunGuard, RefusesAConstexprLargerThanTheData) {
  const Outcome o = iron_run("iron_softmax --in inp=" + two_rows_of_four() + " --out out=" +
                             scratch("y.npy").string() + " --const n=8 --grid 2 --tpg 32");
  EXPECT_EQ(o.exit_code, 3) << o.stderr_text;
  EXPECT_TRUE(contains(o.stderr_text,
                       "iron_softmax: dispatch refused, nothing launched: inp holds 8 elements; "
                       "the layout [groups.x, n] needs groups.x * n = 2 * 8 = 16 (layout(...) at "
                       "kernels/ops/softmax.cpp:"))
      << o.stderr_text;
  EXPECT_TRUE(contains(o.stderr_text, ", dispatch(...) at kernels/ops/softmax.cpp:"))
      << o.stderr_text;
  EXPECT_FALSE(fs::exists(scratch("y.npy"))) << "nothing was written";
}

TEST(IronRunGuard, RefusesAGridThatDoesNotMatchTheRows) {
  const std::string base = "iron_softmax --in inp=" + two_rows_of_four() +
                           " --out out=" + scratch("z.npy").string() +
                           " --const n=4 --tpg 32 --grid ";
  // One group for two rows would leave the second row unwritten.
  Outcome o = iron_run(base + "1");
  EXPECT_EQ(o.exit_code, 3) << o.stderr_text;
  EXPECT_TRUE(contains(o.stderr_text,
                       "inp holds 8 elements; the layout [groups.x, n] needs "
                       "groups.x * n = 1 * 4 = 4"))
      << o.stderr_text;
  o = iron_run(base + "2,2");
  EXPECT_EQ(o.exit_code, 3) << o.stderr_text;
  EXPECT_TRUE(contains(o.stderr_text,
                       "groups.y (2) must be 1 (grid(...) at "
                       "kernels/ops/softmax.cpp:"))
      << o.stderr_text;
  EXPECT_EQ(iron_run(base + "2").exit_code, 0);
}

TEST(IronRunGuard, RefusesAGridCountedInThreads) {
  const auto path = scratch("v.npy").string();
  testing::write_npy(path, {testing::pack(std::vector<float>(1000, 1.0f), DType::F32), {1000}});
  const Outcome o =
      iron_run("iron_copy --in inp=" + path + " --out out=" + scratch("w.npy").string() +
               " --const n=1000 --grid 1000 --tpg 256");
  EXPECT_EQ(o.exit_code, 3) << o.stderr_text;
  EXPECT_TRUE(contains(o.stderr_text,
                       "groups.x (1000) must be at most ceil_div(n, tpg) = ceil_div(1000, 256) = "
                       "4: a grid counted in threads, not in groups of 256?"))
      << o.stderr_text;
}

}  // namespace
}  // namespace iron::run_guard_test
