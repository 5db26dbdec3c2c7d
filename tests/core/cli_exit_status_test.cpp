/// The `iron` command's exit status, one per kind of outcome (docs/cli.md): 0 success, 1 a
/// check failed, 2 a usage mistake, 3 a refused kernel or launch.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "iron/testing/data.hpp"
#include "iron/testing/npy.hpp"

namespace iron {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("iron-exit-status-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

/// The exit status of `iron ARGS`, its output discarded.
int exit_status_of(const std::string& args) {
  const std::string cmd = std::string(IRON_CLI) + " " + args + " > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(IronExitStatus, SuccessIsZero) { EXPECT_EQ(exit_status_of("--version"), 0); }

TEST(IronExitStatus, AFailedCheckIsOne) {
  const fs::path empty = scratch("no-snapshots");
  fs::create_directories(empty);
  EXPECT_EQ(exit_status_of("diff --dir " + empty.string()), 1);
}

TEST(IronExitStatus, AnUnusableCommandLineIsTwo) {
  EXPECT_EQ(exit_status_of("list --no-such-option"), 2);
  EXPECT_EQ(exit_status_of("run no_such_kernel"), 2);
  EXPECT_EQ(exit_status_of("diff --dir " + scratch("absent").string()), 2);
}

TEST(IronExitStatus, ARefusedLaunchIsThree) {
  const std::string in = scratch("x.npy").string();
  testing::write_npy(in, {testing::pack(std::vector<float>(1000, 1.0f), DType::F32), {1000}});
  EXPECT_EQ(exit_status_of("run iron_copy --backend sim --in inp=" + in + " --out out=" +
                           scratch("y.npy").string() + " --const n=1000 --grid 1000 --tpg 256"),
            3);
}

}  // namespace
}  // namespace iron
