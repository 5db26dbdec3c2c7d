/// vectorize: strided row loops and grid-stride loops become versioned vector loops (IR in, IR
/// out), every shape outside the proof is left alone, and every library kernel test gives the
/// same outputs on the simulator before and after the pass.
#include "iron/codegen/passes/vectorize.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "iron/codegen/pipeline.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/runtime/sim.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"
#include "vectorize_test_support.hpp"

namespace iron::vectorize_test {
namespace {

using codegen::TargetProfile;
using namespace vectorize_support;

TargetProfile with_vector_bytes(std::uint32_t bytes) {
  TargetProfile target;
  target.max_vector_bytes = bytes;
  return target;
}

// Softmax's last loop, out[base + j] = exp(x[base + j] - row_max): f32 in 16 bytes (4 lanes)
// when n % 4 == 0, else in 8 bytes when n % 2 == 0, else the original loop.
TEST(PassVectorize, SoftmaxLikeLoopIsVersionedF32) {
  expect_vectorized(R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = cast %3 : f32
  %6 = reduce.max %5 : f32
  for %7 = %3 to %0 step %4 : u32 {
    %8 = add %2, %7 : u32
    %9 = load x[%8] : f32
    %10 = sub %9, %6 : f32
    %11 = exp %10 : f32
    store out[%8], %11 : f32
  }
)",
                    12, R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = cast %3 : f32
  %6 = reduce.max %5 : f32
  %12 = const 4 : u32
  %13 = rem %0, %12 : u32
  %14 = const 0 : u32
  %15 = eq %13, %14 : bool
  if %15 {
    %16 = div %0, %12 : u32
    for %17 = %3 to %16 step %4 : u32 {
      %18 = mul %17, %12 : u32
      %19 = add %2, %18 : u32
      %20 = load x[%19] : f32x4
      %21 = extract %20, 0 : f32
      %22 = extract %20, 1 : f32
      %23 = extract %20, 2 : f32
      %24 = extract %20, 3 : f32
      %25 = sub %21, %6 : f32
      %26 = exp %25 : f32
      %27 = sub %22, %6 : f32
      %28 = exp %27 : f32
      %29 = sub %23, %6 : f32
      %30 = exp %29 : f32
      %31 = sub %24, %6 : f32
      %32 = exp %31 : f32
      store out[%19], %26, %28, %30, %32 : f32x4
    }
  } else {
    %33 = const 2 : u32
    %34 = rem %0, %33 : u32
    %35 = const 0 : u32
    %36 = eq %34, %35 : bool
    if %36 {
      %37 = div %0, %33 : u32
      for %38 = %3 to %37 step %4 : u32 {
        %39 = mul %38, %33 : u32
        %40 = add %2, %39 : u32
        %41 = load x[%40] : f32x2
        %42 = extract %41, 0 : f32
        %43 = extract %41, 1 : f32
        %44 = sub %42, %6 : f32
        %45 = exp %44 : f32
        %46 = sub %43, %6 : f32
        %47 = exp %46 : f32
        store out[%40], %45, %47 : f32x2
      }
    } else {
      for %7 = %3 to %0 step %4 : u32 {
        %8 = add %2, %7 : u32
        %9 = load x[%8] : f32
        %10 = sub %9, %6 : f32
        %11 = exp %10 : f32
        store out[%8], %11 : f32
      }
    }
  }
)",
                    48);
}

// rms_norm's two loops: a sum of squares, then x[base + j] * inv_rms * w[j]. The literal end
// 64 is a multiple of 4, so no version is needed. Both index math users share one vector index.
TEST(PassVectorize, RmsNormLikeLoopsWithAnAccumulatorAndASecondTensor) {
  expect_vectorized(R"(
  %0 = const 64 : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = const 0 : f32
  %6 = var %5 : f32
  for %7 = %3 to %0 step %4 : u32 {
    %8 = add %2, %7 : u32
    %9 = load x[%8] : f32
    %10 = mul %9, %9 : f32
    %11 = var.load %6 : f32
    %12 = add %11, %10 : f32
    var.store %6, %12 : f32
  }
  %13 = var.load %6 : f32
  %14 = reduce.sum %13 : f32
  %15 = rsqrt %14 : f32
  for %16 = %3 to %0 step %4 : u32 {
    %17 = load w[%16] : f32
    %18 = add %2, %16 : u32
    %19 = load x[%18] : f32
    %20 = mul %19, %15 : f32
    %21 = mul %20, %17 : f32
    store out[%18], %21 : f32
  }
)",
                    22, R"(
  %0 = const 64 : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = const 0 : f32
  %6 = var %5 : f32
  %22 = const 4 : u32
  %23 = const 16 : u32
  for %24 = %3 to %23 step %4 : u32 {
    %25 = mul %24, %22 : u32
    %26 = add %2, %25 : u32
    %27 = load x[%26] : f32x4
    %28 = extract %27, 0 : f32
    %29 = extract %27, 1 : f32
    %30 = extract %27, 2 : f32
    %31 = extract %27, 3 : f32
    %32 = mul %28, %28 : f32
    %33 = var.load %6 : f32
    %34 = add %33, %32 : f32
    var.store %6, %34 : f32
    %35 = mul %29, %29 : f32
    %36 = var.load %6 : f32
    %37 = add %36, %35 : f32
    var.store %6, %37 : f32
    %38 = mul %30, %30 : f32
    %39 = var.load %6 : f32
    %40 = add %39, %38 : f32
    var.store %6, %40 : f32
    %41 = mul %31, %31 : f32
    %42 = var.load %6 : f32
    %43 = add %42, %41 : f32
    var.store %6, %43 : f32
  }
  %13 = var.load %6 : f32
  %14 = reduce.sum %13 : f32
  %15 = rsqrt %14 : f32
  %44 = const 4 : u32
  %45 = const 16 : u32
  for %46 = %3 to %45 step %4 : u32 {
    %47 = mul %46, %44 : u32
    %48 = load w[%47] : f32x4
    %49 = extract %48, 0 : f32
    %50 = extract %48, 1 : f32
    %51 = extract %48, 2 : f32
    %52 = extract %48, 3 : f32
    %53 = add %2, %47 : u32
    %54 = load x[%53] : f32x4
    %55 = extract %54, 0 : f32
    %56 = extract %54, 1 : f32
    %57 = extract %54, 2 : f32
    %58 = extract %54, 3 : f32
    %59 = mul %55, %15 : f32
    %60 = mul %59, %49 : f32
    %61 = mul %56, %15 : f32
    %62 = mul %61, %50 : f32
    %63 = mul %57, %15 : f32
    %64 = mul %63, %51 : f32
    %65 = mul %58, %15 : f32
    %66 = mul %65, %52 : f32
    store out[%53], %60, %62, %64, %66 : f32x4
  }
)",
                    67);
}

