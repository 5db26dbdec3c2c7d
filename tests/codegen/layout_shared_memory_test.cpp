/// layout_shared_memory: 16-byte aligned offsets in order, the kernel's total, the target limit.
#include "iron/codegen/passes/layout_shared_memory.hpp"

#include <gtest/gtest.h>

#include <string>

#include "iron/core/error.hpp"
#include "pass_test_harness.hpp"
#include "test_target_profiles.hpp"

namespace iron::pass_test {
namespace {

using codegen::layout_shared_memory;

// 12, 10, 1 and 64 bytes: each allocation starts on a 16-byte boundary.
constexpr std::string_view kFourAllocations = R"(kernel staging dtype=f32 mode=reduction
  param out out: f32
  shared a: f32[3]
  shared b: f16[5]
  shared c: u8[1]
  shared d: f32[16]
  rule multiple_of 32
  values 2
{
  %0 = builtin thread_id.x : u32
  %1 = shared.load @d[%0] : f32
  store out[%0], %1 : f32
}
)";

constexpr std::string_view kNoShared = R"(kernel plain dtype=f32 mode=elementwise
  param out out: f32
  values 2
{
  %0 = builtin global_id.x : u32
  %1 = const 1 : f32
  store out[%0], %1 : f32
}
)";

codegen::TargetProfile with_limit(std::uint64_t bytes) {
  codegen::TargetProfile t = native_target();
  t.max_shared_bytes = bytes;
  return t;
}

TEST(PassLayoutSharedMemory, AlignsEveryAllocationTo16BytesInOrder) {
  EXPECT_EQ(run_pass(layout_shared_memory, kFourAllocations, native_target()),
            R"(kernel staging dtype=f32 mode=reduction
  param out out: f32
  shared a: f32[3] offset=0
  shared b: f16[5] offset=16
  shared c: u8[1] offset=32
  shared d: f32[16] offset=48
  shared_bytes 112
  rule multiple_of 32
  values 2
{
  %0 = builtin thread_id.x : u32
  %1 = shared.load @d[%0] : f32
  store out[%0], %1 : f32
}
)");
}

TEST(PassLayoutSharedMemory, RoundsTheTotalUpTo16Bytes) {
  ir::Kernel k = ir::parse_kernel(kFourAllocations);
  k.shared.pop_back();  // ends with c: 1 byte at 32
  layout_shared_memory(k, native_target());
  EXPECT_EQ(k.shared[2].offset, 32u);
  EXPECT_EQ(k.shared_bytes, 48u);
}

// A tile of 16 rows of 64 bf16 elements in swizzled rows, and a scratch word in order.
constexpr std::string_view kSwizzled = R"(kernel tiles dtype=bf16 mode=reduction
  param out out: bf16
  shared t: bf16[1024] swizzle 64
  shared s: f32[1]
  rule multiple_of 32
  values 2
{
  %0 = builtin thread_id.x : u32
  %1 = shared.load @t[%0] : bf16
  store out[%0], %1 : bf16
}
)";

TEST(PassLayoutSharedMemory, KeepsSwizzledRowsWhereTheTargetReadsThem) {
  const ir::Kernel k = apply(layout_shared_memory, kSwizzled, native_target());
  EXPECT_EQ(k.shared[0].swizzle, 64u);
  EXPECT_EQ(k.shared[1].swizzle, 0u);
  EXPECT_NE(text_of(k).find("shared t: bf16[1024] swizzle 64 offset=0"), std::string::npos)
      << text_of(k);
}

TEST(PassLayoutSharedMemory, PutsElementsInOrderWhereFragmentsReadFixedStrides) {
  codegen::TargetProfile metal = metal31_target();
  metal.swizzled_shared = false;
  codegen::TargetProfile wmma = native_target();
  wmma.swizzled_shared = false;
  for (const codegen::TargetProfile& t : {metal, wmma}) {
    const ir::Kernel k = apply(layout_shared_memory, kSwizzled, t);
    EXPECT_EQ(k.shared[0].swizzle, 0u) << t.name;
    EXPECT_EQ(k.shared_bytes, 2064u) << t.name << ": the placement costs no bytes";
  }
}

