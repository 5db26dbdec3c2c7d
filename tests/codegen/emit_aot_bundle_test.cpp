/// The AOT bundle header: each form's typed launch function (parameters, constexpr carriers, its
/// cubins and literal thread rules, the launch rules in its comment), its host-side check
/// function, and the names it refuses.
/// Building a program against a real bundle and running it is the CMake test
/// aot_bundle_runs_without_iron.
#include <gtest/gtest.h>

#include <string>

#include "emit_test_helpers.hpp"
#include "emit_test_kernels.hpp"
#include "iron/codegen/aot_bundle.hpp"

namespace iron::emit_test {
namespace {

std::string function_of(const std::string& header, const std::string& symbol) {
  const auto begin = header.find("\n/// " + symbol.substr(0, symbol.rfind('_')) + " (");
  const auto end = header.find("\n}\n", begin);
  return begin == std::string::npos ? "" : header.substr(begin, end + 3 - begin);
}

TEST(EmitAotBundle, OneTypedLaunchFunctionPerForm) {
  const codegen::TargetProfile target = codegen::TargetProfile::cuda(90);
  const std::string header = codegen::emit_aot_header(
      {{lowered(kScaleIf, target),
        {{80, "scale_if_f16.sm_80.cubin", 0}, {90, "scale_if_f16.sm_90.cubin", 0}}},
       {lowered(kPrefix, target), {{90, "prefix_f32.sm_90.cubin", 65536}}}});
  EXPECT_EQ(function_of(header, "scale_if_f16"), R"(
/// scale_if (kernels/t.cpp:3) with T = f16: x in f16[], y out f16[], alpha f32, n u32, shift i32, flag bool.
/// Launch: threads at_most 256; threads exactly 128 (tpg: threads per group).
inline void scale_if_f16(
    Bundle& bundle,
    Stream stream,
    Dim3 groups,
    Dim3 threads,
    DevicePtr x,
    DevicePtr y,
    float alpha,
    std::uint32_t n,
    std::int32_t shift,
    bool flag) {
  static const detail::Form form{"scale_if_f16", {{80, "scale_if_f16.sm_80.cubin", 0u}, {90, "scale_if_f16.sm_90.cubin", 0u}}, 128u, 256u, 0u};
  check_scale_if_f16(groups, threads, alpha, n, shift, flag);
  auto carried2 = carrier(alpha);
  auto carried3 = carrier(n);
  auto carried4 = carrier(shift);
  auto carried5 = carrier(flag);
  void* args[] = {&x, &y, &carried2, &carried3, &carried4, &carried5};
  bundle.launch(form, stream, groups, threads, args);
}
)");
  const std::string prefix = function_of(header, "prefix_f32");
  EXPECT_NE(prefix.find(R"({{90, "prefix_f32.sm_90.cubin", 65536u}}, 0u, 0u, 32u})"),
            std::string::npos)
      << "past 48 KB the launch passes its shared memory dynamically\n"
      << prefix;
  EXPECT_NE(header.find("#include <dlfcn.h>"), std::string::npos);
  EXPECT_EQ(header.find("iron/"), std::string::npos) << "the header needs nothing of Iron";
  EXPECT_EQ(header.find("cuda.h"), std::string::npos) << "nor of the CUDA toolkit";
}

// Every rule the arguments carry becomes checked C++ in the contract's order: constexpr
// multiples, ranges, threads per group against a constexpr (literal ones are the Form's), grid.
TEST(EmitAotBundle, TheCheckFunctionCoversTheRulesTheArgumentsCarry) {
  const codegen::TargetProfile target = codegen::TargetProfile::cuda(90);
  std::string text(kBounded);
  text.insert(text.find("  values"),
              "  grid groups.x <= ceil_div(n, tpg)\n  grid groups.y == 1\n"
              "  require n multiple_of 4\n  require n <= max(64, 2 * n - 1)\n");
  const std::string header = codegen::emit_aot_header({{lowered(text, target), {}}});
  const auto begin = header.find("\n/// Refuses a launch of bounded_f32");
  ASSERT_NE(begin, std::string::npos) << header;
  EXPECT_EQ(header.substr(begin, header.find("\n}\n", begin) + 3 - begin), R"text(
/// Refuses a launch of bounded_f32 that breaks its contract, as far as the arguments show it.
inline void check_bounded_f32(
    [[maybe_unused]] Dim3 groups,
    [[maybe_unused]] Dim3 threads,
    [[maybe_unused]] std::uint32_t n) {
  [[maybe_unused]] const detail::Rules rules{"bounded_f32"};
  [[maybe_unused]] const long long per_group =
      static_cast<long long>(threads.x) * threads.y * threads.z;
  rules.multiple("constexpr n", static_cast<long long>(n), 4LL);
  rules.holds("constexpr n", static_cast<long long>(n), '<', rules.max(64LL, rules.sub(rules.mul(2LL, static_cast<long long>(n)), 1LL)), "max(64, 2 * n - 1)");
  rules.holds("threads per group", per_group, '=', rules.div(static_cast<long long>(n), 4LL), "n / 4");
  rules.holds("groups.x", static_cast<long long>(groups.x), '<', rules.ceil_div(static_cast<long long>(n), per_group), "ceil_div(n, tpg)");
  rules.holds("groups.y", static_cast<long long>(groups.y), '=', 1LL, "1");
}
)text");
  EXPECT_NE(
      header.find("    if (__builtin_mul_overflow(a, b, &r)) refuse(\"a launch rule overflows "
                  "64 bits\");"),
      std::string::npos);
  EXPECT_NE(header.find("    if (b == 0) refuse(\"a launch rule divides by zero\");"),
            std::string::npos);
}

TEST(EmitAotBundle, ParameterNamesTheHeaderUsesAreErrors) {
  const codegen::TargetProfile target = codegen::TargetProfile::cuda(90);
  const ir::Kernel kernel = lowered(with_input_named("bundle"), target);
  EXPECT_EQ(thrown_by([&] {
              codegen::emit_aot_header({{kernel, {}}});
            }),
            "kernel named: parameter 'bundle' is reserved in the AOT bundle header: rename it");
}

// An sm_90a cubin is marked, and a 9.0 device prefers it to the sm_90 one.
TEST(EmitAotBundle, AnArchitectureSpecificCubinIsMarkedAndPreferred) {
  const codegen::TargetProfile target = codegen::TargetProfile::cuda(90);
  const std::string header = codegen::emit_aot_header(
      {{lowered(kScaleIf, target),
        {{90, "scale_if_f16.sm_90.cubin", 0}, {90, "scale_if_f16.sm_90a.cubin", 0, true}}}});
  EXPECT_NE(
      header.find(
          R"({90, "scale_if_f16.sm_90.cubin", 0u}, {90, "scale_if_f16.sm_90a.cubin", 0u, true})"),
      std::string::npos)
      << header;
  EXPECT_NE(header.find("if (b.arch_specific && b.sm == sm_) best = &b;"), std::string::npos);
}

}  // namespace
}  // namespace iron::emit_test