// f16: 8 lanes in 16 bytes, then 4 lanes in 8 bytes.
TEST(PassVectorize, F16UsesEightLanesThenFour) {
  expect_vectorized(R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = load xh[%6] : f16
    %8 = neg %7 : f16
    store outh[%6], %8 : f16
  }
)",
                    9, R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %9 = const 8 : u32
  %10 = rem %0, %9 : u32
  %11 = const 0 : u32
  %12 = eq %10, %11 : bool
  if %12 {
    %13 = div %0, %9 : u32
    for %14 = %3 to %13 step %4 : u32 {
      %15 = mul %14, %9 : u32
      %16 = add %2, %15 : u32
      %17 = load xh[%16] : f16x8
      %18 = extract %17, 0 : f16
      %19 = extract %17, 1 : f16
      %20 = extract %17, 2 : f16
      %21 = extract %17, 3 : f16
      %22 = extract %17, 4 : f16
      %23 = extract %17, 5 : f16
      %24 = extract %17, 6 : f16
      %25 = extract %17, 7 : f16
      %26 = neg %18 : f16
      %27 = neg %19 : f16
      %28 = neg %20 : f16
      %29 = neg %21 : f16
      %30 = neg %22 : f16
      %31 = neg %23 : f16
      %32 = neg %24 : f16
      %33 = neg %25 : f16
      store outh[%16], %26, %27, %28, %29, %30, %31, %32, %33 : f16x8
    }
  } else {
    %34 = const 4 : u32
    %35 = rem %0, %34 : u32
    %36 = const 0 : u32
    %37 = eq %35, %36 : bool
    if %37 {
      %38 = div %0, %34 : u32
      for %39 = %3 to %38 step %4 : u32 {
        %40 = mul %39, %34 : u32
        %41 = add %2, %40 : u32
        %42 = load xh[%41] : f16x4
        %43 = extract %42, 0 : f16
        %44 = extract %42, 1 : f16
        %45 = extract %42, 2 : f16
        %46 = extract %42, 3 : f16
        %47 = neg %43 : f16
        %48 = neg %44 : f16
        %49 = neg %45 : f16
        %50 = neg %46 : f16
        store outh[%41], %47, %48, %49, %50 : f16x4
      }
    } else {
      for %5 = %3 to %0 step %4 : u32 {
        %6 = add %2, %5 : u32
        %7 = load xh[%6] : f16
        %8 = neg %7 : f16
        store outh[%6], %8 : f16
      }
    }
  }
)",
                    51);
}