TEST(PassLayoutSharedMemory, KernelWithoutSharedMemoryNeedsNone) {
  EXPECT_EQ(run_pass(layout_shared_memory, kNoShared, native_target()),
            text_of(ir::parse_kernel(kNoShared)));
}

TEST(PassLayoutSharedMemory, AcceptsATotalExactlyAtTheLimit) {
  const ir::Kernel k = apply(layout_shared_memory, kFourAllocations, with_limit(112));
  EXPECT_EQ(k.shared_bytes, 112u);
}

TEST(PassLayoutSharedMemory, RefusesAKernelOverTheLimitNamingEveryAllocation) {
  ir::Kernel k = ir::parse_kernel(kFourAllocations);
  try {
    layout_shared_memory(k, with_limit(96));
    FAIL() << "expected iron::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "kernel staging: needs 112 bytes of threadgroup memory, more than the 96 bytes "
              "target sm_90 allows:\n"
              "  @a: f32[3] at bytes [0, 12)\n"
              "  @b: f16[5] at bytes [16, 26)\n"
              "  @c: u8[1] at bytes [32, 33)\n"
              "  @d: f32[16] at bytes [48, 112)");
  }
  EXPECT_EQ(k.shared_bytes, 0u) << "a refused kernel keeps its fields";
}

// A ring's 4 stages of 8 bf16 (after expand_pipelines), an epilogue's 3 f32 over them, and a
// word after.
constexpr std::string_view kOverlay = R"(kernel staged dtype=f32 mode=reduction
  param out out: f32
  shared ring: bf16[32]
  shared staged: f32[%] overlays ring
  shared word: f32[1]
  rule multiple_of 32
  values 2
{
  %0 = builtin thread_id.x : u32
  %1 = shared.load @staged[%0] : f32
  store out[%0], %1 : f32
}
)";

std::string overlay_of(std::uint32_t elements) {
  std::string text(kOverlay);
  text.replace(text.find('%'), 1, std::to_string(elements));
  return text;
}

TEST(PassLayoutSharedMemory, PlacesAnOverlayAtItsBaseAndCountsNoBytesForIt) {
  const ir::Kernel k = apply(layout_shared_memory, overlay_of(16), native_target());
  EXPECT_EQ(k.shared[1].offset, k.shared[0].offset);
  EXPECT_EQ(k.shared[2].offset, 64u);
  EXPECT_EQ(k.shared_bytes, 80u);
  EXPECT_NE(text_of(k).find("shared staged: f32[16] overlays ring offset=0"), std::string::npos)
      << text_of(k);
}

// A ring that this target keeps at fewer stages than the overlay needs: the overlay takes bytes
// of its own after its base's, and is declared as an allocation of its own.
TEST(PassLayoutSharedMemory, GivesAnOverlayWiderThanItsBaseBytesOfItsOwn) {
  const ir::Kernel k = apply(layout_shared_memory, overlay_of(17), native_target());
  EXPECT_EQ(k.shared[0].offset, 0u);
  EXPECT_EQ(k.shared[1].offset, 64u);
  EXPECT_EQ(k.shared[2].offset, 144u) << "past the staging's 68 bytes, aligned";
  EXPECT_EQ(k.shared_bytes, 160u);
  EXPECT_EQ(k.shared[1].overlays, -1);
  EXPECT_NE(text_of(k).find("shared staged: f32[17] offset=64\n"), std::string::npos) << text_of(k);
}

// Two 60 KB allocations on the two sides of a branch (the condition `%C`: on constexpr n, a
// launch constant, or on the thread's index), and a small one used after it.
constexpr std::string_view kSides = R"(kernel sides dtype=f32 mode=reduction
  param out out: f32
  param constexpr n: u32
  shared a: f32[15360]
  shared b: f32[15360]
  shared c: f32[4]
  rule exactly 32
  values 8
{
  %0 = constexpr n : u32
  %1 = builtin thread_id.x : u32
  %2 = const 0 : u32
  %3 = eq %C, %2 : bool
  %7 = const 1 : f32
  if %3 {
    shared.store @a[%1], %7 : f32
    %4 = shared.load @a[%1] : f32
    shared.store @c[%1], %4 : f32
  } else {
    shared.store @b[%1], %7 : f32
    %5 = shared.load @b[%1] : f32
    shared.store @c[%1], %5 : f32
  }
  %6 = shared.load @c[%1] : f32
  store out[%1], %6 : f32
}
)";

