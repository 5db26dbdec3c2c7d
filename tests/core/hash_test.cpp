/// Structural hash: blind to value numbering and source locations, sensitive to everything else.
#include "iron/core/hash.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"

namespace iron::ir {
namespace {

constexpr std::string_view kKernel =
    R"(kernel iron_rms dtype=bf16 mode=reduction  ; kernels/norm/rms.cpp:5
  param in x: bf16
  param out y: bf16
  param constexpr n: u32
  shared partial: f32[32]
  rule multiple_of 32
  rule at_most n/2
  values 16
{
  %0 = builtin thread_id.x : u32  ; kernels/norm/rms.cpp:7
  %1 = builtin group_size.x : u32
  %2 = constexpr n : u32
  %3 = const 0 : f32
  %4 = var %3 : f32
  for %5 = %0 to %2 step %1 : u32 {  ; kernels/norm/rms.cpp:9
    %6 = load x[%5] : bf16
    %7 = cast %6 : f32
    %8 = var.load %4 : f32
    %9 = fma %7, %7, %8 : f32
    var.store %4, %9 : f32
  }
  %10 = var.load %4 : f32
  %11 = reduce.sum %10 : f32
  %12 = const 0 : u32
  %13 = eq %0, %12 : bool
  if %13 {
    %14 = rsqrt %11 : f32
    %15 = cast %14 : bf16
    store y[%0], %15 : bf16  ; kernels/norm/rms.cpp:14
  }
}
)";

std::uint64_t hash_of(std::string_view text) { return structural_hash(parse_kernel(text)); }

/// kKernel with the first `from` replaced by `to`.
std::string edited(std::string_view from, std::string_view to) {
  std::string text(kKernel);
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

void renumber(Block& block, const std::function<ValueId(ValueId)>& f) {
  for (Op& op : block.ops) {
    if (op.result != kNoValue) op.result = f(op.result);
    for (ValueId& a : op.args) a = f(a);
    for (Block& b : op.blocks) renumber(b, f);
  }
}

TEST(IrHash, IsDeterministic) {
  EXPECT_EQ(hash_of(kKernel), hash_of(kKernel));
  EXPECT_EQ(hash_of(kKernel), hash_of(print_kernel(parse_kernel(kKernel))));
}

TEST(IrHash, IgnoresValueNumbering) {
  Kernel k = parse_kernel(kKernel);
  const std::uint64_t before = structural_hash(k);
  k.num_values = 100;
  renumber(k.body, [](ValueId id) { return 99 - 3 * id; });
  EXPECT_NE(print_kernel(k), kKernel);
  EXPECT_EQ(structural_hash(k), before);
}

TEST(IrHash, IgnoresSourceLocations) {
  const std::uint64_t h = hash_of(kKernel);
  EXPECT_EQ(hash_of(print_kernel(parse_kernel(kKernel), {.locations = false})), h);
  EXPECT_EQ(hash_of(edited("rms.cpp:9", "other.cpp:90")), h);
  EXPECT_EQ(hash_of(edited("  ; kernels/norm/rms.cpp:5", "")), h);
}

TEST(IrHash, SeesEveryChange) {
  const std::uint64_t h = hash_of(kKernel);
  const std::pair<std::string_view, std::string_view> edits[] = {
      {"%3 = const 0 : f32", "%3 = const 1 : f32"},                // a constant
      {"%3 = const 0 : f32", "%3 = const -0 : f32"},               // the sign of zero
      {"%12 = const 0 : u32", "%12 = const 0 : i32"},              // an op's type
      {"rule multiple_of 32", "rule multiple_of 64"},              // a rule's bound
      {"rule at_most n/2", "rule at_most n/4"},                    // a rule's divisor
      {"rule at_most n/2", "rule at_least n/2"},                   // a rule's kind
      {"  rule at_most n/2\n", ""},                                // a rule dropped
      {"iron_rms", "iron_rms2"},                                   // the kernel name
      {"dtype=bf16", "dtype=f16"},                                 // the kernel dtype
      {"mode=reduction", "mode=tiled"},                            // the dispatch mode
      {"param constexpr n: u32", "param constexpr n: i32"},        // a param's type
      {"param in x: bf16", "param out x: bf16"},                   // a param's kind
      {"shared partial:", "shared partials:"},                     // a shared allocation's name
      {"partial: f32[32]", "partial: f32[64]"},                    // a shared size
      {"%9 = fma %7, %7, %8", "%9 = fma %7, %8, %7"},              // operand order
      {"reduce.sum", "reduce.max"},                                // an op kind
      {"builtin thread_id.x", "builtin thread_id.y"},              // a builtin axis
      {"for %5 = %0 to %2 step %1", "for %5 = %0 to %2 step %0"},  // a loop bound
      {"step %1 : u32 {", "step %1 rolled : u32 {"},               // a loop kept rolled
      {"load x[%5] : bf16", "load x[%5] : bf16x8"},                // a vector width
      {"partial: f32[32]", "partial: f32[32] offset=64"},          // a shared offset
      {"store y[%0], %15", "store x[%0], %15"},                    // an access's target
      {"  rule multiple_of 32\n", "  shared_bytes 128\n  rule multiple_of 32\n"},  // layout size
  };
  for (const auto& [from, to] : edits) {
    EXPECT_NE(hash_of(edited(from, to)), h) << from << " -> " << to;
  }
}

TEST(IrHash, SeesTheLaneOfAnExtract) {
  const std::string text =
      "kernel k dtype=f32 mode=elementwise\n"
      "  param in x: f32\n"
      "  param out y: f32\n"
      "  values 3\n"
      "{\n"
      "  %0 = builtin global_id.x : u32\n"
      "  %1 = load x[%0] : f32x4\n"
      "  %2 = extract %1, 0 : f32\n"
      "  store y[%0], %2 : f32\n"
      "}\n";
  std::string other = text;
  other.replace(other.find("%1, 0"), 5, "%1, 3");
  EXPECT_NE(hash_of(other), hash_of(text));
}

TEST(IrHash, SeesParamNames) {
  std::string renamed = edited("param in x: bf16", "param in xs: bf16");
  renamed.replace(renamed.find("load x["), 7, "load xs[");
  EXPECT_NE(hash_of(renamed), hash_of(kKernel));
}

TEST(IrHash, SeesBlockStructure) {
  // The same ops, with the final store moved out of the branch.
  const std::string moved = edited("    store y[%0], %15 : bf16  ; kernels/norm/rms.cpp:14\n  }\n",
                                   "  }\n  store y[%0], %15 : bf16\n");
  EXPECT_NE(hash_of(moved), hash_of(kKernel));
}

}  // namespace
}  // namespace iron::ir
