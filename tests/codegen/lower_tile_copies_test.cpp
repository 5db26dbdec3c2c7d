/// lower_tile_copies: a tile copy becomes each thread's 16-byte copies (a guarded chunk where
/// the group outnumbers the box's chunks); a pipeline's copies stay for TMA on sm_90a, where
/// tile_tensor_map describes them; expand_pipelines then makes them an mbarrier ring.
#include "iron/codegen/passes/lower_tile_copies.hpp"

#include <gtest/gtest.h>

#include <string>

#include "iron/codegen/passes/expand_pipelines.hpp"
#include "iron/core/parser.hpp"
#include "pass_test_harness.hpp"

namespace iron::pass_test {
namespace {

using codegen::lower_tile_copies;
using codegen::MmaStrategy;
using codegen::TargetProfile;

const TargetProfile kHopper = TargetProfile::cuda(90, MmaStrategy::Wgmma);

// A 4×8 box of f16 (one 16-byte chunk a row) from row 8 of an m × k matrix, 32 threads.
constexpr std::string_view kBox = R"(kernel tiles dtype=f16 mode=tiled
  param in x: f16
  param out out: f16
  param constexpr m: u32
  param constexpr k: u32
  shared t: f16[256]
  rule exactly 32
  values 6
{
  %0 = const 0 : u32
  %1 = constexpr m : u32
  %2 = constexpr k : u32
  %3 = const 8 : u32
  copy.tile @t[%0], x[%0], %1, %2, %3, %0, box 4, 8 : f16
  async.commit
  async.wait 0
  barrier
  %4 = builtin thread_id.x : u32
  %5 = shared.load @t[%4] : f16
  store out[%4], %5 : f16
}
)";

TEST(PassLowerTileCopies, EachThreadCopiesItsChunksOfTheBox) {
  EXPECT_EQ(run_pass(lower_tile_copies, kBox, TargetProfile::cuda(90)),
            canonical(R"(kernel tiles dtype=f16 mode=tiled
  param in x: f16
  param out out: f16
  param constexpr m: u32
  param constexpr k: u32
  shared t: f16[256]
  rule exactly 32
  values 34
{
  %0 = const 0 : u32
  %1 = constexpr m : u32
  %2 = constexpr k : u32
  %3 = const 8 : u32
  %6 = builtin simdgroup : u32
  %7 = builtin lane : u32
  %8 = const 32 : u32
  %9 = mul %6, %8 : u32
  %10 = add %9, %7 : u32
  %11 = const 0 : u32
  %12 = add %10, %11 : u32
  %13 = const 4 : u32
  %14 = lt %12, %13 : bool
  if %14 {
    %15 = const 1 : u32
    %16 = div %12, %15 : u32
    %17 = const 1 : u32
    %18 = rem %12, %17 : u32
    %19 = const 8 : u32
    %20 = mul %18, %19 : u32
    %21 = add %3, %16 : u32
    %22 = add %0, %20 : u32
    %23 = lt %21, %1 : bool
    %24 = lt %22, %2 : bool
    %25 = and %23, %24 : bool
    %26 = mul %21, %2 : u32
    %27 = add %0, %26 : u32
    %28 = add %27, %22 : u32
    %29 = select %25, %28, %0 : u32
    %30 = const 8 : u32
    %31 = mul %16, %30 : u32
    %32 = add %0, %31 : u32
    %33 = add %32, %20 : u32
    copy.async @t[%33], x[%29], %25 : f16x8
  }
  async.commit
  async.wait 0
  barrier
  %4 = builtin thread_id.x : u32
  %5 = shared.load @t[%4] : f16
  store out[%4], %5 : f16
}
)"));
}

TEST(PassLowerTileCopies, CopiesOutsideAPipelineAreLoweredOnSm90aToo) {
  EXPECT_EQ(run_pass(lower_tile_copies, kBox, kHopper),
            run_pass(lower_tile_copies, kBox, TargetProfile::cuda(90)));
}

// A 2-stage ring of 8 swizzled rows of 64 f16 (1024 bytes a stage), filled a step at a time.
constexpr std::string_view kRing = R"(kernel tiles dtype=f16 mode=tiled
  param in x: f16
  param out out: f16
  param constexpr m: u32
  param constexpr k: u32
  shared t: f16[512] ring swizzle 64
  rule exactly 128
  values 15
{
  %0 = const 0 : u32
  %1 = constexpr m : u32
  %2 = constexpr k : u32
  %3 = const 64 : u32
  %4 = const 512 : u32
  pipeline %0 to %2 step %3 stages 2 : u32 {
    %5 = pipeline.index step : u32
    %6 = pipeline.index slot : u32
    %7 = mul %6, %4 : u32
    copy.tile @t[%7], x[%0], %1, %2, %0, %5, box 8, 64 : f16
  } then {
    %8 = pipeline.index step : u32
    %9 = pipeline.index slot : u32
    %10 = builtin thread_id.x : u32
    %11 = mul %9, %4 : u32
    %12 = add %11, %10 : u32
    %13 = shared.load @t[%12] : f16
    %14 = add %8, %10 : u32
    store out[%14], %13 : f16
  }
}
)";

TEST(PassLowerTileCopies, APipelinesCopiesStayForTensorMapsOnSm90a) {
  EXPECT_EQ(run_pass(lower_tile_copies, kRing, kHopper), canonical(kRing));
  const std::string plain = run_pass(lower_tile_copies, kRing, TargetProfile::cuda(90));
  EXPECT_EQ(plain.find("copy.tile"), std::string::npos);
  EXPECT_NE(plain.find("copy.async @t["), std::string::npos);
}

TEST(PassLowerTileCopies, TheTensorMapOfACopy) {
  const ir::Kernel kernel = ir::parse_kernel(kRing);
  const ir::Op& copy = kernel.body.ops[5].blocks[0].ops[3];
  ASSERT_EQ(copy.kind, ir::OpKind::CopyTile);
  const auto map = codegen::tile_tensor_map(kernel, copy);
  ASSERT_TRUE(map.has_value());
  EXPECT_EQ(map->param, 0);
  EXPECT_EQ(ir::print_size_dims({map->base, map->height, map->width}), "[0, m, k]");
  EXPECT_EQ(map->box_rows, 8u);
  EXPECT_EQ(map->box_cols, 64u);
  EXPECT_EQ(map->swizzle, 64u);
}

TEST(PassLowerTileCopies, NoTensorMapOffA1024ByteBoundaryOrForAHeightOfTheStep) {
  std::string off(kRing);
  off.replace(off.find("%4 = const 512"), 14, "%4 = const 520");
  const ir::Kernel shifted = ir::parse_kernel(off);
  EXPECT_FALSE(codegen::tile_tensor_map(shifted, shifted.body.ops[5].blocks[0].ops[3]));
  EXPECT_NE(run_pass(lower_tile_copies, off, kHopper).find("copy.async"), std::string::npos);
  std::string stepped(kRing);  // the height read from the step: no host expression
  stepped.replace(stepped.find("x[%0], %1, %2"), 13, "x[%0], %5, %2");
  const ir::Kernel kernel = ir::parse_kernel(stepped);
  EXPECT_FALSE(codegen::tile_tensor_map(kernel, kernel.body.ops[5].blocks[0].ops[3]));
}

TEST(PassLowerTileCopies, ExpandPipelinesMakesTheCopiesAnMbarrierRing) {
  EXPECT_EQ(run_pass(codegen::expand_pipelines, kRing, kHopper),
            canonical(R"(kernel tiles dtype=f16 mode=tiled
  param in x: f16
  param out out: f16
  param constexpr m: u32
  param constexpr k: u32
  shared t: f16[1024] swizzle 64
  shared mbarriers0: u32[4]
  rule exactly 128
  tensor_map x [0, m, k] box 8, 64 swizzle 64
  values 53
{
  %0 = const 0 : u32
  %1 = constexpr m : u32
  %2 = constexpr k : u32
  %3 = const 64 : u32
  %4 = const 512 : u32
  %15 = const 0 : u32
  %16 = builtin simdgroup : u32
  %17 = eq %16, %15 : bool
  %18 = builtin lane : u32
  %19 = eq %18, %15 : bool
  %20 = and %17, %19 : bool
  if %20 {
    %21 = const 0 : u32
    mbar.init @mbarriers0[%21], 1
    %22 = const 1 : u32
    mbar.init @mbarriers0[%22], 1
  }
  barrier
  %23 = const 1 : u32
  %24 = const 1 : u32
  for %25 = %15 to %24 step %23 : u32 {
    %26 = mul %25, %3 : u32
    %27 = add %0, %26 : u32
    %29 = lt %27, %2 : bool
    if %29 {
      %28 = mul %25, %4 : u32
      if %20 {
        mbar.expect @mbarriers0[%25], 1024
        copy.tensor @t[%28], map 0, %0, %27, @mbarriers0[%25] : f16
      }
    }
  }
  for %30 = %0 to %2 step %3 : u32 {
    %31 = sub %30, %0 : u32
    %32 = div %31, %3 : u32
    %33 = const 2 : u32
    %34 = rem %32, %33 : u32
    %35 = div %32, %33 : u32
    %36 = const 1 : u32
    %37 = and %35, %36 : u32
    mbar.wait @mbarriers0[%34], %37
    barrier
    %38 = builtin thread_id.x : u32
    %39 = mul %34, %4 : u32
    %40 = add %39, %38 : u32
    %41 = shared.load @t[%40] : f16
    %42 = add %30, %38 : u32
    store out[%42], %41 : f16
    %43 = const 1 : u32
    %44 = mul %43, %3 : u32
    %45 = add %30, %44 : u32
    %46 = const 1 : u32
    %47 = add %32, %46 : u32
    %48 = rem %47, %33 : u32
    %50 = lt %45, %2 : bool
    if %50 {
      %49 = mul %48, %4 : u32
      if %20 {
        mbar.expect @mbarriers0[%48], 1024
        copy.tensor @t[%49], map 0, %0, %45, @mbarriers0[%48] : f16
      }
    }
  }
  barrier
  if %20 {
    %51 = const 0 : u32
    mbar.inval @mbarriers0[%51]
    %52 = const 1 : u32
    mbar.inval @mbarriers0[%52]
  }
}
)"));
}

TEST(PassLowerTileCopies, WithOneStageEachStepLoadsItsOwnSlotBeforeItsWait) {
  TargetProfile small = kHopper;
  small.max_shared_bytes = 3000;  // one 1024-byte stage and its gap to a 1024-byte boundary
  const std::string text = run_pass(codegen::expand_pipelines, kRing, small);
  EXPECT_NE(text.find("shared t: f16[512] swizzle 64"), std::string::npos) << text;
  const std::size_t loop = text.find("for %");  // the steady loop: one stage has no prologue
  const std::size_t barrier = text.find("barrier", loop);
  const std::size_t copy = text.find("copy.tensor", loop);
  const std::size_t wait = text.find("mbar.wait", loop);
  const std::size_t read = text.find("shared.load", loop);
  EXPECT_LT(barrier, copy) << text;
  EXPECT_LT(copy, wait) << text;
  EXPECT_LT(wait, read) << text;
  EXPECT_EQ(text.find("mbar.init @mbarriers0[%", text.find("mbar.init") + 1), std::string::npos)
      << "one barrier for one stage:\n"
      << text;
}

}  // namespace
}  // namespace iron::pass_test
