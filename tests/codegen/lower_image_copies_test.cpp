/// lower_tile_copies and expand_pipelines on image copies: each thread's 16-byte copies of its
/// pixels, checked against the image's bounds (a coordinate below zero wraps past them); on
/// sm_90a a pipeline's image copy keeps its four-dimensional tensor map and becomes a copy.tensor
/// of the image and first pixel column too.
#include <gtest/gtest.h>

#include <string>

#include "iron/codegen/passes/expand_pipelines.hpp"
#include "iron/codegen/passes/lower_tile_copies.hpp"
#include "iron/core/parser.hpp"
#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::lower_tile_copies;
using codegen::MmaStrategy;
using codegen::TargetProfile;

const TargetProfile kHopper = TargetProfile::cuda(90, MmaStrategy::Wgmma);

// A 2-stage ring of 2 × 4 pixels of 64 f16 channels (8 swizzled 128-byte rows, 1024 bytes a
// stage) of `images` images of h × w pixels, from pixel (step − 1, −2) of image 1.
constexpr std::string_view kImageRing = R"(kernel tiles dtype=f16 mode=tiled
  param in x: f16
  param out out: f16
  param constexpr images: u32
  param constexpr h: u32
  param constexpr w: u32
  param constexpr c: u32
  shared t: f16[512] ring swizzle 64
  rule exactly 128
  values 21
{
  %0 = const 0 : u32
  %1 = constexpr images : u32
  %2 = constexpr h : u32
  %3 = constexpr w : u32
  %4 = constexpr c : u32
  %5 = const 1 : u32
  %6 = const 512 : u32
  %7 = const 4 : u32
  pipeline %0 to %7 step %5 stages 2 : u32 {
    %8 = pipeline.index step : u32
    %9 = pipeline.index slot : u32
    %10 = mul %9, %6 : u32
    %11 = cast %8 : i32
    %12 = const 1 : i32
    %13 = sub %11, %12 : i32
    %14 = const -2 : i32
    copy.tile @t[%10], x[%0], %2, %4, %13, %0, box 8, 64, image %1, %3, %5, %14, across 4 : f16
  } then {
    %15 = pipeline.index step : u32
    %16 = pipeline.index slot : u32
    %17 = builtin thread_id.x : u32
    %18 = mul %16, %6 : u32
    %19 = add %18, %17 : u32
    %20 = shared.load @t[%19] : f16
    store out[%19], %20 : f16
  }
}
)";

