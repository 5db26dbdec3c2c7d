/// `iron inspect KERNEL --resources`, as a user runs it: ptxas's table for the kernel's CUDA
/// source, and a usage error for a target NVRTC does not compile.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "checks_test_support.hpp"

namespace iron::checks_test {
namespace {

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

TEST(InspectResources, PrintsPtxasTableForTheCudaSource) {
  IRON_REQUIRE_NVRTC();
  const Outcome run = run_iron("inspect iron_scale --dtype bf16 --resources");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output.rfind("iron_scale_bf16 for sm_90 (ptxas of NVRTC ", 0), 0U) << run.output;
  EXPECT_NE(run.output.find("function                         registers barriers  shared  stack "
                            "spill stores spill loads\niron_scale_bf16 "),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("\nno local memory\n"), std::string::npos) << run.output;
}

TEST(InspectResources, RefusesATargetOtherThanCuda) {
  const Outcome run = run_iron("inspect iron_scale --target msl --resources");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("--resources reports on the cuda source, not on msl"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run_iron("inspect iron_scale --profile metal3.1 --resources").status, 2);
}

}  // namespace
}  // namespace iron::checks_test
