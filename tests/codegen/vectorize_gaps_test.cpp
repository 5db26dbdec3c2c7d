/// vectorize on the loops its first version left alone (IR in, IR out): ends computed from
/// several constexprs, ends the contract's rules or an enclosing branch prove aligned, loops
/// inside branches uniform across their threads, the induction value read as a value, and
/// first-best (argmax) accumulators, with the shapes next to them that must stay scalar.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "vectorize_test_support.hpp"

namespace iron::vectorize_test {
namespace {

using namespace vectorize_support;

constexpr std::string_view kRow = R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
)";

std::string row(std::string_view body) { return std::string(kRow) + std::string(body); }

// tokens * half in rope's shape: the end is the product of two constexprs, versioned on
// (n * m) % 4 like a constexpr end.
TEST(PassVectorizeGaps, EndComputedFromConstexprsIsVersioned) {
  expect_vectorized(R"(
  %0 = constexpr n : u32
  %1 = constexpr m : u32
  %2 = mul %0, %1 : u32
  %3 = builtin grid_groups.x : u32
  %4 = builtin group_size.x : u32
  %5 = mul %3, %4 : u32
  %6 = builtin global_id.x : u32
  for %7 = %6 to %2 step %5 : u32 {
    %8 = load x[%7] : f32
    store out[%7], %8 : f32
  }
)",
                    9, R"(
  %0 = constexpr n : u32
  %1 = constexpr m : u32
  %2 = mul %0, %1 : u32
  %3 = builtin grid_groups.x : u32
  %4 = builtin group_size.x : u32
  %5 = mul %3, %4 : u32
  %6 = builtin global_id.x : u32
  %9 = const 4 : u32
  %10 = rem %2, %9 : u32
  %11 = const 0 : u32
  %12 = eq %10, %11 : bool
  if %12 {
    %13 = div %2, %9 : u32
    for %14 = %6 to %13 step %5 : u32 {
      %15 = mul %14, %9 : u32
      %16 = load x[%15] : f32x4
      %17 = extract %16, 0 : f32
      %18 = extract %16, 1 : f32
      %19 = extract %16, 2 : f32
      %20 = extract %16, 3 : f32
      store out[%15], %17, %18, %19, %20 : f32x4
    }
  } else {
    %21 = const 2 : u32
    %22 = rem %2, %21 : u32
    %23 = const 0 : u32
    %24 = eq %22, %23 : bool
    if %24 {
      %25 = div %2, %21 : u32
      for %26 = %6 to %25 step %5 : u32 {
        %27 = mul %26, %21 : u32
        %28 = load x[%27] : f32x2
        %29 = extract %28, 0 : f32
        %30 = extract %28, 1 : f32
        store out[%27], %29, %30 : f32x2
      }
    } else {
      for %7 = %6 to %2 step %5 : u32 {
        %8 = load x[%7] : f32
        store out[%7], %8 : f32
      }
    }
  }
)",
                    31);
}

// `require n multiple_of 8`: the 4-lane f32 loop needs no test and no fallback.
TEST(PassVectorizeGaps, ARuleProvesTheEnd) {
  expect_vectorized(row(R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = load x[%6] : f32
    store out[%6], %7 : f32
  }
)"),
                    8, R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %8 = const 4 : u32
  %9 = div %0, %8 : u32
  for %10 = %3 to %9 step %4 : u32 {
    %11 = mul %10, %8 : u32
    %12 = add %2, %11 : u32
    %13 = load x[%12] : f32x4
    %14 = extract %13, 0 : f32
    %15 = extract %13, 1 : f32
    %16 = extract %13, 2 : f32
    %17 = extract %13, 3 : f32
    store out[%12], %14, %15, %16, %17 : f32x4
  }
)",
                    18, {}, "  require n multiple_of 8\n");
}

