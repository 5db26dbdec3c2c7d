/// The simulator through the test harness: a mismatch names the line of the store that wrote the
/// first wrong element (or says no thread wrote it), InOut<T> kernels read what their tensor
/// holds, and TestSetup insists on initial values for InOut and refuses them for Out.
#include <gtest/gtest.h>

#include <string>

#include "iron/core/hash.hpp"
#include "iron/core/parser.hpp"
#include "iron/core/printer.hpp"
#include "iron/iron.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"

namespace {
using namespace iron::dsl;
using iron::DType;
using iron::testing::Rng;
using iron::testing::TestSetup;

/// Runs registered test `name` in f32 on the simulator; returns its failure message ("" if it
/// passed).
std::string message_of(const std::string& name) {
  for (const auto& t : iron::testing::registered_tests()) {
    if (t.name != name) continue;
    auto sim = iron::runtime::make_backend("sim");
    return iron::testing::run_test(t, DType::F32, *sim, 1).message;
  }
  ADD_FAILURE() << "no test named " << name;
  return {};
}

std::vector<float> one_to(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

int g_wrong_store_line = 0;
// out[i] = inp[i], except that element 5 gets inp[0] and element 9 nothing.
IRON_KERNEL(broken_copy_of_five, (Tensor<T> inp, Out<T> out)) {
  auto i = program_id<0>();
  IRON_IF(i == 5u) {
    g_wrong_store_line = __LINE__ + 1;
    store(out[i], load(inp[0u]));
  }
  IRON_ELSE {
    IRON_IF(i != 9u) { store(out[i], load(inp[i])); }
  }
}
IRON_TEST(broken_copy_of_five, sixteen, F32(0.0)) {
  return TestSetup("broken_copy_of_five", dt)
      .input("inp", one_to(16))
      .output("out", 16)
      .expect("out", one_to(16))
      .grid_1d(16, 16);
}

// out[i] = inp[i] for i >= 1: element 0 is never written.
IRON_KERNEL(broken_skip_first, (Tensor<T> inp, Out<T> out)) {
  auto i = program_id<0>();
  IRON_IF(i > 0u) { store(out[i], load(inp[i])); }
}
IRON_TEST(broken_skip_first, eight, F32(0.0)) {
  return TestSetup("broken_skip_first", dt)
      .input("inp", one_to(8))
      .output("out", 8)
      .expect("out", one_to(8))
      .grid_1d(8, 8);
}

TEST(SimTestHarness, MismatchNamesTheStoreThatWroteTheFirstWrongElement) {
  const std::string msg = message_of("broken_copy_of_five.sixteen");
  EXPECT_NE(msg.find("out[5]: got 1, want 6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out[5] was last written by the store at "
                     "tests/sim/sim_test_harness_test.cpp:" +
                     std::to_string(g_wrong_store_line)),
            std::string::npos)
      << msg;
}

TEST(SimTestHarness, MismatchSaysNoThreadWroteTheElement) {
  const std::string msg = message_of("broken_skip_first.eight");
  EXPECT_NE(msg.find("no thread wrote out[0]"), std::string::npos) << msg;
}

// x[i] = 2 * x[i], in place: reads what x holds at entry.
IRON_KERNEL(double_in_place, (InOut<T> x)) {
  auto i = program_id<0>();
  auto v = load(x[i]);
  store(x[i], v + v);
}
IRON_TEST(double_in_place, with_initial, F32(0.0)) {
  std::vector<float> twice = one_to(8);
  for (float& v : twice) v *= 2;
  return TestSetup("double_in_place", dt)
      .output("x", 8)
      .initial("x", one_to(8))
      .expect("x", twice)
      .grid_1d(8, 8);
}
IRON_TEST(double_in_place, without_initial, F32(0.0)) {
  return TestSetup("double_in_place", dt).output("x", 8).expect("x", one_to(8)).grid_1d(8, 8);
}

TEST(SimTestHarness, InOutTensorReadsItsInitialValues) {
  EXPECT_EQ(message_of("double_in_place.with_initial"), "");
  const std::string msg = message_of("double_in_place.without_initial");
  EXPECT_NE(msg.find("in-out tensor 'x' has no initial values: call initial()"), std::string::npos)
      << msg;
}

TEST(SimTestHarness, InitialValuesOfAnOutAreRefused) {
  try {
    TestSetup("broken_skip_first", DType::F32).output("out", 8).initial("out", one_to(8));
    ADD_FAILURE() << "initial() on an Out was accepted";
  } catch (const iron::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "kernel broken_skip_first: initial(\"out\"): 'out' is an Out<f32>, whose contents "
              "are undefined at kernel entry; declare it InOut<f32> if the kernel reads or keeps "
              "what it holds");
  }
}

// The kind survives the text form and changes the structural hash (a cached module of an Out
// kernel is never reused for its InOut twin).
TEST(SimTestHarness, InOutIsTracedPrintedParsedAndHashed) {
  const iron::ir::Kernel k = kernel_ir_for("double_in_place", DType::F32);
  ASSERT_EQ(k.params.size(), 1u);
  EXPECT_EQ(k.params[0].kind, iron::ir::ParamKind::InOut);
  const std::string text = iron::ir::print_kernel(k);
  EXPECT_NE(text.find("param inout x: f32"), std::string::npos) << text;
  EXPECT_EQ(iron::ir::print_kernel(iron::ir::parse_kernel(text)), text);
  iron::ir::Kernel as_out = k;
  as_out.params[0].kind = iron::ir::ParamKind::Output;
  EXPECT_NE(iron::ir::structural_hash(as_out), iron::ir::structural_hash(k));
}

}  // namespace
