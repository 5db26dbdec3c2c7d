/// The empty-body scan on small CUDA and MSL texts: what it reports, and what it leaves alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/checks.hpp"

namespace iron::checks_test {
namespace {

using Findings = std::vector<std::string>;

Findings scan(const std::string& source) { return checks::find_empty_bodies(source, "k.cu"); }

TEST(ChecksEmptyBody, ReportsAnEmptyForLoopBody) {
  EXPECT_EQ(scan("extern \"C\" __global__ void k(float* out) {\n"
                 "  for (int i = 0; i < 4; ++i) {\n"
                 "  }\n"
                 "  out[0] = 1.0f;\n"
                 "}\n"),
            Findings{"k.cu:2: empty for-loop body"});
}

TEST(ChecksEmptyBody, ReportsAnEmptyIfAndElseBody) {
  EXPECT_EQ(scan("extern \"C\" __global__ void k(float* out, int n) {\n"
                 "  if (n > (2 * (n + 1))) { }\n"
                 "  else if (n == 0) {\n"
                 "    out[0] = 0.0f;\n"
                 "  } else {}\n"
                 "}\n"),
            (Findings{"k.cu:2: empty if body", "k.cu:5: empty else body"}));
}

TEST(ChecksEmptyBody, ReportsAnEmptyCudaKernelBody) {
  EXPECT_EQ(scan("#include <cuda_fp16.h>\n"
                 "extern \"C\" __global__ void __launch_bounds__(256)\n"
                 "    k(const __half* __restrict__ inp) {\n"
                 "}\n"),
            Findings{"k.cu:3: empty kernel body"});
}

TEST(ChecksEmptyBody, ReportsAnEmptyMslKernelBody) {
  EXPECT_EQ(checks::find_empty_bodies("#include <metal_stdlib>\n"
                                      "using namespace metal;\n"
                                      "kernel void k(device float* out [[buffer(0)]],\n"
                                      "              uint gid [[thread_position_in_grid]]) {}\n",
                                      "k.metal"),
            Findings{"k.metal:4: empty kernel body"});
}

TEST(ChecksEmptyBody, SeesThroughComments) {
  EXPECT_EQ(scan("__global__ void k(float* out) {\n"
                 "  for (int i = 0; i < 4; ++i) { // nothing here\n"
                 "    /* nor here { } */\n"
                 "  }\n"
                 "  out[0] = 1.0f;\n"
                 "}\n"),
            Findings{"k.cu:2: empty for-loop body"});
}

TEST(ChecksEmptyBody, LeavesNonEmptyBodiesAlone) {
  EXPECT_EQ(scan("extern \"C\" __global__ void k(float* out, int n) {\n"
                 "  for (int i = 0; i < n; ++i) { out[i] = 0.0f; }\n"
                 "  if (n > 1) {\n"
                 "    out[0] = 1.0f;\n"
                 "  } else {\n"
                 "    out[0] = 2.0f;\n"
                 "  }\n"
                 "}\n"),
            Findings{});
}

TEST(ChecksEmptyBody, LeavesOtherEmptyBracesAlone) {
  // Initialisers, an empty device helper, a lambda, a struct, and braces in comments, strings
  // and preprocessor lines are none of its business.
  EXPECT_EQ(scan("#define NOTHING() {}\n"
                 "struct Empty {};\n"
                 "__device__ void helper() {}\n"
                 "extern \"C\" __global__ void k(float* out) {\n"
                 "  float partial[4] = {};\n"
                 "  auto noop = [](int) {};\n"
                 "  const char* text = \"for (;;) {}\";\n"
                 "  // if (x) {}\n"
                 "  noop(0);\n"
                 "  out[0] = partial[0] + text[0];\n"
                 "}\n"),
            Findings{});
}

}  // namespace
}  // namespace iron::checks_test