// bf16 with a max accumulator and operands in the other order (j + base, max(x, acc)).
TEST(PassVectorize, Bf16MaxAccumulatorInEightLanes) {
  expect_vectorized(R"(
  %0 = const 256 : u32
  %1 = builtin group_id.x : u32
  %2 = mul %0, %1 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = const -inf : bf16
  %6 = var %5 : bf16
  for %7 = %3 to %0 step %4 : u32 {
    %8 = add %7, %2 : u32
    %9 = load xb[%8] : bf16
    %10 = var.load %6 : bf16
    %11 = max %9, %10 : bf16
    var.store %6, %11 : bf16
  }
  %12 = var.load %6 : bf16
  %13 = reduce.max %12 : bf16
  %14 = cast %13 : f32
  store out[%1], %14 : f32
)",
                    15, R"(
  %0 = const 256 : u32
  %1 = builtin group_id.x : u32
  %2 = mul %0, %1 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = const -inf : bf16
  %6 = var %5 : bf16
  %15 = const 8 : u32
  %16 = const 32 : u32
  for %17 = %3 to %16 step %4 : u32 {
    %18 = mul %17, %15 : u32
    %19 = add %18, %2 : u32
    %20 = load xb[%19] : bf16x8
    %21 = extract %20, 0 : bf16
    %22 = extract %20, 1 : bf16
    %23 = extract %20, 2 : bf16
    %24 = extract %20, 3 : bf16
    %25 = extract %20, 4 : bf16
    %26 = extract %20, 5 : bf16
    %27 = extract %20, 6 : bf16
    %28 = extract %20, 7 : bf16
    %29 = var.load %6 : bf16
    %30 = max %21, %29 : bf16
    var.store %6, %30 : bf16
    %31 = var.load %6 : bf16
    %32 = max %22, %31 : bf16
    var.store %6, %32 : bf16
    %33 = var.load %6 : bf16
    %34 = max %23, %33 : bf16
    var.store %6, %34 : bf16
    %35 = var.load %6 : bf16
    %36 = max %24, %35 : bf16
    var.store %6, %36 : bf16
    %37 = var.load %6 : bf16
    %38 = max %25, %37 : bf16
    var.store %6, %38 : bf16
    %39 = var.load %6 : bf16
    %40 = max %26, %39 : bf16
    var.store %6, %40 : bf16
    %41 = var.load %6 : bf16
    %42 = max %27, %41 : bf16
    var.store %6, %42 : bf16
    %43 = var.load %6 : bf16
    %44 = max %28, %43 : bf16
    var.store %6, %44 : bf16
  }
  %12 = var.load %6 : bf16
  %13 = reduce.max %12 : bf16
  %14 = cast %13 : f32
  store out[%1], %14 : f32
)",
                    45);
}

// A literal end of 1026 is not a multiple of 4 but is one of 2: one 8-byte loop, no `if`. The
// constant in the body is the same for every lane and is built once.
TEST(PassVectorize, LiteralEndTakesTheWidestWidthThatDividesIt) {
  expect_vectorized(R"(
  %0 = const 1026 : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = load x[%6] : f32
    %8 = const 2 : f32
    %9 = mul %7, %8 : f32
    store out[%6], %9 : f32
  }
)",
                    10, R"(
  %0 = const 1026 : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %10 = const 2 : u32
  %11 = const 513 : u32
  for %12 = %3 to %11 step %4 : u32 {
    %13 = mul %12, %10 : u32
    %14 = add %2, %13 : u32
    %15 = load x[%14] : f32x2
    %16 = extract %15, 0 : f32
    %17 = extract %15, 1 : f32
    %18 = const 2 : f32
    %19 = mul %16, %18 : f32
    %20 = mul %17, %18 : f32
    store out[%14], %19, %20 : f32x2
  }
)",
                    21);
}

// simplify writes base = group_id * 4096 as a shift: still a multiple of every width. The loop
// strides along axis y; w[j] is indexed by the induction value alone.
TEST(PassVectorize, ShiftedBaseOnAnotherAxis) {
  expect_vectorized(R"(
  %0 = const 512 : u32
  %1 = builtin group_id.y : u32
  %2 = const 12 : u32
  %3 = shl %1, %2 : u32
  %4 = builtin thread_id.y : u32
  %5 = builtin group_size.y : u32
  for %6 = %4 to %0 step %5 : u32 {
    %7 = add %3, %6 : u32
    %8 = load x[%7] : f32
    %9 = load w[%6] : f32
    %10 = add %8, %9 : f32
    store out[%7], %10 : f32
  }
)",
                    11, R"(
  %0 = const 512 : u32
  %1 = builtin group_id.y : u32
  %2 = const 12 : u32
  %3 = shl %1, %2 : u32
  %4 = builtin thread_id.y : u32
  %5 = builtin group_size.y : u32
  %11 = const 4 : u32
  %12 = const 128 : u32
  for %13 = %4 to %12 step %5 : u32 {
    %14 = mul %13, %11 : u32
    %15 = add %3, %14 : u32
    %16 = load x[%15] : f32x4
    %17 = extract %16, 0 : f32
    %18 = extract %16, 1 : f32
    %19 = extract %16, 2 : f32
    %20 = extract %16, 3 : f32
    %21 = load w[%14] : f32x4
    %22 = extract %21, 0 : f32
    %23 = extract %21, 1 : f32
    %24 = extract %21, 2 : f32
    %25 = extract %21, 3 : f32
    %26 = add %17, %22 : f32
    %27 = add %18, %23 : f32
    %28 = add %19, %24 : f32
    %29 = add %20, %25 : f32
    store out[%15], %26, %27, %28, %29 : f32x4
  }
)",
                    30);
}

// A target whose widest access is 8 bytes gets the 8-byte version only.
TEST(PassVectorize, TargetLimitsTheVectorWidth) {
  expect_vectorized(R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = cast %3 : f32
  %6 = reduce.max %5 : f32
  for %7 = %3 to %0 step %4 : u32 {
    %8 = add %2, %7 : u32
    %9 = load x[%8] : f32
    %10 = sub %9, %6 : f32
    %11 = exp %10 : f32
    store out[%8], %11 : f32
  }
)",
                    12, R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = cast %3 : f32
  %6 = reduce.max %5 : f32
  %12 = const 2 : u32
  %13 = rem %0, %12 : u32
  %14 = const 0 : u32
  %15 = eq %13, %14 : bool
  if %15 {
    %16 = div %0, %12 : u32
    for %17 = %3 to %16 step %4 : u32 {
      %18 = mul %17, %12 : u32
      %19 = add %2, %18 : u32
      %20 = load x[%19] : f32x2
      %21 = extract %20, 0 : f32
      %22 = extract %20, 1 : f32
      %23 = sub %21, %6 : f32
      %24 = exp %23 : f32
      %25 = sub %22, %6 : f32
      %26 = exp %25 : f32
      store out[%19], %24, %26 : f32x2
    }
  } else {
    for %7 = %3 to %0 step %4 : u32 {
      %8 = add %2, %7 : u32
      %9 = load x[%8] : f32
      %10 = sub %9, %6 : f32
      %11 = exp %10 : f32
      store out[%8], %11 : f32
    }
  }
)",
                    27, with_vector_bytes(8));
}