std::string sides_on(std::string_view condition) {
  std::string text(kSides);
  text.replace(text.find("%C"), 2, condition);
  return text;
}

codegen::TargetProfile cuda_with_room() { return with_limit(std::uint64_t{227} * 1024); }

TEST(PassLayoutSharedMemory, SidesOfALaunchConstantBranchShareBytesOnCuda) {
  const ir::Kernel k = apply(layout_shared_memory, sides_on("%0"), cuda_with_room());
  EXPECT_EQ(k.shared[0].offset, 0u);
  EXPECT_EQ(k.shared[1].offset, 0u);  // a launch takes one side: b reuses a's bytes
  EXPECT_EQ(k.shared[2].offset, 61440u);
  EXPECT_EQ(k.shared_bytes, 61456u);
}

TEST(PassLayoutSharedMemory, SidesOfAPerThreadBranchKeepTheirOwnBytes) {
  const ir::Kernel k = apply(layout_shared_memory, sides_on("%1"), cuda_with_room());
  EXPECT_EQ(k.shared[1].offset, 61440u);  // both sides run in one launch
  EXPECT_EQ(k.shared[2].offset, 122880u);
  EXPECT_EQ(k.shared_bytes, 122896u);
}

TEST(PassLayoutSharedMemory, MetalKeepsEveryAllocationApartWhereTheyFit) {
  codegen::TargetProfile metal = metal31_target();
  metal.max_shared_bytes = std::uint64_t{227} * 1024;
  const ir::Kernel k = apply(layout_shared_memory, sides_on("%0"), metal);
  EXPECT_EQ(k.shared[1].offset, 61440u);  // one threadgroup array an allocation
}

/// The sides of a branch on `condition`, 16 KB each: 32 KB and 16 bytes apart, past Metal's 32 KB.
std::string sixteen_kb_sides_on(std::string_view condition) {
  std::string text = sides_on(condition);
  for (std::size_t at = text.find("[15360]"); at != std::string::npos; at = text.find("[15360]")) {
    text.replace(at, 7, "[4096]");
  }
  return text;
}

TEST(PassLayoutSharedMemory, MetalSharesTheSidesOfALaunchConstantBranchPastItsLimit) {
  const ir::Kernel k = apply(layout_shared_memory, sixteen_kb_sides_on("%0"), metal31_target());
  EXPECT_EQ(k.shared[1].offset, 0u);  // b reuses a's bytes, a view of one block
  EXPECT_EQ(k.shared[2].offset, 16384u);
  EXPECT_EQ(k.shared_bytes, 16400u);
  EXPECT_TRUE(codegen::allocations_share_bytes(k));
}

TEST(PassLayoutSharedMemory, MetalRefusesPerThreadSidesPastItsLimit) {
  EXPECT_THROW(apply(layout_shared_memory, sixteen_kb_sides_on("%1"), metal31_target()),
               TargetLimitError);
}

TEST(PassLayoutSharedMemory, StaticMemoryKeepsEveryAllocationApart) {
  std::string text = sides_on("%0");
  for (std::size_t at = text.find("[15360]"); at != std::string::npos; at = text.find("[15360]")) {
    text.replace(at, 7, "[64]");
  }
  const ir::Kernel k = apply(layout_shared_memory, text, cuda_with_room());
  EXPECT_EQ(k.shared[1].offset, 256u);  // static memory: one __shared__ array an allocation
  EXPECT_EQ(k.shared_bytes, 528u);
}

TEST(PassLayoutSharedMemory, SharedSidesStayDynamicShared) {
  std::string text = sides_on("%0");
  for (std::size_t at = text.find("[15360]"); at != std::string::npos; at = text.find("[15360]")) {
    text.replace(at, 7, "[8192]");  // 32 KB a side: 64 KB apart, 32 KB shared
  }
  const ir::Kernel k = apply(layout_shared_memory, text, cuda_with_room());
  EXPECT_EQ(k.shared[1].offset, 0u);
  EXPECT_EQ(k.shared_bytes, 49168u);  // raised past the static limit: views need the dynamic block
}

}  // namespace
}  // namespace iron::pass_test
