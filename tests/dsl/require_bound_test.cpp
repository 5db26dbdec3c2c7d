// require_at_most / require_at_least and occupancy: traced into the contract with their lines,
// printed and parsed in the IR header, hashed and verified; the dispatch guard refuses a launch
// outside a range before anything runs (the library's log-mel kernels among them), and the
// occupancy reaches CUDA's launch bounds.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "guard_refusal.hpp"
#include "iron/codegen/emit.hpp"
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

const std::string kFile = "tests/dsl/require_bound_test.cpp:";

int g_dispatch_line = 0;
int g_at_most_line = 0;
// Rows of n elements, of which the first `keep` are copied through a buffer of 64.
IRON_KERNEL(bounded_rows, (Tensor<T> inp, Out<T> out, Constexpr<u32> n, Constexpr<u32> keep)) {
  g_dispatch_line = __LINE__ + 1;
  dispatch(reduction, {multiple_of(32), at_most(256)});
  occupancy(4);
  grid("[any, 1, 1]");
  layout(inp, "[groups.x, n]");
  layout(out, "[groups.x, keep]");
  g_at_most_line = __LINE__ + 1;
  require_at_most(keep, "min(n, 64)");
  require_at_least(keep, "1");
  auto staged = shared<T>(64);
  auto base = program_id<0>() * n;
  for (auto j : range(thread_id<0>(), keep, group_size<0>())) store(staged[j], load(inp[base + j]));
  barrier();
  for (auto j : range(thread_id<0>(), keep, group_size<0>())) {
    store(out[program_id<0>() * keep + j], load(staged[j]));
  }
}

std::string where(int line) { return kFile + std::to_string(line); }