/// The start of every bail-out kernel: %0 = n, %2 = base = group_id * n, %3 = tid, %4 = tpg.
constexpr std::string_view kRow = R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
)";

struct BailOut {
  std::string_view why;
  std::string_view body;  ///< after kRow
  int values;
};

// Every shape outside the proof leaves the kernel exactly as it was.
TEST(PassVectorize, LeavesEveryOtherShapeAlone) {
  const BailOut cases[] = {
      {"a barrier in the body", R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = load x[%6] : f32
    barrier
    store out[%6], %7 : f32
  }
)",
       8},
      {"an atomic in the body", R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = const 1 : u32
    %8 = atomic.add outu[%6], %7 : u32
  }
)",
       9},
      {"a collective in the body", R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = load x[%6] : f32
    %8 = simd.sum %7 : f32
    store out[%6], %8 : f32
  }
)",
       9},
      {"a branch in the body", R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = load x[%6] : f32
    %8 = const 0 : f32
    %9 = gt %7, %8 : bool
    if %9 {
      store out[%6], %7 : f32
    }
  }
)",
       10},
      {"shared memory in the body", R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = load x[%6] : f32
    shared.store @s[%3], %7 : f32
    store out[%6], %7 : f32
  }
)",
       8},
      {"a strided index (j * 2)", R"(
  %5 = const 2 : u32
  for %6 = %3 to %0 step %4 : u32 {
    %7 = mul %6, %5 : u32
    %8 = load x[%7] : f32
    store out[%7], %8 : f32
  }
)",
       9},
      {"an index used as a value", R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    store outu[%6], %6 : u32
  }
)",
       7},
      {"a loop that does not start at thread_id", R"(
  %5 = const 0 : u32
  for %6 = %5 to %0 step %4 : u32 {
    %7 = add %2, %6 : u32
    %8 = load x[%7] : f32
    store out[%7], %8 : f32
  }
)",
       9},
      {"a step other than group_size", R"(
  %5 = const 32 : u32
  for %6 = %3 to %0 step %5 : u32 {
    %7 = add %2, %6 : u32
    %8 = load x[%7] : f32
    store out[%7], %8 : f32
  }
)",
       9},
      {"thread_id and group_size on different axes", R"(
  %5 = builtin group_size.y : u32
  for %6 = %3 to %0 step %5 : u32 {
    %7 = add %2, %6 : u32
    %8 = load x[%7] : f32
    store out[%7], %8 : f32
  }
)",
       9},
      {"an end that depends on the thread", R"(
  %5 = add %0, %3 : u32
  for %6 = %3 to %5 step %4 : u32 {
    %7 = add %2, %6 : u32
    %8 = load x[%7] : f32
    store out[%7], %8 : f32
  }
)",
       9},
      {"a literal end that no width divides", R"(
  %5 = const 1023 : u32
  for %6 = %3 to %5 step %4 : u32 {
    %7 = load x[%6] : f32
    store out[%6], %7 : f32
  }
)",
       8},
      {"a base not provably aligned (group_id * m)", R"(
  %5 = constexpr m : u32
  %6 = mul %1, %5 : u32
  for %7 = %3 to %0 step %4 : u32 {
    %8 = add %6, %7 : u32
    %9 = load x[%8] : f32
    store out[%8], %9 : f32
  }
)",
       10},
      {"a loop inside a branch that depends on the thread", R"(
  %5 = lt %3, %0 : bool
  if %5 {
    for %6 = %3 to %0 step %4 : u32 {
      %7 = add %2, %6 : u32
      %8 = load x[%7] : f32
      store out[%7], %8 : f32
    }
  }
)",
       9},
      {"a loop inside another loop", R"(
  %5 = const 0 : u32
  %6 = const 2 : u32
  %7 = const 1 : u32
  for %8 = %5 to %6 step %7 : u32 {
    for %9 = %3 to %0 step %4 : u32 {
      %10 = add %2, %9 : u32
      %11 = load x[%10] : f32
      store out[%10], %11 : f32
    }
  }
)",
       12},
      {"a value that depends on the thread", R"(
  %5 = cast %3 : f32
  for %6 = %3 to %0 step %4 : u32 {
    %7 = add %2, %6 : u32
    %8 = load x[%7] : f32
    %9 = add %8, %5 : f32
    store out[%7], %9 : f32
  }
)",
       10},
      {"a variable read as a value, not accumulated", R"(
  %5 = const 1 : f32
  %6 = var %5 : f32
  for %7 = %3 to %0 step %4 : u32 {
    %8 = add %2, %7 : u32
    %9 = load x[%8] : f32
    %10 = var.load %6 : f32
    %11 = mul %9, %10 : f32
    store out[%8], %11 : f32
  }
)",
       12},
      {"an accumulator combined by another reduction", R"(
  %5 = const 0 : f32
  %6 = var %5 : f32
  for %7 = %3 to %0 step %4 : u32 {
    %8 = add %2, %7 : u32
    %9 = load x[%8] : f32
    %10 = var.load %6 : f32
    %11 = max %10, %9 : f32
    var.store %6, %11 : f32
  }
  %12 = var.load %6 : f32
  %13 = reduce.sum %12 : f32
  store out[%1], %13 : f32
)",
       14},
      {"an accumulator read per thread after the loop", R"(
  %5 = const 0 : f32
  %6 = var %5 : f32
  for %7 = %3 to %0 step %4 : u32 {
    %8 = add %2, %7 : u32
    %9 = load x[%8] : f32
    %10 = var.load %6 : f32
    %11 = add %10, %9 : f32
    var.store %6, %11 : f32
  }
  %12 = var.load %6 : f32
  store out[%3], %12 : f32
)",
       13},
      {"a stored tensor read by the kernel", R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = load x[%6] : f32
    store out[%6], %7 : f32
  }
  %8 = load out[%3] : f32
  %9 = cast %8 : u32
  store outu[%3], %9 : u32
)",
       10},
      {"a stored tensor written elsewhere", R"(
  %5 = const 0 : f32
  store out[%3], %5 : f32
  for %6 = %3 to %0 step %4 : u32 {
    %7 = add %2, %6 : u32
    %8 = load x[%7] : f32
    store out[%7], %8 : f32
  }
)",
       9},
      {"a load of an output", R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = load out[%6] : f32
    %8 = cast %7 : f16
    store outh[%6], %8 : f16
  }
)",
       9},
      {"no memory access", R"(
  %5 = const 0 : f32
  %6 = var %5 : f32
  for %7 = %3 to %0 step %4 : u32 {
    %8 = const 1 : f32
    %9 = var.load %6 : f32
    %10 = add %9, %8 : f32
    var.store %6, %10 : f32
  }
  %11 = var.load %6 : f32
  %12 = reduce.sum %11 : f32
  store out[%1], %12 : f32
)",
       13},
  };
  for (const BailOut& c : cases) {
    SCOPED_TRACE(c.why);
    expect_unchanged(std::string(kRow) + std::string(c.body), c.values);
  }
}

