/// Verifier rejections, one per rule, each on a small textual kernel.
#include "iron/core/verifier.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "iron/core/error.hpp"
#include "iron/core/parser.hpp"

namespace iron::ir {
namespace {

/// A valid elementwise kernel whose body ends with `body`; values %0..%5 are defined:
/// %0 global_id.x (u32), %1 inp[%0] (f32), %2 alpha (f32), %3 true, %4 2 (i32), %5 n (u32).
std::string kernel(std::string_view body, std::string_view header = "",
                   std::string_view mode = "elementwise") {
  return fmt::format(
      "kernel k dtype=f32 mode={}\n"
      "  param in inp: f32\n"
      "  param out out: f32\n"
      "  param out counts: u32\n"
      "  param out halves: f16\n"
      "  param constexpr alpha: f32\n"
      "  param constexpr n: u32\n"
      "{}"
      "  values 32\n"
      "{{\n"
      "  %0 = builtin global_id.x : u32\n"
      "  %1 = load inp[%0] : f32\n"
      "  %2 = constexpr alpha : f32\n"
      "  %3 = const 1 : bool\n"
      "  %4 = const 2 : i32\n"
      "  %5 = constexpr n : u32\n"
      "  store out[%0], %1 : f32\n"
      "{}\n"
      "}}\n",
      mode, header, body);
}

std::vector<std::string> problems(std::string_view text) { return verify(parse_kernel(text)); }

/// Expects exactly these problems, each "kernel k: <message>".
void expect_problems(std::string_view text, const std::vector<std::string_view>& messages) {
  std::vector<std::string> expected;
  for (std::string_view m : messages) expected.push_back(fmt::format("kernel k: {}", m));
  EXPECT_EQ(problems(text), expected) << text;
}

void expect_problem(std::string_view text, std::string_view message) {
  expect_problems(text, {message});
}

constexpr std::string_view kGroupHeader = "  rule multiple_of 64\n";

TEST(IrVerifier, AcceptsValidKernels) {
  EXPECT_EQ(problems(kernel("  %6 = mul %1, %2 : f32")), std::vector<std::string>{});
  EXPECT_EQ(problems(kernel("  barrier", kGroupHeader, "reduction")), std::vector<std::string>{});
  EXPECT_EQ(problems(kernel("  %6 = simd.sum %1 : f32", "  rule exactly 256\n", "tiled")),
            std::vector<std::string>{});
}

TEST(IrVerifier, ReportsLocations) {
  expect_problem(kernel("  %6 = add %1, %4 : f32  ; kernels/ops/x.cpp:7"),
                 "kernels/ops/x.cpp:7: add: types differ (f32, i32, f32)");
  expect_problem(kernel("  %6 = add %1, %4 : f32"), "add: types differ (f32, i32, f32)");
}

TEST(IrVerifier, ValueIdsAreDefinedOnceAndInRange) {
  expect_problem(kernel("  %40 = add %1, %2 : f32"),
                 "defines %40, but the kernel has only 32 values");
  expect_problem(kernel("  %6 = add %1, %40 : f32"), "uses %40, but the kernel has only 32 values");
  expect_problem(kernel("  %1 = add %1, %2 : f32"), "defines %1, which is already defined");
  expect_problem(kernel("  %6 = add %1, %7 : f32\n  %7 = add %1, %2 : f32"),
                 "uses %7 before its definition");
}

TEST(IrVerifier, ValuesOfANestedBlockAreNotVisibleAfterIt) {
  expect_problem(kernel("  for %6 = %0 to %5 step %5 : u32 {\n"
                        "    %7 = add %1, %2 : f32\n"
                        "  }\n"
                        "  %8 = add %7, %2 : f32"),
                 "uses %7 outside the block that defines it");
  expect_problem(kernel("  for %6 = %0 to %5 step %5 : u32 {\n"
                        "    barrier\n"
                        "  }\n"
                        "  %8 = add %6, %0 : u32",
                        kGroupHeader, "reduction"),
                 "uses %6 outside the block that defines it");
  expect_problem(kernel("  if %3 {\n"
                        "    %7 = add %1, %2 : f32\n"
                        "  } else {\n"
                        "    %8 = add %7, %2 : f32\n"
                        "  }"),
                 "uses %7 outside the block that defines it");
}

TEST(IrVerifier, OperandCountsAndResults) {
  expect_problem(kernel("  %6 = add %1 : f32"), "add takes 2 operands, got 1");
  expect_problem(kernel("  add %1, %2 : f32"), "add defines no value");
  expect_problem(kernel("  %6 = store out[%0], %1 : f32"), "store cannot define a value");
}

// A loop's ivalue says whether it stays rolled: 0 or 1, nothing else.
TEST(IrVerifier, ALoopIsRolledOrNot) {
  const std::string text =
      kernel("  for %6 = %0 to %5 step %5 rolled : u32 {\n    store out[%6], %1 : f32\n  }");
  EXPECT_EQ(problems(text), std::vector<std::string>{});
  ir::Kernel k = parse_kernel(text);
  for (ir::Op& op : k.body.ops) {
    if (op.kind == ir::OpKind::For) op.ivalue = 2;
  }
  EXPECT_EQ(verify(k),
            (std::vector<std::string>{"kernel k: for: ivalue 2 is neither 0 nor 1 (rolled)"}));
}

TEST(IrVerifier, ArithmeticTypes) {
  expect_problem(kernel("  %6 = add %1, %2 : f16"), "add: types differ (f32, f32, f16)");
  expect_problem(kernel("  %6 = and %1, %2 : f32"), "and: needs integers or bools, got f32");
  expect_problem(kernel("  %6 = not %1 : f32"), "not: needs integers or bools, got f32");
  expect_problem(kernel("  %6 = shl %3, %3 : bool"), "shl: needs integers, got bool");
  expect_problem(kernel("  %6 = rem %3, %3 : bool"), "rem: needs numbers, got bool");
  expect_problem(kernel("  %6 = sqrt %4 : i32"), "sqrt: needs floats, got i32");
  expect_problem(kernel("  %6 = floor %5 : u32"), "floor: needs floats, got u32");
  expect_problem(kernel("  %6 = neg %5 : u32"), "neg: needs a float or signed integer, got u32");
  expect_problem(kernel("  %6 = pow %4, %4 : i32"), "pow: needs floats, got i32");
  expect_problem(kernel("  %6 = fma %4, %4, %4 : i32"), "fma: needs floats, got i32");
  EXPECT_EQ(problems(kernel("  %6 = neg %4 : i32\n  %7 = xor %3, %3 : bool")),
            std::vector<std::string>{});
}

TEST(IrVerifier, CompareSelectCastTypes) {
  expect_problem(kernel("  %6 = lt %1, %2 : u32"), "lt: result must be bool, got u32");
  expect_problem(kernel("  %6 = eq %1, %4 : bool"), "eq: types differ (f32, i32)");
  expect_problem(kernel("  %6 = select %0, %1, %2 : f32"),
                 "select: condition must be bool, got u32");
  expect_problem(kernel("  %6 = select %3, %1, %4 : f32"), "select: types differ (f32, i32, f32)");
  expect_problem(kernel("  %6 = bitcast %1 : f16"), "bitcast: f32 and f16 differ in size");
  EXPECT_EQ(problems(kernel("  %6 = cast %3 : f16\n  %7 = bitcast %4 : u32")),
            std::vector<std::string>{});
}

TEST(IrVerifier, Specializations) {
  expect_problem(kernel("  %6 = specialize %0 : bool"),
                 "specialize: condition must be bool, got u32");
  expect_problem(kernel("  %6 = specialize %3 : u32"), "specialize: result must be bool, got u32");
  EXPECT_EQ(problems(kernel("  %6 = specialize %3 : bool")), std::vector<std::string>{});
}

TEST(IrVerifier, TensorAccess) {
  expect_problem(kernel("  store inp[%0], %1 : f32"), "stores into input tensor 'inp'");
  expect_problem(kernel("  %6 = load alpha[%0] : f32"), "load: target is not a tensor parameter");
  expect_problem(kernel("  %6 = load inp[%1] : f32"), "load: index must be an integer, got f32");
  expect_problem(kernel("  %6 = load inp[%0] : f16"), "load: types differ (f32, f16)");
  expect_problem(kernel("  store halves[%0], %1 : f32"), "store: types differ (f16, f32, f32)");
}

// A swizzled allocation is whole rows of at least eight 16-byte chunks, a power of two.
TEST(IrVerifier, SwizzledRows) {
  expect_problem(
      kernel("  barrier", "  shared shm0: f16[128] swizzle 48\n" + std::string(kGroupHeader),
             "reduction"),
      "shared shm0: a swizzled row must be a power of two of at least 128 bytes, not "
      "48 elements of f16 (96 bytes)");
  expect_problem(
      kernel("  barrier", "  shared shm0: f32[128] swizzle 16\n" + std::string(kGroupHeader),
             "reduction"),
      "shared shm0: a swizzled row must be a power of two of at least 128 bytes, not "
      "16 elements of f32 (64 bytes)");
  expect_problem(
      kernel("  barrier", "  shared shm0: bf16[96] swizzle 64\n" + std::string(kGroupHeader),
             "reduction"),
      "shared shm0: 96 elements are not whole swizzled rows of 64");
  EXPECT_EQ(problems(kernel("  barrier",
                            "  shared shm0: u8[256] swizzle 128\n" + std::string(kGroupHeader),
                            "reduction")),
            std::vector<std::string>{});
}

// An overlay reuses an earlier allocation that is no overlay, and is a plain allocation itself.
TEST(IrVerifier, Overlays) {
  const auto with = [](std::string_view shared) {
    return kernel("  barrier", std::string(shared) + std::string(kGroupHeader), "reduction");
  };
  EXPECT_EQ(problems(with("  shared shm0: bf16[64]\n  shared shm1: f32[32] overlays shm0\n")),
            std::vector<std::string>{});
  expect_problem(with("  shared shm0: bf16[64]\n  shared shm1: f32[16] overlays shm0\n"
                      "  shared shm2: u32[8] overlays shm1\n"),
                 "shared shm2: overlays shm1, itself an overlay (overlay shm0 instead)");
  expect_problem(with("  shared shm0: bf16[1024]\n"
                      "  shared shm1: bf16[1024] swizzle 64 overlays shm0\n"),
                 "shared shm1: an overlay is neither a ring nor swizzled");
}

TEST(IrVerifier, SharedAccess) {
  const std::string header = "  shared shm0: f32[64]\n" + std::string(kGroupHeader);
  expect_problem(kernel("  %6 = shared.load @shm0[%0] : u32", header, "reduction"),
                 "shared.load: types differ (f32, u32)");
  expect_problem(kernel("  shared.store @shm0[%1], %1 : f32", header, "reduction"),
                 "shared.store: index must be an integer, got f32");
  expect_problem(kernel("  shared.store @shm0[%0], %4 : i32", header, "reduction"),
                 "shared.store: types differ (f32, i32, i32)");
}

TEST(IrVerifier, VectorAccesses) {
  const std::string header = "  shared shm0: f32[64]\n" + std::string(kGroupHeader);
  EXPECT_EQ(problems(kernel("  %6 = load inp[%0] : f32x4\n"
                            "  %7 = extract %6, 3 : f32\n"
                            "  store out[%0], %7, %1 : f32x2\n"
                            "  shared.store @shm0[%0], %7, %7, %1, %1 : f32x4\n"
                            "  %8 = shared.load @shm0[%0] : f32x2\n"
                            "  %9 = cast %7 : f16\n"
                            "  store halves[%0], %9, %9, %9, %9, %9, %9, %9, %9 : f16x8",
                            header, "reduction")),
            std::vector<std::string>{});
  expect_problem(kernel("  %6 = load inp[%0] : f32x3"),
                 "load: 3 lanes; a vector access has 2, 4, "
                 "8 or 16");
  expect_problem(kernel("  %6 = load inp[%0] : f32x8"),
                 "load: f32x8 is 32 bytes, wider than the 16 a vector access allows");
  expect_problem(kernel("  %6 = add %1, %2 : f32x2"), "add cannot be a vector op (it has 2 lanes)");
  expect_problem(kernel("  %6 = atomic.add out[%0], %1 : f32x2"),
                 "atomic.add cannot be a vector op (it has 2 lanes)");
  expect_problem(kernel("  %6 = load inp[%0] : f32x4\n  %7 = add %6, %1 : f32"),
                 "uses vector %6 (f32x4) as a scalar (read its lanes with extract)");
  expect_problem(kernel("  %6 = load inp[%0] : f32x4\n  store out[%0], %6, %1 : f32x2"),
                 "uses vector %6 (f32x4) as a scalar (read its lanes with extract)");
  expect_problem(kernel("  %6 = extract %1, 0 : f32"), "extract of %1, which is not a vector");
  expect_problem(kernel("  %6 = load inp[%0] : f32x4\n  %7 = extract %6, 4 : f32"),
                 "extract of lane 4 of %6, which has 4 lanes");
  expect_problem(kernel("  %6 = load inp[%0] : f32x4\n  %7 = extract %6, -1 : f32"),
                 "extract of lane -1 of %6, which has 4 lanes");
  expect_problem(kernel("  %6 = load inp[%0] : f32x2\n  %7 = extract %6, 1 : f16"),
                 "extract: types differ (f32, f16)");
  expect_problem(kernel("  store out[%0], %1, %1, %1 : f32x4"), "store takes 5 operands, got 4");
  expect_problem(kernel("  store out[%0], %1, %4 : f32x2"),
                 "store: types differ (f32, f32, f32, i32)");
  expect_problem(kernel("  %6 = load inp[%0] : f32x2\n  %7 = extract %6, 0 : f32x2"),
                 "extract cannot be a vector op (it has 2 lanes)");
}

TEST(IrVerifier, Atomics) {
  expect_problem(kernel("  %6 = cast %1 : f16\n  %7 = atomic.add halves[%0], %6 : f16"),
                 "atomic.add: works on f32, i32 and u32 only, got f16");
  expect_problem(kernel("  %6 = atomic.and out[%0], %1 : f32"),
                 "atomic.and: works on integers only, got f32");
  expect_problem(kernel("  %6 = atomic.xchg out[%0], %1 : f32"),
                 "atomic.xchg: works on integers only, got f32");
  expect_problem(kernel("  %6 = atomic.add inp[%0], %1 : f32"),
                 "atomic.add: target 'inp' is not an output tensor");
  expect_problem(kernel("  %6 = atomic.max counts[%0], %1 : u32"),
                 "atomic.max: types differ (u32, f32, u32)");
  EXPECT_EQ(problems(kernel("  atomic.or counts[%0], %5 : u32")), std::vector<std::string>{});
}

TEST(IrVerifier, ConstexprAndBuiltins) {
  expect_problem(kernel("  %6 = constexpr inp : f32"),
                 "constexpr: refers to a parameter that is not a constexpr");
  expect_problem(kernel("  %6 = constexpr n : i32"),
                 "constexpr: type i32 differs from constexpr 'n' of type u32");
  expect_problem(kernel("  %6 = builtin thread_id.3 : u32"), "builtin: thread_id has axis 3");
  expect_problem(kernel("  %6 = builtin lane : i32"), "builtin: type must be u32, got i32");
  expect_problem(kernel("  %6 = const 2 : bool"), "const: a bool constant must be 0 or 1, got 2");
}

TEST(IrVerifier, Variables) {
  expect_problem(kernel("  %6 = var.load %1 : f32"), "var.load of %1, which is not a variable");
  expect_problem(kernel("  %6 = var %1 : f32\n  var.store %6, %4 : f32"),
                 "var.store: types differ (f32, i32, f32)");
  expect_problem(kernel("  %6 = var %1 : f32\n  %7 = add %6, %1 : f32"),
                 "uses variable %6 as a value (read it with var.load)");
  expect_problem(kernel("  %6 = var %1 : f16"), "var: types differ (f32, f16)");
}

TEST(IrVerifier, Loops) {
  expect_problem(
      kernel("  for %6 = %1 to %1 step %1 : f32 {\n    barrier\n  }", kGroupHeader, "reduction"),
      "for: bounds must be integers, got f32");
  expect_problem(
      kernel("  for %6 = %0 to %4 step %0 : u32 {\n    barrier\n  }", kGroupHeader, "reduction"),
      "for: types differ (u32, i32, u32, u32)");
  expect_problem(kernel("  for %6 = %0 to %5 step %5 : u32 {\n  }"), "empty loop body");
}

TEST(IrVerifier, Branches) {
  expect_problem(kernel("  if %0 {\n    store out[%0], %1 : f32\n  }"),
                 "if: condition must be bool, got u32");
  expect_problem(kernel("  if %3 {\n  }"), "empty if: both blocks are empty");
  EXPECT_EQ(problems(kernel("  if %3 {\n  } else {\n    %6 = add %1, %2 : f32\n  }")),
            std::vector<std::string>{});
}

TEST(IrVerifier, KernelStructure) {
  expect_problems(
      "kernel k dtype=f32 mode=elementwise  ; kernels/k.cpp:3\n  param out out: f32\n{\n}\n",
      {"kernels/k.cpp:3: empty kernel body", "kernels/k.cpp:3: writes no output"});
}

TEST(IrVerifier, DeclarationsAreUnique) {
  expect_problem(kernel("", "  param in inp: f16\n"), "parameter 'inp' declared twice");
  expect_problem(kernel("", "  shared s: f32[4]\n  shared s: f32[8]\n" + std::string(kGroupHeader),
                        "reduction"),
                 "shared allocation 's' declared twice");
  expect_problem(kernel("", "  shared s: f32[0]\n" + std::string(kGroupHeader), "reduction"),
                 "shared allocation 's' has size 0");
}

TEST(IrVerifier, KernelMustWriteAnOutput) {
  expect_problems(
      "kernel k dtype=f32 mode=elementwise\n"
      "  param in inp: f32\n"
      "  values 1\n"
      "{\n"
      "  %0 = builtin global_id.x : u32\n"
      "}\n",
      {"has no output parameter", "writes no output"});
  expect_problem(
      "kernel k dtype=f32 mode=reduction\n"
      "  param out out: f32\n"
      "  shared s: f32[32]\n"
      "  rule multiple_of 32\n"
      "  values 2\n"
      "{\n"
      "  %0 = builtin thread_id.x : u32\n"
      "  %1 = shared.load @s[%0] : f32\n"
      "  shared.store @s[%0], %1 : f32\n"
      "}\n",
      "writes no output");
}

TEST(IrVerifier, GroupOperationsNeedAGroupSizeMultipleOf32) {
  constexpr std::string_view kMessage =
      "uses simdgroup/threadgroup operations but its dispatch contract does not require a group "
      "size that is a multiple of 32";
  expect_problem(kernel("  barrier", "", "reduction"), kMessage);
  expect_problem(kernel("  %6 = simd.max %1 : f32", "  rule multiple_of 48\n", "reduction"),
                 kMessage);
  expect_problem(kernel("  %6 = reduce.sum %1 : f32", "  rule at_least 64\n", "reduction"),
                 kMessage);
  expect_problem(kernel("  %6 = simd.sum %1 : f32", "  rule multiple_of n\n", "reduction"),
                 kMessage);
  expect_problem(kernel("", "  shared s: f32[4]\n", "tiled"), kMessage);
}

TEST(IrVerifier, GroupOperationsAreNotElementwise) {
  expect_problem(kernel("  barrier", kGroupHeader),
                 "uses simdgroup/threadgroup operations but its dispatch mode is elementwise");
}

TEST(IrVerifier, SizeRules) {
  expect_problem(kernel("", "  rule at_most x\n"),
                 "rule at_most x: 'x' is not an integer constexpr parameter");
  expect_problem(kernel("", "  rule at_most alpha\n"),
                 "rule at_most alpha: 'alpha' is not an integer constexpr parameter");
  expect_problem(kernel("", "  rule exactly n/0\n"),
                 "rule exactly n: the divisor 0 must be positive");
  expect_problem(kernel("", "  rule multiple_of 0\n"),
                 "rule multiple_of 0: the bound must be positive");
}

TEST(IrVerifier, VerifyOrThrowJoinsEveryProblem) {
  EXPECT_NO_THROW(verify_or_throw(parse_kernel(kernel(""))));
  const Kernel bad = parse_kernel(kernel("  %6 = add %1, %4 : f32\n  %7 = sqrt %4 : i32"));
  try {
    verify_or_throw(bad);
    FAIL() << "no throw";
  } catch (const IrError& e) {
    EXPECT_STREQ(e.what(),
                 "kernel k: add: types differ (f32, i32, f32)\n"
                 "kernel k: sqrt: needs floats, got i32");
  }
}

}  // namespace
}  // namespace iron::ir
