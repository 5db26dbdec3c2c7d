/// layout_shared_memory: 16-byte aligned offsets in order, the kernel's total, the target limit.
#include "iron/codegen/passes/layout_shared_memory.hpp"

#include <gtest/gtest.h>

#include <string>

#include "iron/core/error.hpp"
#include "passes2_helpers.hpp"

namespace iron::passes2_test {
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
  const ir::Kernel k = apply(layout_shared_memory, kFourAllocations, native_target());
  ASSERT_EQ(k.shared.size(), 4u);
  EXPECT_EQ(k.shared[0].offset, 0u);
  EXPECT_EQ(k.shared[1].offset, 16u);
  EXPECT_EQ(k.shared[2].offset, 32u);
  EXPECT_EQ(k.shared[3].offset, 48u);
  EXPECT_EQ(k.shared_bytes, 112u);
}

TEST(PassLayoutSharedMemory, RoundsTheTotalUpTo16Bytes) {
  ir::Kernel k = ir::parse_kernel(kFourAllocations);
  k.shared.pop_back();  // ends with c: 1 byte at 32
  layout_shared_memory(k, native_target());
  EXPECT_EQ(k.shared_bytes, 48u);
}

TEST(PassLayoutSharedMemory, KernelWithoutSharedMemoryNeedsNone) {
  const ir::Kernel k = apply(layout_shared_memory, kNoShared, native_target());
  EXPECT_EQ(k.shared_bytes, 0u);
}

TEST(PassLayoutSharedMemory, LeavesTheOpsAndAStableLayoutUnchanged) {
  ir::Kernel k = ir::parse_kernel(kFourAllocations);
  const std::string before = text_of(k);
  layout_shared_memory(k, native_target());
  const ir::Kernel once = k;
  layout_shared_memory(k, native_target());
  EXPECT_EQ(text_of(k), before);
  for (std::size_t i = 0; i < k.shared.size(); ++i)
    EXPECT_EQ(k.shared[i].offset, once.shared[i].offset);
  EXPECT_EQ(k.shared_bytes, once.shared_bytes);
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
    const std::string what = e.what();
    EXPECT_NE(what.find("kernel staging"), std::string::npos) << what;
    EXPECT_NE(what.find("112 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("96 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("sm_90"), std::string::npos) << what;
    for (const char* name :
         {"@a: f32[3]", "@b: f16[5]", "@c: u8[1]", "@d: f32[16], 64 bytes at offset 48"}) {
      EXPECT_NE(what.find(name), std::string::npos) << name << " missing in:\n" << what;
    }
  }
  EXPECT_EQ(k.shared_bytes, 0u) << "a refused kernel keeps its fields";
}

}  // namespace
}  // namespace iron::passes2_test