// One element per thread: widening it would change the dispatch contract, so it stays scalar.
TEST(PassVectorize, LeavesElementwiseKernelsAlone) {
  expect_unchanged(R"(
  %0 = builtin global_id.x : u32
  %1 = constexpr n : u32
  %2 = lt %0, %1 : bool
  if %2 {
    %3 = load x[%0] : f32
    %4 = exp %3 : f32
    store out[%0], %4 : f32
  }
)",
                   5);
}

// A grid-stride copy, `for i = global_id to n step grid_groups * group_size`: versioned like a
// row loop, each thread of the grid taking 4 (then 2) consecutive elements per iteration.
TEST(PassVectorize, GridStrideCopyIsVersioned) {
  expect_vectorized(R"(
  %0 = constexpr n : u32
  %1 = builtin group_size.x : u32
  %2 = builtin grid_groups.x : u32
  %3 = mul %2, %1 : u32
  %4 = builtin global_id.x : u32
  for %5 = %4 to %0 step %3 : u32 {
    %6 = load x[%5] : f32
    store out[%5], %6 : f32
  }
)",
                    7, R"(
  %0 = constexpr n : u32
  %1 = builtin group_size.x : u32
  %2 = builtin grid_groups.x : u32
  %3 = mul %2, %1 : u32
  %4 = builtin global_id.x : u32
  %7 = const 4 : u32
  %8 = rem %0, %7 : u32
  %9 = const 0 : u32
  %10 = eq %8, %9 : bool
  if %10 {
    %11 = div %0, %7 : u32
    for %12 = %4 to %11 step %3 : u32 {
      %13 = mul %12, %7 : u32
      %14 = load x[%13] : f32x4
      %15 = extract %14, 0 : f32
      %16 = extract %14, 1 : f32
      %17 = extract %14, 2 : f32
      %18 = extract %14, 3 : f32
      store out[%13], %15, %16, %17, %18 : f32x4
    }
  } else {
    %19 = const 2 : u32
    %20 = rem %0, %19 : u32
    %21 = const 0 : u32
    %22 = eq %20, %21 : bool
    if %22 {
      %23 = div %0, %19 : u32
      for %24 = %4 to %23 step %3 : u32 {
        %25 = mul %24, %19 : u32
        %26 = load x[%25] : f32x2
        %27 = extract %26, 0 : f32
        %28 = extract %26, 1 : f32
        store out[%25], %27, %28 : f32x2
      }
    } else {
      for %5 = %4 to %0 step %3 : u32 {
        %6 = load x[%5] : f32
        store out[%5], %6 : f32
      }
    }
  }
)",
                    29);
}