TEST(RequireBound, IsTracedWithItsLineAndPrinted) {
  const ir::Kernel k = kernel_ir_for("bounded_rows", DType::F32);
  ASSERT_EQ(k.dispatch.constexpr_bounds.size(), 2u);
  const ir::ConstexprBound& b = k.dispatch.constexpr_bounds[0];
  EXPECT_EQ(b.constexpr_name, "keep");
  EXPECT_EQ(b.relation, ir::GridRule::Relation::AtMost);
  EXPECT_EQ(iron::format_loc(b.loc), where(g_at_most_line));
  EXPECT_EQ(k.dispatch.occupancy, 4u);
  const std::string text = ir::print_kernel(k);
  EXPECT_NE(text.find("  require keep <= min(n, 64)  ; " + where(g_at_most_line) + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  require keep >= 1  ; "), std::string::npos) << text;
  EXPECT_NE(text.find("  occupancy 4\n"), std::string::npos) << text;
}

constexpr std::string_view kText = R"(kernel t dtype=f32 mode=elementwise  ; k.cpp:1
  param out out: f32
  param constexpr n: u32
  param constexpr m: i32
  param constexpr scale: f32
  rule at_most 256
  occupancy 2
  require n <= 2 * m + 1  ; k.cpp:3
  require m >= 4  ; k.cpp:4
  values 2
{
  %0 = builtin global_id.x : u32
  %1 = const 0 : f32
  store out[%0], %1 : f32
}
)";

std::string with(std::string_view from, std::string_view to) {
  std::string text(kText);
  return text.replace(text.find(from), from.size(), to);
}

TEST(RequireBound, RoundTripsThroughText) {
  const ir::Kernel k = ir::parse_kernel(kText);
  ASSERT_EQ(k.dispatch.constexpr_bounds.size(), 2u);
  EXPECT_EQ(k.dispatch.constexpr_bounds[1].relation, ir::GridRule::Relation::AtLeast);
  EXPECT_EQ(k.dispatch.occupancy, 2u);
  EXPECT_EQ(ir::print_kernel(k), kText);
  EXPECT_TRUE(ir::verify(k).empty());
  const std::string bare = ir::print_kernel(k, {.locations = false});
  EXPECT_EQ(ir::print_kernel(ir::parse_kernel(bare), {.locations = false}), bare);
}

TEST(RequireBound, TheHashCoversTheRangeAndTheOccupancyNotTheLine) {
  const auto hash = [](const std::string& text) {
    return ir::structural_hash(ir::parse_kernel(text));
  };
  const std::uint64_t h = hash(std::string(kText));
  EXPECT_EQ(hash(with("  ; k.cpp:3", "  ; other.cpp:30")), h);
  EXPECT_NE(hash(with("n <= 2 * m + 1", "n <= 2 * m")), h);
  EXPECT_NE(hash(with("n <= 2 * m + 1", "n >= 2 * m + 1")), h);
  EXPECT_NE(hash(with("  occupancy 2\n", "")), h);
  EXPECT_NE(hash(with("  occupancy 2\n", "  occupancy 3\n")), h);
}

std::string problems(const std::string& text) {
  std::string all;
  for (const auto& p : ir::verify(ir::parse_kernel(text))) all += p + "\n";
  return all;
}

TEST(RequireBound, ParseErrorsAndTheVerifierNameTheDeclaration) {
  for (const char* broken : {"require n == 4", "require n < 4", "require n <= (4"}) {
    try {
      ir::parse_kernel(with("require n <= 2 * m + 1", broken));
      FAIL() << broken << " parsed";
    } catch (const iron::IrError& e) {
      EXPECT_NE(std::string(e.what()).find("line 8"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(problems(with("require n <= 2 * m + 1", "require scale <= 4")),
            "kernel t: k.cpp:3: require scale <= 4: 'scale' is not an integer constexpr "
            "parameter\n");
  EXPECT_EQ(problems(with("require n <= 2 * m + 1", "require n <= scale")),
            "kernel t: k.cpp:3: require n <= scale: 'scale' is not an integer constexpr "
            "parameter\n");
  EXPECT_EQ(problems(with("  occupancy 2\n", "  occupancy 9\n")),
            "kernel t: occupancy 9: 9 groups of up to 256 threads exceed the 2048 threads a "
            "multiprocessor holds (declare a smaller at_most bound)\n");
  // Without a literal cap a group may have 1024 threads: two of them fill a multiprocessor.
  EXPECT_EQ(problems(with("  rule at_most 256\n", "")), "");
  EXPECT_EQ(problems(with("  rule at_most 256\n  occupancy 2\n", "  occupancy 3\n")),
            "kernel t: occupancy 3: 3 groups of up to 1024 threads exceed the 2048 threads a "
            "multiprocessor holds (declare a smaller at_most bound)\n");
}

/// `rows` rows of `n` f32 elements, every byte `fill`.
runtime::HostTensor rows_of(std::size_t rows, std::size_t n, std::byte fill = std::byte{0}) {
  return {DType::F32, std::vector<std::byte>(rows * n * sizeof(float), fill)};
}

TEST(RequireBound, ABackendRefusesALaunchOutsideTheRangeBeforeAnythingRuns) {
  const ir::Kernel k = kernel_ir_for("bounded_rows", DType::F32);
  auto sim = runtime::make_backend("sim");
  const auto launch = [&](std::uint32_t n, std::uint32_t keep, runtime::HostTensor& out) {
    runtime::HostTensor inp = rows_of(2, n);
    sim->run(
        {&k,
         {&inp, &out, runtime::Scalar{DType::U32, 0.0, n}, runtime::Scalar{DType::U32, 0.0, keep}},
         {{2, 1, 1}, {32, 1, 1}}});
  };
  runtime::HostTensor out = rows_of(2, 80, std::byte{0x7f});
  try {
    launch(100, 80, out);
    FAIL() << "keep = 80 was not refused";
  } catch (const iron::DispatchError& e) {
    EXPECT_EQ(std::string(e.what()),
              "bounded_rows: dispatch refused, nothing launched: constexpr keep (80) must be at "
              "most min(n, 64) = min(100, 64) = 64 (require_at_most(...) at " +
                  where(g_at_most_line) + ", dispatch(...) at " + where(g_dispatch_line) + ")");
  }
  EXPECT_EQ(out.bytes[0], std::byte{0x7f}) << "nothing ran";
  runtime::HostTensor none = rows_of(2, 1);
  try {
    launch(40, 0, none);
    FAIL() << "keep = 0 was not refused";
  } catch (const iron::DispatchError& e) {
    EXPECT_NE(std::string(e.what()).find("constexpr keep (0) must be at least 1"),
              std::string::npos)
        << e.what();
  }
  runtime::HostTensor fine = rows_of(2, 40);
  EXPECT_NO_THROW(launch(40, 40, fine));
}

TEST(Occupancy, ReachesCudaAsTheLaunchBoundsMinimumBlocks) {
  const auto target = iron::codegen::TargetProfile::cuda(90);
  const ir::Kernel lowered =
      iron::codegen::run_pipeline(kernel_ir_for("bounded_rows", DType::F32), target).kernel;
  const std::string cuda = iron::codegen::emit_cuda(lowered, target);
  EXPECT_NE(cuda.find("__launch_bounds__(256, 4) bounded_rows_f32("), std::string::npos) << cuda;
  // The library's out-of-place theta rope asks for three groups of 256 (bench/NOTES.md §31).
  const ir::Kernel rope =
      iron::codegen::run_pipeline(kernel_ir_for("iron_rope_neox", DType::BF16), target).kernel;
  EXPECT_NE(
      iron::codegen::emit_cuda(rope, target).find("__launch_bounds__(256, 3) iron_rope_neox_bf16("),
      std::string::npos);
}

/// The guard's view of a launch of library kernel `name` with constexprs `values`, in one group
/// of `threads`.
std::string refusal(const std::string& name, const std::map<std::string, std::int64_t>& values,
                    std::uint32_t threads = 256) {
  return iron::test_support::guard_refusal(name, {values, {}, threads});
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The log-mel kernels stage 16 frames at a hop of at most N/2 and reflect-pad by N/2.
TEST(RequireBound, TheLogMelKernelsRefuseAHopOrAClipTheirBuffersDoNotHold) {
  const std::map<std::string, std::int64_t> whisper = {
      {"batch", 1}, {"samples", 16000}, {"hop", 160}, {"n_mels", 80}};
  auto with_value = [&](const char* name, std::int64_t v) {
    auto values = whisper;
    values[name] = v;
    return values;
  };
  EXPECT_TRUE(contains(refusal("iron_audio_log_mel_n400", with_value("hop", 201)),
                       "constexpr hop (201) must be at most 200 (require_at_most(...) at "
                       "kernels/audio/log_mel.cpp:"));
  EXPECT_TRUE(contains(refusal("iron_audio_log_mel_n512", with_value("hop", 0)),
                       "constexpr hop (0) must be at least 1"));
  EXPECT_TRUE(contains(refusal("iron_audio_log_mel_n400", with_value("samples", 200)),
                       "constexpr samples (200) must be at least 201"));
  // N/2 itself is a hop the n512 kernel takes.
  EXPECT_FALSE(
      contains(refusal("iron_audio_log_mel_n512", with_value("hop", 256)), "constexpr hop"));
}

// The split decode's cross-warp partials hold rows of 256: a longer head is refused, by name.
TEST(RequireBound, TheDecodeKernelsRefuseAHeadTheirPartialsDoNotHold) {
  const std::map<std::string, std::int64_t> gqa = {
      {"batch", 1},      {"q_tokens", 1},   {"heads_q", 4},      {"heads_kv", 1},
      {"head_dim", 264}, {"max_seq", 64},   {"splits", 1},       {"window", 0},
      {"num_pages", 4},  {"page_size", 16}, {"pages_per_seq", 4}};
  for (const char* kernel : {"iron_sdpa_decode", "iron_sdpa_decode_paged"}) {
    EXPECT_TRUE(contains(refusal(kernel, gqa, 128), "constexpr head_dim (264) must be at most 256"))
        << kernel << ": " << refusal(kernel, gqa, 128);
  }
  auto empty = gqa;
  empty["head_dim"] = 0;
  EXPECT_TRUE(contains(refusal("iron_sdpa_decode", empty, 128),
                       "constexpr head_dim (0) must be at least 8"));
}

}  // namespace