// `require n multiple_of 4` in bf16: the 8-lane loop is versioned, the 4-lane one is proven and
// ends the chain (no scalar fallback).
TEST(PassVectorizeGaps, ARuleEndsTheChainAtTheWidthItProves) {
  expect_vectorized(row(R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = load xb[%6] : bf16
    store outb[%6], %7 : bf16
  }
)"),
                    8, R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %8 = const 8 : u32
  %9 = rem %0, %8 : u32
  %10 = const 0 : u32
  %11 = eq %9, %10 : bool
  if %11 {
    %12 = div %0, %8 : u32
    for %13 = %3 to %12 step %4 : u32 {
      %14 = mul %13, %8 : u32
      %15 = add %2, %14 : u32
      %16 = load xb[%15] : bf16x8
      %17 = extract %16, 0 : bf16
      %18 = extract %16, 1 : bf16
      %19 = extract %16, 2 : bf16
      %20 = extract %16, 3 : bf16
      %21 = extract %16, 4 : bf16
      %22 = extract %16, 5 : bf16
      %23 = extract %16, 6 : bf16
      %24 = extract %16, 7 : bf16
      store outb[%15], %17, %18, %19, %20, %21, %22, %23, %24 : bf16x8
    }
  } else {
    %25 = const 4 : u32
    %26 = div %0, %25 : u32
    for %27 = %3 to %26 step %4 : u32 {
      %28 = mul %27, %25 : u32
      %29 = add %2, %28 : u32
      %30 = load xb[%29] : bf16x4
      %31 = extract %30, 0 : bf16
      %32 = extract %30, 1 : bf16
      %33 = extract %30, 2 : bf16
      %34 = extract %30, 3 : bf16
      store outb[%29], %31, %32, %33, %34 : bf16x4
    }
  }
)",
                    35, {}, "  require n multiple_of 4\n");
}

// A streaming fallback inside a group-uniform branch (n > 64): versioned inside the branch.
TEST(PassVectorizeGaps, ALoopInsideAUniformBranch) {
  expect_vectorized(row(R"(
  %5 = const 64 : u32
  %6 = gt %0, %5 : bool
  if %6 {
    for %7 = %3 to %0 step %4 : u32 {
      %8 = add %2, %7 : u32
      %9 = load x[%8] : f32
      store out[%8], %9 : f32
    }
  }
)"),
                    10, R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = const 64 : u32
  %6 = gt %0, %5 : bool
  if %6 {
    %10 = const 4 : u32
    %11 = rem %0, %10 : u32
    %12 = const 0 : u32
    %13 = eq %11, %12 : bool
    if %13 {
      %14 = div %0, %10 : u32
      for %15 = %3 to %14 step %4 : u32 {
        %16 = mul %15, %10 : u32
        %17 = add %2, %16 : u32
        %18 = load x[%17] : f32x4
        %19 = extract %18, 0 : f32
        %20 = extract %18, 1 : f32
        %21 = extract %18, 2 : f32
        %22 = extract %18, 3 : f32
        store out[%17], %19, %20, %21, %22 : f32x4
      }
    } else {
      %23 = const 2 : u32
      %24 = rem %0, %23 : u32
      %25 = const 0 : u32
      %26 = eq %24, %25 : bool
      if %26 {
        %27 = div %0, %23 : u32
        for %28 = %3 to %27 step %4 : u32 {
          %29 = mul %28, %23 : u32
          %30 = add %2, %29 : u32
          %31 = load x[%30] : f32x2
          %32 = extract %31, 0 : f32
          %33 = extract %31, 1 : f32
          store out[%30], %32, %33 : f32x2
        }
      } else {
        for %7 = %3 to %0 step %4 : u32 {
          %8 = add %2, %7 : u32
          %9 = load x[%8] : f32
          store out[%8], %9 : f32
        }
      }
    }
  }
)",
                    34);
}