// A grid-stride bf16 scale on axis y with the step's operands in the other order and a literal
// end: one 8-lane loop, no `if`. The scale is grid-uniform math on a constexpr.
TEST(PassVectorize, GridStrideScaleBf16WithALiteralEnd) {
  expect_vectorized(R"(
  %0 = const 4096 : u32
  %1 = builtin group_size.y : u32
  %2 = builtin grid_groups.y : u32
  %3 = mul %1, %2 : u32
  %4 = builtin global_id.y : u32
  %5 = constexpr m : u32
  %6 = cast %5 : f32
  for %7 = %4 to %0 step %3 : u32 {
    %8 = load xb[%7] : bf16
    %9 = cast %8 : f32
    %10 = mul %9, %6 : f32
    %11 = cast %10 : bf16
    store outb[%7], %11 : bf16
  }
)",
                    12, R"(
  %0 = const 4096 : u32
  %1 = builtin group_size.y : u32
  %2 = builtin grid_groups.y : u32
  %3 = mul %1, %2 : u32
  %4 = builtin global_id.y : u32
  %5 = constexpr m : u32
  %6 = cast %5 : f32
  %12 = const 8 : u32
  %13 = const 512 : u32
  for %14 = %4 to %13 step %3 : u32 {
    %15 = mul %14, %12 : u32
    %16 = load xb[%15] : bf16x8
    %17 = extract %16, 0 : bf16
    %18 = extract %16, 1 : bf16
    %19 = extract %16, 2 : bf16
    %20 = extract %16, 3 : bf16
    %21 = extract %16, 4 : bf16
    %22 = extract %16, 5 : bf16
    %23 = extract %16, 6 : bf16
    %24 = extract %16, 7 : bf16
    %25 = cast %17 : f32
    %26 = mul %25, %6 : f32
    %27 = cast %26 : bf16
    %28 = cast %18 : f32
    %29 = mul %28, %6 : f32
    %30 = cast %29 : bf16
    %31 = cast %19 : f32
    %32 = mul %31, %6 : f32
    %33 = cast %32 : bf16
    %34 = cast %20 : f32
    %35 = mul %34, %6 : f32
    %36 = cast %35 : bf16
    %37 = cast %21 : f32
    %38 = mul %37, %6 : f32
    %39 = cast %38 : bf16
    %40 = cast %22 : f32
    %41 = mul %40, %6 : f32
    %42 = cast %41 : bf16
    %43 = cast %23 : f32
    %44 = mul %43, %6 : f32
    %45 = cast %44 : bf16
    %46 = cast %24 : f32
    %47 = mul %46, %6 : f32
    %48 = cast %47 : bf16
    store outb[%15], %27, %30, %33, %36, %39, %42, %45, %48 : bf16x8
  }
)",
                    49);
}

// Two inputs, two outputs of different widths, a grid-uniform base (a literal multiple of every
// width) and a load at a grid-uniform index outside the loop. The widest element (f32) sets W:
// 4 lanes are 16 bytes of x and w and 8 bytes of outh. The literal end 100 takes W = 4.
TEST(PassVectorize, GridStrideLoopWithSeveralTensors) {
  expect_vectorized(R"(
  %0 = const 100 : u32
  %1 = builtin grid_groups.x : u32
  %2 = builtin group_size.x : u32
  %3 = mul %1, %2 : u32
  %4 = builtin global_id.x : u32
  %5 = const 64 : u32
  %6 = load w[%5] : f32
  for %7 = %4 to %0 step %3 : u32 {
    %8 = add %5, %7 : u32
    %9 = load x[%8] : f32
    %10 = load w[%7] : f32
    %11 = mul %9, %10 : f32
    %12 = add %11, %6 : f32
    store out[%7], %12 : f32
    %13 = cast %12 : f16
    store outh[%7], %13 : f16
  }
)",
                    14, R"(
  %0 = const 100 : u32
  %1 = builtin grid_groups.x : u32
  %2 = builtin group_size.x : u32
  %3 = mul %1, %2 : u32
  %4 = builtin global_id.x : u32
  %5 = const 64 : u32
  %6 = load w[%5] : f32
  %14 = const 4 : u32
  %15 = const 25 : u32
  for %16 = %4 to %15 step %3 : u32 {
    %17 = mul %16, %14 : u32
    %18 = add %5, %17 : u32
    %19 = load x[%18] : f32x4
    %20 = extract %19, 0 : f32
    %21 = extract %19, 1 : f32
    %22 = extract %19, 2 : f32
    %23 = extract %19, 3 : f32
    %24 = load w[%17] : f32x4
    %25 = extract %24, 0 : f32
    %26 = extract %24, 1 : f32
    %27 = extract %24, 2 : f32
    %28 = extract %24, 3 : f32
    %29 = mul %20, %25 : f32
    %30 = add %29, %6 : f32
    %31 = cast %30 : f16
    %32 = mul %21, %26 : f32
    %33 = add %32, %6 : f32
    %34 = cast %33 : f16
    %35 = mul %22, %27 : f32
    %36 = add %35, %6 : f32
    %37 = cast %36 : f16
    %38 = mul %23, %28 : f32
    %39 = add %38, %6 : f32
    %40 = cast %39 : f16
    store out[%17], %30, %33, %36, %39 : f32x4
    store outh[%17], %31, %34, %37, %40 : f16x4
  }
)",
                    41);
}

/// The start of every grid bail-out kernel: %0 = n, %3 = grid threads, %4 = global_id.
constexpr std::string_view kGrid = R"(
  %0 = constexpr n : u32
  %1 = builtin grid_groups.x : u32
  %2 = builtin group_size.x : u32
  %3 = mul %1, %2 : u32
  %4 = builtin global_id.x : u32
)";

