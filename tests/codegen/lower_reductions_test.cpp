/// lower_reductions, IR in and out: the lowering, identities, allocation names, nesting.
#include "iron/codegen/passes/lower_reductions.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "iron/dsl/kernel.hpp"
#include "pass_test_harness.hpp"
#include "test_target_profiles.hpp"

namespace iron::pass_test {
namespace {

using codegen::lower_reductions;

constexpr std::string_view kRowSum = R"(kernel rowsum dtype=f32 mode=reduction
  param in inp: f32
  param out out: f32
  rule multiple_of 32
  values 4
{
  %0 = builtin global_id.x : u32
  %1 = load inp[%0] : f32
  %2 = reduce.sum %1 : f32
  %3 = builtin group_id.x : u32
  store out[%3], %2 : f32
}
)";

TEST(PassLowerReductions, SumBecomesTwoSimdSumsAroundSharedPartialsAndTwoBarriers) {
  EXPECT_EQ(run_pass(lower_reductions, kRowSum), R"(kernel rowsum dtype=f32 mode=reduction
  param in inp: f32
  param out out: f32
  shared reduce_partials0: f32[32]
  rule multiple_of 32
  values 17
{
  %0 = builtin global_id.x : u32
  %1 = load inp[%0] : f32
  %4 = builtin lane : u32
  %5 = builtin simdgroup : u32
  %6 = builtin simdgroup_count : u32
  %7 = simd.sum %1 : f32
  %8 = const 0 : u32
  %9 = eq %4, %8 : bool
  if %9 {
    shared.store @reduce_partials0[%5], %7 : f32
  }
  barrier
  %10 = const 1 : u32
  %11 = sub %6, %10 : u32
  %12 = min %4, %11 : u32
  %13 = shared.load @reduce_partials0[%12] : f32
  %14 = lt %4, %6 : bool
  %15 = const 0 : f32
  %16 = select %14, %13, %15 : f32
  %2 = simd.sum %16 : f32
  barrier
  %3 = builtin group_id.x : u32
  store out[%3], %2 : f32
}
)");
}

/// `text` with every `from` replaced by `to`.
std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

/// A kernel reducing one value of type `dtype` with reduce.`op`, which already has a shared
/// allocation named reduce_partials0.
std::string one_reduction(std::string_view op, std::string_view dtype) {
  constexpr std::string_view kText = R"(kernel one dtype=f32 mode=reduction
  param out out: TYPE
  shared reduce_partials0: u32[4]
  rule multiple_of 32
  values 4
{
  %0 = builtin thread_id.x : u32
  %1 = cast %0 : TYPE
  %2 = reduce.OP %1 : TYPE
  %3 = builtin group_id.x : u32
  store out[%3], %2 : TYPE
}
)";
  return replace_all(replace_all(std::string(kText), "TYPE", dtype), "OP", op);
}

struct IdentityCase {
  const char* op;
  const char* dtype;
  const char* identity;  ///< the constant lanes past the last simdgroup contribute
};

void PrintTo(const IdentityCase& c, std::ostream* os) {
  *os << "reduce." << c.op << " : " << c.dtype;
}

class PassLowerReductionsIdentity : public ::testing::TestWithParam<IdentityCase> {};

