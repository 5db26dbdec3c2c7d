// require_multiple_of: traced into the contract with its line, printed and parsed in the IR
// header, hashed and verified, checked by the dispatch guard before every launch (the library's
// kernels refuse sizes that break their rules), and taken as a fact by vectorize.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "guard_refusal.hpp"
#include "iron/codegen/passes/vectorize.hpp"
#include "iron/codegen/pipeline.hpp"
#include "iron/core/hash.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"
#include "iron/iron.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/runtime/dispatch_guard.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
namespace ir = iron::ir;
namespace runtime = iron::runtime;

const std::string kFile = "tests/dsl/require_multiple_test.cpp:";

int g_dispatch_line = 0;
int g_rule_line = 0;
// A row copy whose rows are whole 16-byte vectors of f16/bf16.
IRON_KERNEL(rule_rows, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  g_dispatch_line = __LINE__ + 1;
  dispatch(reduction, {multiple_of(32)});
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(out, "[groups.x, n]");
  g_rule_line = __LINE__ + 1;
  require_multiple_of(n, 8);
  auto base = program_id<0>() * n;
  for (auto j : range(thread_id<0>(), n, group_size<0>())) {
    store(out[base + j], load(inp[base + j]));
  }
}

std::string where(int line) { return kFile + std::to_string(line); }

TEST(RequireMultiple, IsTracedWithItsLine) {
  const ir::Kernel k = kernel_ir_for("rule_rows", DType::BF16);
  ASSERT_EQ(k.dispatch.constexpr_rules.size(), 1u);
  const ir::ConstexprRule& r = k.dispatch.constexpr_rules[0];
  EXPECT_EQ(r.constexpr_name, "n");
  EXPECT_EQ(r.multiple, 8);
  EXPECT_EQ(iron::format_loc(r.loc), where(g_rule_line));
  const std::string text = ir::print_kernel(k);
  EXPECT_NE(text.find("  require n multiple_of 8  ; " + where(g_rule_line) + "\n"),
            std::string::npos)
      << text;
}

constexpr std::string_view kText = R"(kernel t dtype=f32 mode=elementwise  ; k.cpp:1
  param out out: f32
  param constexpr n: u32
  param constexpr m: i32
  param constexpr scale: f32
  require n multiple_of 8  ; k.cpp:3
  require m multiple_of 4  ; k.cpp:4
  values 2
{
  %0 = builtin global_id.x : u32
  %1 = const 0 : f32
  store out[%0], %1 : f32
}
)";

TEST(RequireMultiple, RoundTripsThroughText) {
  const ir::Kernel k = ir::parse_kernel(kText);
  ASSERT_EQ(k.dispatch.constexpr_rules.size(), 2u);
  EXPECT_EQ(k.dispatch.constexpr_rules[1], (ir::ConstexprRule{"m", 4, {"k.cpp", 4}}));
  EXPECT_EQ(ir::print_kernel(k), kText);
  EXPECT_TRUE(ir::verify(k).empty());
  const std::string bare = ir::print_kernel(k, {.locations = false});
  EXPECT_NE(bare.find("  require n multiple_of 8\n"), std::string::npos) << bare;
  EXPECT_EQ(ir::print_kernel(ir::parse_kernel(bare), {.locations = false}), bare);
}

std::string with(std::string_view from, std::string_view to) {
  std::string text(kText);
  return text.replace(text.find(from), from.size(), to);
}

TEST(RequireMultiple, TheHashCoversTheRuleNotItsLine) {
  const auto hash = [](const std::string& text) {
    return ir::structural_hash(ir::parse_kernel(text));
  };
  const std::uint64_t h = hash(std::string(kText));
  EXPECT_EQ(hash(with("  ; k.cpp:3", "  ; other.cpp:30")), h);
  EXPECT_NE(hash(with("require n multiple_of 8", "require n multiple_of 16")), h);
  EXPECT_NE(hash(with("  require m multiple_of 4  ; k.cpp:4\n", "")), h);
}

TEST(RequireMultiple, ParseErrorsAndTheVerifierNameTheRule) {
  try {
    ir::parse_kernel(with("require n multiple_of 8", "require n multiple 8"));
    FAIL() << "parsed";
  } catch (const iron::IrError& e) {
    EXPECT_NE(std::string(e.what()).find("line 6"), std::string::npos) << e.what();
  }
  const auto problems = [](const std::string& text) {
    std::string all;
    for (const auto& p : ir::verify(ir::parse_kernel(text))) all += p + "\n";
    return all;
  };
  EXPECT_EQ(problems(with("require n multiple_of 8", "require scale multiple_of 8")),
            "kernel t: k.cpp:3: require scale multiple_of 8: 'scale' is not an integer constexpr "
            "parameter\n");
  EXPECT_EQ(problems(with("require n multiple_of 8", "require out multiple_of 8")),
            "kernel t: k.cpp:3: require out multiple_of 8: 'out' is not an integer constexpr "
            "parameter\n");
  EXPECT_EQ(problems(with("require n multiple_of 8", "require n multiple_of 0")),
            "kernel t: k.cpp:3: require n multiple_of 0: the multiple must be positive\n");
}