// A grid loop's elements are shared by every thread of the grid: anything that would tell the
// threads or the groups apart, or that a different split of the elements would change, stays.
TEST(PassVectorize, LeavesGridLoopsOutsideTheProofAlone) {
  const BailOut cases[] = {
      {"an accumulator (a group reduction after a grid loop)", R"(
  %5 = const 0 : f32
  %6 = var %5 : f32
  for %7 = %4 to %0 step %3 : u32 {
    %8 = load x[%7] : f32
    %9 = var.load %6 : f32
    %10 = add %9, %8 : f32
    var.store %6, %10 : f32
  }
  %11 = var.load %6 : f32
  %12 = reduce.sum %11 : f32
  %13 = builtin group_id.x : u32
  store out[%13], %12 : f32
)",
       14},
      {"a value that depends on the group", R"(
  %5 = builtin group_id.x : u32
  %6 = cast %5 : f32
  for %7 = %4 to %0 step %3 : u32 {
    %8 = load x[%7] : f32
    %9 = add %8, %6 : f32
    store out[%7], %9 : f32
  }
)",
       10},
      {"a load at a group-dependent index", R"(
  %5 = builtin group_id.x : u32
  %6 = load w[%5] : f32
  for %7 = %4 to %0 step %3 : u32 {
    %8 = load x[%7] : f32
    %9 = mul %8, %6 : f32
    store out[%7], %9 : f32
  }
)",
       10},
      {"a group reduction's result", R"(
  %5 = load x[%4] : f32
  %6 = reduce.max %5 : f32
  for %7 = %4 to %0 step %3 : u32 {
    %8 = load x[%7] : f32
    %9 = sub %8, %6 : f32
    store out[%7], %9 : f32
  }
)",
       10},
      {"a base that depends on the group", R"(
  %5 = builtin group_id.x : u32
  %6 = mul %5, %0 : u32
  for %7 = %4 to %0 step %3 : u32 {
    %8 = add %6, %7 : u32
    %9 = load x[%8] : f32
    store out[%8], %9 : f32
  }
)",
       10},
      {"a grid-uniform base not provably aligned", R"(
  %5 = constexpr m : u32
  for %6 = %4 to %0 step %3 : u32 {
    %7 = add %5, %6 : u32
    %8 = load x[%7] : f32
    store out[%7], %8 : f32
  }
)",
       9},
      {"a stored tensor read back", R"(
  for %5 = %4 to %0 step %3 : u32 {
    %6 = load x[%5] : f32
    store out[%5], %6 : f32
  }
  %7 = load out[%4] : f32
  %8 = cast %7 : u32
  store outu[%4], %8 : u32
)",
       9},
      {"a step of group_size alone", R"(
  for %5 = %4 to %0 step %2 : u32 {
    %6 = load x[%5] : f32
    store out[%5], %6 : f32
  }
)",
       7},
      {"a step of grid_groups * group_size on another axis", R"(
  %5 = builtin group_size.y : u32
  %6 = mul %1, %5 : u32
  for %7 = %4 to %0 step %6 : u32 {
    %8 = load x[%7] : f32
    store out[%7], %8 : f32
  }
)",
       9},
      {"a step of grid_groups * grid_groups", R"(
  %5 = mul %1, %1 : u32
  for %6 = %4 to %0 step %5 : u32 {
    %7 = load x[%6] : f32
    store out[%6], %7 : f32
  }
)",
       8},
      {"a start of thread_id", R"(
  %5 = builtin thread_id.x : u32
  for %6 = %5 to %0 step %3 : u32 {
    %7 = load x[%6] : f32
    store out[%6], %7 : f32
  }
)",
       8},
      {"a start of 0", R"(
  %5 = const 0 : u32
  for %6 = %5 to %0 step %3 : u32 {
    %7 = load x[%6] : f32
    store out[%6], %7 : f32
  }
)",
       8},
      {"a literal end that no width divides", R"(
  %5 = const 1001 : u32
  for %6 = %4 to %5 step %3 : u32 {
    %7 = load x[%6] : f32
    store out[%6], %7 : f32
  }
)",
       8},
  };
  for (const BailOut& c : cases) {
    SCOPED_TRACE(c.why);
    expect_unchanged(std::string(kGrid) + std::string(c.body), c.values);
  }
}

// Every new op carries the location of the op it stands for: the loop's for the versioning and
// the loop, the load's for its vector load and extracts, the store's for the vector store.
TEST(PassVectorize, NewOpsCarryTheLocationsOfTheOpsTheyReplace) {
  ir::Kernel k = ir::parse_kernel(kernel_with(R"(
  %0 = constexpr n : u32  ; k.cpp:1
  %1 = builtin group_id.x : u32  ; k.cpp:2
  %2 = mul %1, %0 : u32  ; k.cpp:2
  %3 = builtin thread_id.x : u32  ; k.cpp:3
  %4 = builtin group_size.x : u32  ; k.cpp:4
  for %5 = %3 to %0 step %4 : u32 {  ; k.cpp:5
    %6 = add %2, %5 : u32  ; k.cpp:6
    %7 = load x[%6] : f32  ; k.cpp:7
    %8 = exp %7 : f32  ; k.cpp:8
    store out[%6], %8 : f32  ; k.cpp:9
  }
)",
                                              9));
  codegen::vectorize(k, TargetProfile{});
  std::map<ir::OpKind, std::set<std::uint32_t>> lines;
  ir::walk(k.body, [&](const ir::Op& op) { lines[op.kind].insert(op.loc.line); });
  using L = std::set<std::uint32_t>;
  EXPECT_EQ(lines[ir::OpKind::If], L{5});
  EXPECT_EQ(lines[ir::OpKind::Rem], L{5});
  EXPECT_EQ(lines[ir::OpKind::Eq], L{5});
  EXPECT_EQ(lines[ir::OpKind::Div], L{5});
  EXPECT_EQ(lines[ir::OpKind::Const], L{5});
  EXPECT_EQ(lines[ir::OpKind::For], L{5});
  EXPECT_EQ(lines[ir::OpKind::Mul], (L{2, 5}));
  EXPECT_EQ(lines[ir::OpKind::Add], L{6});
  EXPECT_EQ(lines[ir::OpKind::Load], L{7});
  EXPECT_EQ(lines[ir::OpKind::Extract], L{7});
  EXPECT_EQ(lines[ir::OpKind::Exp], L{8});
  EXPECT_EQ(lines[ir::OpKind::Store], L{9});
}