// A branch whose then-block already runs a vector loop (the kernel's own wide accesses) is not
// one of the pass's versions: the loop in its else-block is still widened.
TEST(PassVectorizeGaps, ALoopBesideAnotherVectorLoop) {
  expect_vectorized(row(R"(
  %5 = const 64 : u32
  %6 = gt %0, %5 : bool
  if %6 {
    for %7 = %3 to %0 step %4 : u32 {
      %8 = add %2, %7 : u32
      %9 = load xh[%8] : f16x4
      %10 = extract %9, 0 : f16
      store outh[%8], %10, %10, %10, %10 : f16x4
    }
  } else {
    for %11 = %3 to %0 step %4 : u32 {
      %12 = add %2, %11 : u32
      %13 = load x[%12] : f32
      store out[%12], %13 : f32
    }
  }
)"),
                    14, R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = const 64 : u32
  %6 = gt %0, %5 : bool
  if %6 {
    for %7 = %3 to %0 step %4 : u32 {
      %8 = add %2, %7 : u32
      %9 = load xh[%8] : f16x4
      %10 = extract %9, 0 : f16
      store outh[%8], %10, %10, %10, %10 : f16x4
    }
  } else {
    %14 = const 4 : u32
    %15 = rem %0, %14 : u32
    %16 = const 0 : u32
    %17 = eq %15, %16 : bool
    if %17 {
      %18 = div %0, %14 : u32
      for %19 = %3 to %18 step %4 : u32 {
        %20 = mul %19, %14 : u32
        %21 = add %2, %20 : u32
        %22 = load x[%21] : f32x4
        %23 = extract %22, 0 : f32
        %24 = extract %22, 1 : f32
        %25 = extract %22, 2 : f32
        %26 = extract %22, 3 : f32
        store out[%21], %23, %24, %25, %26 : f32x4
      }
    } else {
      %27 = const 2 : u32
      %28 = rem %0, %27 : u32
      %29 = const 0 : u32
      %30 = eq %28, %29 : bool
      if %30 {
        %31 = div %0, %27 : u32
        for %32 = %3 to %31 step %4 : u32 {
          %33 = mul %32, %27 : u32
          %34 = add %2, %33 : u32
          %35 = load x[%34] : f32x2
          %36 = extract %35, 0 : f32
          %37 = extract %35, 1 : f32
          store out[%34], %36, %37 : f32x2
        }
      } else {
        for %11 = %3 to %0 step %4 : u32 {
          %12 = add %2, %11 : u32
          %13 = load x[%12] : f32
          store out[%12], %13 : f32
        }
      }
    }
  }
)",
                    38);
}

// Inside `if (n & 7) == 0`, n is a multiple of 8: the loop is the 4-lane loop alone.
TEST(PassVectorizeGaps, ABranchConditionProvesTheEnd) {
  expect_vectorized(row(R"(
  %5 = const 7 : u32
  %6 = and %0, %5 : u32
  %7 = const 0 : u32
  %8 = eq %6, %7 : bool
  if %8 {
    for %9 = %3 to %0 step %4 : u32 {
      %10 = add %2, %9 : u32
      %11 = load x[%10] : f32
      store out[%10], %11 : f32
    }
  }
)"),
                    12, R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = const 7 : u32
  %6 = and %0, %5 : u32
  %7 = const 0 : u32
  %8 = eq %6, %7 : bool
  if %8 {
    %12 = const 4 : u32
    %13 = div %0, %12 : u32
    for %14 = %3 to %13 step %4 : u32 {
      %15 = mul %14, %12 : u32
      %16 = add %2, %15 : u32
      %17 = load x[%16] : f32x4
      %18 = extract %17, 0 : f32
      %19 = extract %17, 1 : f32
      %20 = extract %17, 2 : f32
      %21 = extract %17, 3 : f32
      store out[%16], %18, %19, %20, %21 : f32x4
    }
  }
)",
                    22);
}

