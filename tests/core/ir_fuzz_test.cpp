/// Fuzzing the IR text parser and the verifier: thousands of seeded mutations of the printed IR
/// of library kernels (as traced and as lowered for sm_90) must each parse and verify, or fail
/// with an iron::Error; never crash, hang, throw anything else or allocate past a limit. A
/// mutant that verifies must print back to text that parses to the same text.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../fuzz/fuzz.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/error.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/core/verifier.hpp"
#include "iron/dsl/kernel.hpp"

namespace iron::ir {
namespace {

constexpr int kCases = 3000;
constexpr std::uint64_t kMemoryLimit = std::uint64_t{256} << 20;  // beyond the start
constexpr int kCpuSeconds = 60;

struct Input {
  std::string name;
  std::string text;
};

/// The printed IR of a spread of library kernels (elementwise, row reductions, scans, shared
/// memory, integer decoding, variants), traced in f16 and lowered for sm_90.
std::vector<Input> real_inputs() {
  std::vector<Input> inputs;
  for (const char* name : {"iron_scale", "iron_softmax", "iron_rms_norm", "iron_prefix_sum",
                           "iron_argmax", "iron_dequant_affine_b4_g32", "iron_hadamard_n64"}) {
    const Kernel traced = dsl::kernel_ir_for(name, DType::F16);
    inputs.push_back({fmt::format("{} (traced)", name), print_kernel(traced)});
    const auto lowered = codegen::compile_kernel(traced, codegen::TargetProfile::cuda(90));
    inputs.push_back({fmt::format("{} (lowered)", name), print_kernel(lowered.lowered)});
  }
  return inputs;
}

TEST(IrFuzz, TheRealInputsParseAndVerify) {
  for (const Input& in : real_inputs()) {
    const Kernel k = parse_kernel(in.text);
    EXPECT_EQ(verify(k), std::vector<std::string>{}) << in.name;
    EXPECT_EQ(print_kernel(k), in.text) << in.name;
  }
}

TEST(IrFuzz, MutantsParseOrFailCleanlyWithinTheMemoryLimit) {
  const std::vector<Input> inputs = real_inputs();
  const std::string problem =
      fuzz::run_limited(kMemoryLimit, kCpuSeconds, [&](fuzz::Progress& progress) {
        fuzz::Mutator mutator(0x1e0f22);
        int accepted = 0, rejected = 0;
        for (int i = 0; i < kCases; ++i) {
          const Input& in = inputs[static_cast<std::size_t>(i) % inputs.size()];
          progress.at(fmt::format("making mutation {} of {}", i, in.name));
          const fuzz::Mutant m = mutator.mutate(in.text);
          const std::string what = fmt::format("mutation {} of {}: {}", i, in.name, m.what);
          progress.at(what);
          try {
            const Kernel k = parse_kernel(m.text);
            if (!verify(k).empty()) {
              ++rejected;
              continue;
            }
            const std::string printed = print_kernel(k);
            if (print_kernel(parse_kernel(printed)) != printed) {
              return fmt::format("{}: verifies, but its printed form does not parse back to itself",
                                 what);
            }
            ++accepted;
          } catch (const Error&) {
            ++rejected;
          } catch (const std::exception& e) {
            return fmt::format("{}: threw '{}', not an iron::Error", what, e.what());
          }
        }
        if (accepted == 0 || rejected == 0) {
          return fmt::format("{} mutants verified and {} were rejected: the mutator is broken",
                             accepted, rejected);
        }
        return std::string();
      });
  EXPECT_EQ(problem, "");
}

}  // namespace
}  // namespace iron::ir
