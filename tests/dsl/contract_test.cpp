// Grid rules and layouts declared in a kernel: traced into the contract with their source lines,
// misdeclarations failing the trace at their line, and every launch path (a backend, the test
// runner, the bench check) refusing a grid counted in threads before anything runs.
#include <gtest/gtest.h>

#include <string>

#include "iron/bench/registry.hpp"
#include "iron/bench/runner.hpp"
#include "iron/iron.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
using iron::testing::TestSetup;

const std::string kFile = "tests/dsl/contract_test.cpp:";

int g_dispatch_line = 0;
int g_grid_line = 0;
int g_layout_line = 0;
// A grid-stride copy: never more groups than its n elements need, along x only.
IRON_KERNEL(contract_copy, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  g_dispatch_line = __LINE__ + 1;
  dispatch(elementwise);
  g_grid_line = __LINE__ + 1;
  grid("[<= ceil_div(n, tpg), 1, 1]");
  g_layout_line = __LINE__ + 1;
  layout(inp, "[n]");
  layout_at_least(out, "[n]");
  for (auto i : range(global_id<0>(), n, grid_threads<0>())) store(out[i], load(inp[i]));
}

std::string where(int line) { return kFile + std::to_string(line); }

TEST(DslContract, DeclarationsAreTracedWithTheirLines) {
  const iron::ir::Kernel k = kernel_ir_for("contract_copy", DType::F32);
  const auto& c = k.dispatch;
  EXPECT_EQ(iron::format_loc(c.loc), where(g_dispatch_line));
  ASSERT_EQ(c.grid_rules.size(), 3u) << "x, y and z";
  EXPECT_EQ(c.grid_rules[0].axis, 0);
  EXPECT_EQ(c.grid_rules[0].relation, iron::ir::GridRule::Relation::AtMost);
  EXPECT_EQ(iron::ir::print_size_expr(c.grid_rules[0].bound), "ceil_div(n, tpg)");
  EXPECT_EQ(c.grid_rules[2].relation, iron::ir::GridRule::Relation::Equal);
  EXPECT_EQ(iron::format_loc(c.grid_rules[1].loc), where(g_grid_line));
  ASSERT_EQ(c.layouts.size(), 2u);
  EXPECT_TRUE(c.layouts[0].exact);
  EXPECT_FALSE(c.layouts[1].exact);
  EXPECT_EQ(iron::ir::print_size_dims(c.layouts[1].dims), "[n]");
  EXPECT_EQ(iron::format_loc(c.layouts[0].loc), where(g_layout_line));
  EXPECT_EQ(iron::format_loc(c.layouts[1].loc), where(g_layout_line + 1));
}

TEST(DslContract, ABackendRefusesAGridCountedInThreads) {
  const iron::ir::Kernel k = kernel_ir_for("contract_copy", DType::F32);
  iron::runtime::HostTensor inp{DType::F32, std::vector<std::byte>(1000 * 4)};
  iron::runtime::HostTensor out{DType::F32, std::vector<std::byte>(1000 * 4, std::byte{0x7f})};
  const iron::runtime::Scalar n{DType::U32, 0.0, 1000};
  auto sim = iron::runtime::make_backend("sim");
  try {
    sim->run({&k, {&inp, &out, n}, {{1000, 1, 1}, {256, 1, 1}}});
    FAIL() << "1000 groups of 256 threads for 1000 elements were not refused";
  } catch (const iron::DispatchError& e) {
    EXPECT_EQ(std::string(e.what()),
              "contract_copy: dispatch refused, nothing launched: groups.x (1000) must be at most "
              "ceil_div(n, tpg) = ceil_div(1000, 256) = 4: a grid counted in threads, not in "
              "groups of 256? (grid(...) at " +
                  where(g_grid_line) + ", dispatch(...) at " + where(g_dispatch_line) + ")");
  }
  EXPECT_EQ(out.bytes[0], std::byte{0x7f}) << "nothing ran";
  EXPECT_NO_THROW(sim->run({&k, {&inp, &out, n}, {{4, 1, 1}, {256, 1, 1}}}));
}

IRON_TEST(contract_copy, grid_in_threads, F32(0.0)) {
  std::vector<float> x(1000, 1.0f);
  return TestSetup("contract_copy", dt)
      .input("inp", x)
      .output("out", 1000)
      .constant("n", 1000)
      .expect("out", x)
      .grid({{1000}, {256}});
}

TEST(DslContract, TheTestRunnerReportsTheRefusal) {
  for (const auto& t : iron::testing::registered_tests()) {
    if (t.name != "contract_copy.grid_in_threads") continue;
    auto sim = iron::runtime::make_backend("sim");
    const auto result = iron::testing::run_test(t, DType::F32, *sim, 1);
    EXPECT_FALSE(result.passed);
    EXPECT_NE(result.message.find("groups.x (1000) must be at most ceil_div(n, tpg)"),
              std::string::npos)
        << result.message;
    EXPECT_NE(result.message.find("grid(...) at " + where(g_grid_line)), std::string::npos)
        << result.message;
    return;
  }
  FAIL() << "contract_copy.grid_in_threads is not registered";
}