/// Two rows of `n` f32 elements, every byte `fill`.
runtime::HostTensor two_rows(std::size_t n, std::byte fill = std::byte{0}) {
  return {DType::F32, std::vector<std::byte>(2 * n * sizeof(float), fill)};
}

TEST(RequireMultiple, ABackendRefusesABrokenRuleBeforeAnythingRuns) {
  const ir::Kernel k = kernel_ir_for("rule_rows", DType::F32);
  runtime::HostTensor inp = two_rows(36);
  runtime::HostTensor out = two_rows(36, std::byte{0x7f});
  auto sim = runtime::make_backend("sim");
  try {
    sim->run({&k, {&inp, &out, runtime::Scalar{DType::U32, 0.0, 36}}, {{2, 1, 1}, {32, 1, 1}}});
    FAIL() << "n = 36 was not refused";
  } catch (const iron::DispatchError& e) {
    EXPECT_EQ(std::string(e.what()),
              "rule_rows: dispatch refused, nothing launched: constexpr n (36) must be a multiple "
              "of 8 (require_multiple_of(...) at " +
                  where(g_rule_line) + ", dispatch(...) at " + where(g_dispatch_line) + ")");
  }
  EXPECT_EQ(out.bytes[0], std::byte{0x7f}) << "nothing ran";
  runtime::HostTensor inp40 = two_rows(40);
  runtime::HostTensor out40 = two_rows(40);
  EXPECT_NO_THROW(sim->run(
      {&k, {&inp40, &out40, runtime::Scalar{DType::U32, 0.0, 40}}, {{2, 1, 1}, {32, 1, 1}}}));
}

// With the rule, the row loop's 16-byte version needs no `n % 8` test and no fallback: the
// vector loop runs alone.
TEST(RequireMultiple, VectorizeTakesTheRuleAsAFact) {
  ir::Kernel k = kernel_ir_for("rule_rows", DType::BF16);
  const auto target = iron::codegen::TargetProfile::cuda(90);
  for (const auto& pass : iron::codegen::pipeline_passes()) {
    if (pass.name == "vectorize") break;
    pass.run(k, target);
  }
  iron::codegen::vectorize(k, target);
  int branches = 0;
  int loops = 0;
  int vector_accesses = 0;
  ir::walk(k.body, [&](const ir::Op& op) {
    branches += op.kind == ir::OpKind::If;
    loops += op.kind == ir::OpKind::For;
    vector_accesses += op.lanes == 8;
  });
  EXPECT_EQ(branches, 0) << ir::print_kernel(k);
  EXPECT_EQ(loops, 1) << ir::print_kernel(k);
  EXPECT_EQ(vector_accesses, 2) << ir::print_kernel(k);
}

/// The guard's view of a launch of library kernel `name` with constexprs `values`.
std::string refusal(const std::string& name, const std::map<std::string, std::int64_t>& values,
                    const std::map<std::string, double>& floats = {}) {
  return iron::test_support::guard_refusal(name, {values, floats});
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(RequireMultiple, LibraryKernelsRefuseSizesThatBreakTheirRules) {
  const std::map<std::string, std::int64_t> kv = {
      {"new_tokens", 5}, {"heads", 3}, {"head_dim", 36}, {"max_seq", 37}};
  EXPECT_TRUE(contains(refusal("iron_kv_append", kv),
                       "iron_kv_append: dispatch refused, nothing launched: constexpr head_dim "
                       "(36) must be a multiple of 8 (require_multiple_of(...) at "
                       "kernels/kv_cache/append.cpp:"));
  std::map<std::string, std::int64_t> rope = {
      {"tokens", 1}, {"heads", 1}, {"head_dim", 2}, {"rot_dim", 2}};
  for (const char* kernel : {"iron_rope_neox", "iron_rope_inplace_gptj"}) {
    EXPECT_TRUE(contains(refusal(kernel, rope, {{"base", 10000.0}}),
                         "constexpr head_dim (2) must be a multiple of 8"));
  }
  rope["head_dim"] = 64;
  rope["rot_dim"] = 40;
  EXPECT_TRUE(contains(refusal("iron_rope_table_gptj", rope),
                       "constexpr rot_dim (40) must be a multiple of 16 (require_multiple_of(...) "
                       "at kernels/rope/rope.cpp:"));
  for (const char* kernel : {"iron_dequant_affine_b4_g64", "iron_dequant_mxfp4"}) {
    EXPECT_TRUE(contains(refusal(kernel, {{"words", 37}}),
                         "constexpr words (37) must be a multiple of 4 (require_multiple_of(...) "
                         "at kernels/quant/dequant_"));
  }
  // The quantized matrix products: k is whole groups of the weight's format.
  const std::map<std::string, std::int64_t> gemm = {{"m", 1}, {"n", 1}, {"k", 96}};
  for (const char* kernel : {"iron_gemm_affine_b4_g64", "iron_gemv_affine_b4_g64"}) {
    EXPECT_TRUE(contains(refusal(kernel, gemm), "constexpr k (96) must be a multiple of 64"))
        << kernel;
  }
  for (const char* kernel : {"iron_gemm_mxfp4", "iron_gemv_mxfp4"}) {
    EXPECT_TRUE(contains(refusal(kernel, {{"m", 1}, {"n", 1}, {"k", 48}}),
                         "constexpr k (48) must be a multiple of 32"))
        << kernel;
  }
}

}  // namespace
