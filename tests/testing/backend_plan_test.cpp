/// Tests of `iron test`'s backend plan: auto runs the simulator's sanitizer before the GPU, and
/// the summary names the checks that ran.
#include "iron/testing/backend_plan.hpp"

#include <gtest/gtest.h>

namespace iron::testing {
namespace {

using Names = std::vector<std::string>;

const std::vector<runtime::BackendStatus> kNoGpu = {
    {"sim", true, ""}, {"cuda", false, "no driver"}, {"metal", false, "not Apple"}};
const std::vector<runtime::BackendStatus> kGpu = {
    {"sim", true, ""}, {"cuda", true, ""}, {"metal", false, "not Apple"}};

TEST(BackendPlan, AutoIsTheSimulatorAloneWithoutAGpu) {
  EXPECT_EQ(test_backends("auto", kNoGpu), (Names{"sim"}));
  EXPECT_EQ(checks_label(test_backends("auto", kNoGpu)), "sim sanitizer");
}

TEST(BackendPlan, AutoRunsTheSanitizerThenTheGpu) {
  EXPECT_EQ(test_backends("auto", kGpu), (Names{"sim", "cuda"}));
  EXPECT_EQ(checks_label(test_backends("auto", kGpu)), "sim sanitizer + cuda");
}

TEST(BackendPlan, AllIsEveryAvailableBackendSimFirst) {
  const std::vector<runtime::BackendStatus> cuda_listed_first = {{"cuda", true, ""},
                                                                 {"sim", true, ""}};
  EXPECT_EQ(test_backends("all", cuda_listed_first), (Names{"sim", "cuda"}));
  EXPECT_EQ(test_backends("all", kNoGpu), (Names{"sim"}));
}

TEST(BackendPlan, ANamedBackendRunsAloneAndSaysTheSanitizerDidNot) {
  EXPECT_EQ(test_backends("cuda", kNoGpu), (Names{"cuda"}));  // refused later, with its reason
  EXPECT_EQ(test_backends("sim", kGpu), (Names{"sim"}));
  EXPECT_EQ(checks_label({"cuda"}), "cuda only, no sanitizer");
}

}  // namespace
}  // namespace iron::testing