/// Runs `kernel` on the inputs, constants and grid of `setup` and returns every tensor, outputs
/// starting as NaN (or their initial values).
std::vector<runtime::HostTensor> run_case(const ir::Kernel& kernel,
                                          const testing::TestSetup& setup) {
  std::vector<runtime::HostTensor> tensors(kernel.params.size());
  std::vector<runtime::Arg> args;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (p.kind == ir::ParamKind::Constexpr) {
      args.emplace_back(setup.constants().at(p.name));
      continue;
    }
    const auto initial = setup.initial_values().find(p.name);
    tensors[i] = p.kind == ir::ParamKind::Input ? setup.inputs().at(p.name)
                 : initial != setup.initial_values().end()
                     ? initial->second
                     : testing::pack(std::vector<float>(setup.outputs().at(p.name),
                                                        std::numeric_limits<float>::quiet_NaN()),
                                     p.dtype);
    args.emplace_back(&tensors[i]);
  }
  runtime::sim_run({&kernel, std::move(args), setup.launch_grid()});
  return tensors;
}

std::size_t vector_accesses(const ir::Kernel& kernel) {
  std::size_t n = 0;
  ir::walk(kernel.body, [&](const ir::Op& op) { n += op.lanes > 1; });
  return n;
}

bool has_group_reduction(const ir::Kernel& kernel) {
  bool found = false;
  ir::walk(kernel.body,
           [&](const ir::Op& op) { found = found || ir::op_class(op.kind) == ir::OpClass::Group; });
  return found;
}

/// `kernel` after the pipeline's passes that run before vectorize: the IR the pass really sees.
ir::Kernel before_vectorize(ir::Kernel kernel, const TargetProfile& target) {
  for (const codegen::PassInfo& pass : codegen::pipeline_passes()) {
    if (pass.name == "vectorize") break;
    pass.run(kernel, target);
  }
  return kernel;
}

// Every library kernel test, in every dtype, on the simulator before and after vectorize. A
// kernel without group reductions has no accumulator to reorder: its outputs must be
// bit-identical (grid-stride and row loops alike). With one, a vector loop sums a thread's
// elements in another order, so its outputs are checked against the oracle with the case's
// tolerance, as `iron test` does. copy, scale (grid-stride), softmax and rms_norm (rows) must
// all have been widened.
TEST(PassVectorize, LibraryKernelsAgreeOnTheSimulator) {
  const TargetProfile target = TargetProfile::cuda(90);
  std::set<std::string> widened;
  for (const testing::TestCase& test : testing::registered_tests()) {
    // The library's tests only: the unit tests' own fixtures include launches meant to fail.
    if (dsl::find_kernel(test.kernel)->loc.file.rfind("kernels/", 0) != 0) continue;
    for (const testing::DTypeTolerance& d : test.dtypes) {
      SCOPED_TRACE(test.name + " " + std::string(dtype_name(d.dtype)));
      testing::Rng rng(20240611);
      const testing::TestSetup setup = test.make(d.dtype, rng);
      const ir::Kernel scalar = before_vectorize(setup.kernel(), target);
      ir::Kernel vector = scalar;
      codegen::vectorize(vector, target);
      ASSERT_EQ(problems_of(vector), "");
      if (vector_accesses(vector) == 0) continue;
      widened.insert(test.kernel);
      const auto want = run_case(scalar, setup);
      const auto got = run_case(vector, setup);
      for (std::size_t i = 0; i < want.size(); ++i) {
        const ir::Param& p = scalar.params[i];
        if (!ir::is_output(p.kind)) continue;
        if (!has_group_reduction(scalar)) {
          EXPECT_TRUE(want[i].bytes == got[i].bytes) << "output '" << p.name << "' differs";
          continue;
        }
        const auto expected = setup.expected().find(p.name);
        if (expected == setup.expected().end()) continue;
        const testing::Tolerance tol = testing::output_tolerance(test, d.dtype, setup, p.name);
        EXPECT_EQ(testing::compare_outputs(p.name, testing::unpack(got[i]), expected->second, tol),
                  "");
      }
    }
  }
  for (const char* kernel : {"iron_copy", "iron_scale", "iron_softmax", "iron_rms_norm"}) {
    EXPECT_TRUE(widened.contains(kernel)) << kernel << " was not vectorized";
  }
}

}  // namespace
}  // namespace iron::vectorize_test