TEST(PassLowerImageCopies, EachThreadCopiesItsPixelsCheckedAgainstTheImage) {
  // Thread v's chunk: box row r = v / 8 is pixel (y0 + r / 4, x0 + r % 4), its 16 bytes at
  // column (v % 8) · 8; zeros where the pixel, image or channels are outside.
  EXPECT_EQ(run_pass(lower_tile_copies, kImageRing, TargetProfile::cuda(90)),
            canonical(R"(kernel tiles dtype=f16 mode=tiled
  param in x: f16
  param out out: f16
  param constexpr images: u32
  param constexpr h: u32
  param constexpr w: u32
  param constexpr c: u32
  shared t: f16[512] ring swizzle 64
  rule exactly 128
  values 66
{
  %0 = const 0 : u32
  %1 = constexpr images : u32
  %2 = constexpr h : u32
  %3 = constexpr w : u32
  %4 = constexpr c : u32
  %5 = const 1 : u32
  %6 = const 512 : u32
  %7 = const 4 : u32
  pipeline %0 to %7 step %5 stages 2 : u32 {
    %8 = pipeline.index step : u32
    %9 = pipeline.index slot : u32
    %10 = mul %9, %6 : u32
    %11 = cast %8 : i32
    %12 = const 1 : i32
    %13 = sub %11, %12 : i32
    %14 = const -2 : i32
    %21 = builtin simdgroup : u32
    %22 = builtin lane : u32
    %23 = const 32 : u32
    %24 = mul %21, %23 : u32
    %25 = add %24, %22 : u32
    %26 = const 0 : u32
    %27 = add %25, %26 : u32
    %28 = const 64 : u32
    %29 = lt %27, %28 : bool
    if %29 {
      %30 = const 8 : u32
      %31 = div %27, %30 : u32
      %32 = const 8 : u32
      %33 = rem %27, %32 : u32
      %34 = const 8 : u32
      %35 = mul %33, %34 : u32
      %36 = const 4 : u32
      %37 = div %31, %36 : u32
      %38 = cast %37 : i32
      %39 = add %13, %38 : i32
      %40 = cast %39 : u32
      %41 = const 4 : u32
      %42 = rem %31, %41 : u32
      %43 = cast %42 : i32
      %44 = add %14, %43 : i32
      %45 = cast %44 : u32
      %46 = add %0, %35 : u32
      %47 = lt %40, %2 : bool
      %48 = lt %45, %3 : bool
      %49 = and %47, %48 : bool
      %50 = lt %5, %1 : bool
      %51 = lt %46, %4 : bool
      %52 = and %50, %51 : bool
      %53 = and %49, %52 : bool
      %54 = mul %5, %2 : u32
      %55 = add %54, %40 : u32
      %56 = mul %55, %3 : u32
      %57 = add %56, %45 : u32
      %58 = mul %57, %4 : u32
      %59 = add %0, %58 : u32
      %60 = add %59, %46 : u32
      %61 = select %53, %60, %0 : u32
      %62 = const 64 : u32
      %63 = mul %31, %62 : u32
      %64 = add %10, %63 : u32
      %65 = add %64, %35 : u32
      copy.async @t[%65], x[%61], %53 : f16x8
    }
  } then {
    %15 = pipeline.index step : u32
    %16 = pipeline.index slot : u32
    %17 = builtin thread_id.x : u32
    %18 = mul %16, %6 : u32
    %19 = add %18, %17 : u32
    %20 = shared.load @t[%19] : f16
    store out[%19], %20 : f16
  }
}
)"));
}

TEST(PassLowerImageCopies, ThePipelinesImageCopyStaysOnSm90aWithAFourDimensionalMap) {
  EXPECT_EQ(run_pass(lower_tile_copies, kImageRing, kHopper), canonical(kImageRing));
  const ir::Kernel kernel = ir::parse_kernel(kImageRing);
  const ir::Op& copy = kernel.body.ops[8].blocks[0].ops[7];
  ASSERT_EQ(copy.kind, ir::OpKind::CopyTile);
  const auto map = codegen::tile_tensor_map(kernel, copy);
  ASSERT_TRUE(map.has_value());
  EXPECT_EQ(ir::print_size_dims({map->base, map->height, map->width}), "[0, h, c]");
  EXPECT_EQ(ir::print_size_dims({map->images, map->image_width}), "[images, w]");
  EXPECT_EQ(map->box_rows, 8u);
  EXPECT_EQ(map->box_cols, 64u);
  EXPECT_EQ(map->box_width, 4u);
  EXPECT_EQ(map->swizzle, 64u);
}

TEST(PassLowerImageCopies, ExpandPipelinesCopiesTheImageAndItsFirstColumnToo) {
  const std::string expanded = run_pass(codegen::expand_pipelines, kImageRing, kHopper);
  EXPECT_NE(expanded.find("tensor_map x [0, h, c] box 8, 64 swizzle 64 image [images, w] across 4"),
            std::string::npos)
      << expanded;
  // Every copy of the ring (the prologue's and the steady state's) names image %5 and its step's
  // first column (the load block's constant, made again with the block).
  std::size_t copies = 0;
  for (std::size_t at = expanded.find("copy.tensor @t["); at != std::string::npos;
       at = expanded.find("copy.tensor @t[", at + 1)) {
    const std::string line = expanded.substr(at, expanded.find('\n', at) - at);
    EXPECT_NE(line.find("], image %5, %"), std::string::npos) << line;
    ++copies;
  }
  EXPECT_EQ(copies, 2u) << expanded;
}

TEST(PassLowerImageCopies, AnImageBoxOfPartialPixelRowsOrUnsignedCoordinatesIsRefused) {
  std::string partial(kImageRing);
  partial.replace(partial.find("across 4"), 8, "across 3");
  EXPECT_NE(problems_of(ir::parse_kernel(partial)).find("not whole rows of 3 pixels"),
            std::string::npos);
  std::string unsigned_row(kImageRing);
  unsigned_row.replace(unsigned_row.find("%2, %4, %13, %0"), 15, "%2, %4, %0, %0");
  EXPECT_NE(problems_of(ir::parse_kernel(unsigned_row)).find("operand 4 must be i32, got u32"),
            std::string::npos);
}

}  // namespace
}  // namespace iron::pass_test