// out[base + j] = j: lane l of vector k stores kW + l.
TEST(PassVectorizeGaps, TheInductionValueReadAsAValue) {
  expect_vectorized(row(R"(
  for %5 = %3 to %0 step %4 : u32 {
    %6 = add %2, %5 : u32
    %7 = cast %5 : f32
    store out[%6], %7 : f32
  }
)"),
                    8, R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %8 = const 4 : u32
  %9 = rem %0, %8 : u32
  %10 = const 0 : u32
  %11 = eq %9, %10 : bool
  if %11 {
    %12 = div %0, %8 : u32
    for %13 = %3 to %12 step %4 : u32 {
      %14 = mul %13, %8 : u32
      %15 = const 1 : u32
      %16 = add %14, %15 : u32
      %17 = const 2 : u32
      %18 = add %14, %17 : u32
      %19 = const 3 : u32
      %20 = add %14, %19 : u32
      %21 = add %2, %14 : u32
      %22 = cast %14 : f32
      %23 = cast %16 : f32
      %24 = cast %18 : f32
      %25 = cast %20 : f32
      store out[%21], %22, %23, %24, %25 : f32x4
    }
  } else {
    %26 = const 2 : u32
    %27 = rem %0, %26 : u32
    %28 = const 0 : u32
    %29 = eq %27, %28 : bool
    if %29 {
      %30 = div %0, %26 : u32
      for %31 = %3 to %30 step %4 : u32 {
        %32 = mul %31, %26 : u32
        %33 = const 1 : u32
        %34 = add %32, %33 : u32
        %35 = add %2, %32 : u32
        %36 = cast %32 : f32
        %37 = cast %34 : f32
        store out[%35], %36, %37 : f32x2
      }
    } else {
      for %5 = %3 to %0 step %4 : u32 {
        %6 = add %2, %5 : u32
        %7 = cast %5 : f32
        store out[%6], %7 : f32
      }
    }
  }
)",
                    38);
}

/// argmax's loop and reductions over x, with `compare`, `pick` and `tail` spliced in.
std::string argmax_like(std::string_view compare, std::string_view index_pick,
                        std::string_view tail) {
  return row(std::string(R"(
  %5 = const -inf : f32
  %6 = var %5 : f32
  %7 = var %3 : u32
  for %8 = %3 to %0 step %4 : u32 {
    %9 = add %2, %8 : u32
    %10 = load x[%9] : f32
    %11 = var.load %6 : f32
)") + std::string(compare) +
             R"(    %13 = var.load %7 : u32
)" + std::string(index_pick) +
             R"(    var.store %7, %14 : u32
    %15 = select %12, %10, %11 : f32
    var.store %6, %15 : f32
  }
  %16 = var.load %6 : f32
  %17 = reduce.max %16 : f32
  %18 = var.load %6 : f32
  %19 = eq %18, %17 : bool
  %20 = var.load %7 : u32
)" + std::string(tail) +
             R"(  store outu[%1], %23 : u32
  store out[%1], %17 : f32
)");
}

constexpr std::string_view kStrict = "    %12 = gt %10, %11 : bool\n";
constexpr std::string_view kPickJ = "    %14 = select %12, %8, %13 : u32\n";
constexpr std::string_view kFirstIndex = R"(  %21 = const 4294967295 : u32
  %22 = select %19, %20, %21 : u32
  %23 = reduce.min %22 : u32
)";