TEST_P(PassLowerReductionsIdentity, OfTheOpAndType) {
  const IdentityCase& c = GetParam();
  const std::string out = run_pass(lower_reductions, one_reduction(c.op, c.dtype));
  const std::string dtype = c.dtype;
  EXPECT_NE(out.find("%15 = const " + std::string(c.identity) + " : " + dtype), std::string::npos)
      << out;
  EXPECT_NE(out.find("%2 = simd." + std::string(c.op) + " %16 : " + dtype), std::string::npos)
      << out;
  EXPECT_NE(out.find("shared reduce_partials1: " + dtype + "[32]"), std::string::npos) << out;
  EXPECT_EQ(out.find("= reduce."), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(
    PassLowerReductions, PassLowerReductionsIdentity,
    ::testing::Values(IdentityCase{"sum", "f32", "0"}, IdentityCase{"sum", "i32", "0"},
                      IdentityCase{"max", "f32", "-inf"}, IdentityCase{"min", "f16", "inf"},
                      IdentityCase{"max", "bf16", "-inf"},
                      IdentityCase{"max", "i32", "-2147483648"},
                      IdentityCase{"min", "i32", "2147483647"}, IdentityCase{"max", "u32", "0"},
                      IdentityCase{"min", "u32", "4294967295"}, IdentityCase{"max", "i8", "-128"},
                      IdentityCase{"min", "u16", "65535"}),
    [](const auto& info) { return std::string(info.param.op) + "_" + info.param.dtype; });

constexpr std::string_view kReduceInLoop = R"(kernel repeated dtype=f32 mode=reduction
  param in inp: f32
  param out out: f32
  param out counts: u32
  rule multiple_of 32
  values 9
{
  %0 = builtin thread_id.x : u32
  %1 = const 0 : u32
  %2 = const 4 : u32
  %3 = const 1 : u32
  for %4 = %1 to %2 step %3 : u32 {
    %5 = load inp[%0] : f32
    %6 = reduce.max %5 : f32
    %7 = reduce.min %6 : f32
    store out[%4], %7 : f32
  }
  %8 = reduce.sum %1 : u32
  store counts[%8], %8 : u32
}
)";

TEST(PassLowerReductions, EachReductionGetsItsOwnAllocationAndStaysInItsBlock) {
  const ir::Kernel k = apply(lower_reductions, kReduceInLoop, native_target());
  ASSERT_EQ(k.shared.size(), 3u);
  EXPECT_EQ(k.shared[0].name, "reduce_partials0");
  EXPECT_EQ(k.shared[1].name, "reduce_partials1");
  EXPECT_EQ(k.shared[2].name, "reduce_partials2");
  EXPECT_EQ(k.shared[2].dtype, DType::U32);
  const ir::Op& loop = k.body.ops[4];
  ASSERT_EQ(loop.kind, ir::OpKind::For);
  int barriers_in_loop = 0;
  ir::walk(loop.blocks[0], [&](const ir::Op& op) {
    barriers_in_loop += op.kind == ir::OpKind::Barrier;
    EXPECT_NE(ir::op_class(op.kind), ir::OpClass::Group);
  });
  EXPECT_EQ(barriers_in_loop, 4);
  EXPECT_EQ(k.body.ops.back().kind, ir::OpKind::Store);
  EXPECT_EQ(k.body.ops[k.body.ops.size() - 2].kind, ir::OpKind::Barrier);
}

TEST(PassLowerReductions, KernelsWithoutReductionsStayAsTheyAre) {
  constexpr std::string_view kCopy = R"(kernel copy dtype=f32 mode=elementwise
  param in inp: f32
  param out out: f32
  values 2
{
  %0 = builtin global_id.x : u32
  %1 = load inp[%0] : f32
  store out[%0], %1 : f32
}
)";
  EXPECT_EQ(run_pass(lower_reductions, kCopy), text_of(ir::parse_kernel(kCopy)));
}

TEST(PassLowerReductions, LibraryKernelsLoseEveryReduceAndStillVerify) {
  for (const char* name : {"iron_softmax", "iron_rms_norm"}) {
    for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
      ir::Kernel k = dsl::kernel_ir_for(name, dtype);
      int reductions = 0;
      ir::walk(k.body, [&](const ir::Op& op) {
        reductions += ir::op_class(op.kind) == ir::OpClass::Group;
      });
      lower_reductions(k, native_target());
      EXPECT_TRUE(ir::verify(k).empty()) << name << ": " << ir::verify(k).front();
      ir::walk(k.body, [&](const ir::Op& op) {
        EXPECT_NE(ir::op_class(op.kind), ir::OpClass::Group) << name;
      });
      EXPECT_EQ(k.shared.size(), static_cast<std::size_t>(reductions)) << name;
    }
  }
}

}  // namespace
}  // namespace iron::pass_test
