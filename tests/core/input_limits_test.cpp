/// Limits that keep hostile IR text from crashing or exhausting memory: block nesting in the
/// parser and the declared value count in the verifier.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "iron/core/error.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/verifier.hpp"

namespace iron::ir {
namespace {

/// A valid kernel whose store sits inside `depth` nested branches on one condition.
std::string nested(int depth) {
  std::string text =
      "kernel k dtype=f32 mode=elementwise\n"
      "  param in inp: f32\n"
      "  param out out: f32\n"
      "  values 3\n"
      "{\n"
      "  %0 = builtin global_id.x : u32\n"
      "  %1 = const 1 : bool\n";
  for (int i = 0; i < depth; ++i) text += "  if %1 {\n";
  text += "  %2 = load inp[%0] : f32\n  store out[%0], %2 : f32\n";
  for (int i = 0; i < depth; ++i) text += "  }\n";
  return text + "}\n";
}

TEST(IrInputLimits, NestingUpToTheLimitParsesAndVerifies) {
  const Kernel k = parse_kernel(nested(kMaxBlockDepth - 1));  // the body is one level itself
  EXPECT_TRUE(verify(k).empty());
}

TEST(IrInputLimits, DeeperNestingIsAParseErrorNamingTheLine) {
  // Line 8 opens the first branch; the body block is level 1, so branch d opens level d + 1.
  const int first_too_deep = 8 + kMaxBlockDepth - 1;
  try {
    parse_kernel(nested(kMaxBlockDepth));
    FAIL() << "parsed";
  } catch (const IrError& e) {
    EXPECT_EQ(std::string(e.what()), fmt::format("line {}: blocks nest more than {} deep",
                                                 first_too_deep, kMaxBlockDepth));
  }
}

TEST(IrInputLimits, NestingFarPastWhatTheStackHoldsFailsCleanly) {
  EXPECT_THROW(parse_kernel(nested(100000)), IrError);
}

TEST(IrInputLimits, AHugeValueCountIsRefusedBeforeAnythingIsAllocated) {
  const std::string text =
      "kernel k dtype=f32 mode=elementwise  ; k.cpp:3\n"
      "  param out out: f32\n"
      "  values 4294967295\n"
      "{\n"
      "  %0 = builtin global_id.x : u32\n"
      "  %1 = const 1 : f32\n"
      "  store out[%0], %1 : f32\n"
      "}\n";
  const std::vector<std::string> problems = verify(parse_kernel(text));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], fmt::format("kernel k: k.cpp:3: declares 4294967295 values, more than "
                                     "the {} a kernel may have",
                                     kMaxValues));
}

TEST(IrInputLimits, ValueCountAtTheLimitIsAccepted) {
  const std::string text = fmt::format(
      "kernel k dtype=f32 mode=elementwise\n"
      "  param out out: f32\n"
      "  values {}\n"
      "{{\n"
      "  %0 = builtin global_id.x : u32\n"
      "  %{} = const 1 : f32\n"
      "  store out[%0], %{} : f32\n"
      "}}\n",
      kMaxValues, kMaxValues - 1, kMaxValues - 1);
  EXPECT_TRUE(verify(parse_kernel(text)).empty());
}

}  // namespace
}  // namespace iron::ir