TEST(DslContract, TheBenchCheckSeesRealBufferSizes) {
  const auto bench = [](iron::bench::BenchSetup (*make)(DType)) {
    return iron::bench::BenchCase{"contract_copy", "contract_copy.b", {DType::F32}, make, {}};
  };
  const auto in_threads = bench([](DType dt) {
    return iron::bench::BenchSetup("contract_copy", dt)
        .random("inp", 4096)
        .output("out", 4096)
        .constant("n", 4096)
        .grid({{4096}, {256}})
        .bytes_moved(8 * 4096)
        .peer("copy", {});
  });
  EXPECT_NE(
      iron::bench::check_bench_setup(in_threads, DType::F32)
          .find("groups.x (4096) must be at most ceil_div(n, tpg) = ceil_div(4096, 256) = 16"),
      std::string::npos);
  const auto short_input = bench([](DType dt) {
    return iron::bench::BenchSetup("contract_copy", dt)
        .random("inp", 4000)
        .output("out", 4096)
        .constant("n", 4096)
        .grid({{16}, {256}})
        .bytes_moved(8 * 4096)
        .peer("copy", {});
  });
  EXPECT_NE(iron::bench::check_bench_setup(short_input, DType::F32)
                .find("inp holds 4000 elements; the layout [n] needs n = 4096"),
            std::string::npos);
}

std::string trace_error(const char* kernel) {
  try {
    kernel_ir_for(kernel, DType::F32);
  } catch (const iron::TraceError& e) {
    return e.what();
  }
  return "(traced without error)";
}

int g_unknown_line = 0;
IRON_KERNEL(contract_unknown_name, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  g_unknown_line = __LINE__ + 1;
  layout(inp, "[rows, n]");
  store(out[0u], load(inp[0u]));
  static_cast<void>(n);  // named only by the contract
}

int g_float_line = 0;
IRON_KERNEL(contract_float_constexpr, (Tensor<T> inp, Out<T> out, Constexpr<f32> eps)) {
  g_float_line = __LINE__ + 1;
  grid("[<= eps, 1, 1]");
  store(out[0u], load(inp[0u]));
  static_cast<void>(eps);  // named only by the contract
}

int g_twice_line = 0;
IRON_KERNEL(contract_layout_twice, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  layout(inp, "[n]");
  g_twice_line = __LINE__ + 1;
  layout(inp, "[n]");
  store(out[0u], load(inp[0u]));
  static_cast<void>(n);  // named only by the contract
}

int g_axes_line = 0;
IRON_KERNEL(contract_two_axes, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  g_axes_line = __LINE__ + 1;
  grid("[n, 1]");
  store(out[0u], load(inp[0u]));
  static_cast<void>(n);  // named only by the contract
}

int g_syntax_line = 0;
IRON_KERNEL(contract_bad_syntax, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  g_syntax_line = __LINE__ + 1;
  layout(out, "[n *]");
  store(out[0u], load(inp[0u]));
  static_cast<void>(n);  // named only by the contract
}

TEST(DslContract, MisdeclarationsFailTheTraceAtTheirLine) {
  // Each trace runs first: it sets the line its expectation names.
  const std::string unknown = trace_error("contract_unknown_name");
  EXPECT_EQ(unknown,
            "kernel contract_unknown_name: " + where(g_unknown_line) +
                ": layout(inp, \"[rows, n]\"): 'rows' is not a constexpr parameter of the kernel");
  const std::string float_constexpr = trace_error("contract_float_constexpr");
  EXPECT_EQ(float_constexpr,
            "kernel contract_float_constexpr: " + where(g_float_line) +
                ": grid(\"[<= eps, 1, 1]\"): constexpr 'eps' is f32, not an integer");
  const std::string twice = trace_error("contract_layout_twice");
  EXPECT_EQ(twice, "kernel contract_layout_twice: " + where(g_twice_line) +
                       ": layout(inp, \"[n]\"): the layout of 'inp' is declared twice");
  const std::string two_axes = trace_error("contract_two_axes");
  EXPECT_EQ(two_axes, "kernel contract_two_axes: " + where(g_axes_line) +
                          ": grid(\"[n, 1]\"): expected three entries (x, y, z), found 2");
  const std::string syntax = trace_error("contract_bad_syntax");
  EXPECT_EQ(syntax, "kernel contract_bad_syntax: " + where(g_syntax_line) +
                        ": layout(out, \"[n *]\"): in '[n *]': expected a number, a constexpr "
                        "name, groups.x|y|z, tpg or a call at column 5, found ']'");
}

}  // namespace