// The first maximum and its index: each lane compared in turn, in increasing j.
TEST(PassVectorizeGaps, AFirstBestPairIsWidened) {
  expect_vectorized(argmax_like(kStrict, kPickJ, kFirstIndex), 24, R"(
  %0 = constexpr n : u32
  %1 = builtin group_id.x : u32
  %2 = mul %1, %0 : u32
  %3 = builtin thread_id.x : u32
  %4 = builtin group_size.x : u32
  %5 = const -inf : f32
  %6 = var %5 : f32
  %7 = var %3 : u32
  %24 = const 4 : u32
  %25 = rem %0, %24 : u32
  %26 = const 0 : u32
  %27 = eq %25, %26 : bool
  if %27 {
    %28 = div %0, %24 : u32
    for %29 = %3 to %28 step %4 : u32 {
      %30 = mul %29, %24 : u32
      %31 = const 1 : u32
      %32 = add %30, %31 : u32
      %33 = const 2 : u32
      %34 = add %30, %33 : u32
      %35 = const 3 : u32
      %36 = add %30, %35 : u32
      %37 = add %2, %30 : u32
      %38 = load x[%37] : f32x4
      %39 = extract %38, 0 : f32
      %40 = extract %38, 1 : f32
      %41 = extract %38, 2 : f32
      %42 = extract %38, 3 : f32
      %43 = var.load %6 : f32
      %44 = gt %39, %43 : bool
      %45 = var.load %7 : u32
      %46 = select %44, %30, %45 : u32
      var.store %7, %46 : u32
      %47 = select %44, %39, %43 : f32
      var.store %6, %47 : f32
      %48 = var.load %6 : f32
      %49 = gt %40, %48 : bool
      %50 = var.load %7 : u32
      %51 = select %49, %32, %50 : u32
      var.store %7, %51 : u32
      %52 = select %49, %40, %48 : f32
      var.store %6, %52 : f32
      %53 = var.load %6 : f32
      %54 = gt %41, %53 : bool
      %55 = var.load %7 : u32
      %56 = select %54, %34, %55 : u32
      var.store %7, %56 : u32
      %57 = select %54, %41, %53 : f32
      var.store %6, %57 : f32
      %58 = var.load %6 : f32
      %59 = gt %42, %58 : bool
      %60 = var.load %7 : u32
      %61 = select %59, %36, %60 : u32
      var.store %7, %61 : u32
      %62 = select %59, %42, %58 : f32
      var.store %6, %62 : f32
    }
  } else {
    %63 = const 2 : u32
    %64 = rem %0, %63 : u32
    %65 = const 0 : u32
    %66 = eq %64, %65 : bool
    if %66 {
      %67 = div %0, %63 : u32
      for %68 = %3 to %67 step %4 : u32 {
        %69 = mul %68, %63 : u32
        %70 = const 1 : u32
        %71 = add %69, %70 : u32
        %72 = add %2, %69 : u32
        %73 = load x[%72] : f32x2
        %74 = extract %73, 0 : f32
        %75 = extract %73, 1 : f32
        %76 = var.load %6 : f32
        %77 = gt %74, %76 : bool
        %78 = var.load %7 : u32
        %79 = select %77, %69, %78 : u32
        var.store %7, %79 : u32
        %80 = select %77, %74, %76 : f32
        var.store %6, %80 : f32
        %81 = var.load %6 : f32
        %82 = gt %75, %81 : bool
        %83 = var.load %7 : u32
        %84 = select %82, %71, %83 : u32
        var.store %7, %84 : u32
        %85 = select %82, %75, %81 : f32
        var.store %6, %85 : f32
      }
    } else {
      for %8 = %3 to %0 step %4 : u32 {
        %9 = add %2, %8 : u32
        %10 = load x[%9] : f32
        %11 = var.load %6 : f32
        %12 = gt %10, %11 : bool
        %13 = var.load %7 : u32
        %14 = select %12, %8, %13 : u32
        var.store %7, %14 : u32
        %15 = select %12, %10, %11 : f32
        var.store %6, %15 : f32
      }
    }
  }
  %16 = var.load %6 : f32
  %17 = reduce.max %16 : f32
  %18 = var.load %6 : f32
  %19 = eq %18, %17 : bool
  %20 = var.load %7 : u32
  %21 = const 4294967295 : u32
  %22 = select %19, %20, %21 : u32
  %23 = reduce.min %22 : u32
  store outu[%1], %23 : u32
  store out[%1], %17 : f32
)",
                    86);
}

// What would make the result depend on which thread handled which element stays scalar.
TEST(PassVectorizeGaps, LeavesOtherSelectAccumulatorsAlone) {
  const struct {
    std::string_view why;
    std::string text;
  } cases[] = {
      {"a comparison that keeps the last of equal values (ge)",
       argmax_like("    %12 = ge %10, %11 : bool\n", kPickJ, kFirstIndex)},
      {"an index that is not j",
       argmax_like(kStrict, "    %14 = select %12, %3, %13 : u32\n", kFirstIndex)},
      {"a fill smaller than an index", argmax_like(kStrict, kPickJ, R"(  %21 = const 0 : u32
  %22 = select %19, %20, %21 : u32
  %23 = reduce.min %22 : u32
)")},
      {"the index reduced by max", argmax_like(kStrict, kPickJ, R"(  %21 = const 4294967295 : u32
  %22 = select %19, %20, %21 : u32
  %23 = reduce.max %22 : u32
)")},
      {"the index read per thread", argmax_like(kStrict, kPickJ, R"(  %21 = const 4294967295 : u32
  %22 = select %19, %20, %21 : u32
  %23 = add %20, %21 : u32
)")},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.why);
    const std::string text = kernel_with(c.text, 24);
    EXPECT_EQ(vectorized(text), text_of(ir::parse_kernel(text)));
  }
}

}  // namespace
}  // namespace iron::vectorize_test
