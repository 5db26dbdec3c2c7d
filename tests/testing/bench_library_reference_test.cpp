/// Tests of a bench's library reference (a cuBLAS product timed beside the kernel) that need no
/// GPU: the names and own values checked when it is given, its sizes checked against the bench's
/// buffers by `iron bench --dry-run`, and the Hadamard benches that use it.
#include <gtest/gtest.h>

#include "iron/bench/registry.hpp"
#include "iron/bench/runner.hpp"
#include "iron/bench/setup.hpp"
#include "iron/core/error.hpp"

namespace iron::bench {
namespace {

template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// testing_scale's input as a 32 × 32 matrix times the 32 × 32 identity, into its output.
LibraryReference identity_product() {
  LibraryReference ref;
  ref.name = "x @ I (cuBLAS)";
  ref.m = 32;
  ref.n = 32;
  ref.k = 32;
  ref.a.input = "inp";
  ref.b.values.assign(std::size_t{32} * 32, 0.0f);
  for (std::size_t i = 0; i < 32; ++i) ref.b.values[i * 32 + i] = 1.0f;
  ref.output = "out";
  return ref;
}

/// A complete, valid bench of testing_scale with the library reference `ref`.
BenchSetup with_library(DType dt, const LibraryReference& ref) {
  return BenchSetup("testing_scale", dt)
      .random("inp", 1024)
      .output("out", 1024)
      .constant("alpha", 1.0)
      .constant("n", 1024)
      .grid_1d(1024, 256)
      .bytes_moved(8192)
      .peer("scale", {{"n", 1024}, {"alpha", 1.0}})
      .library_reference(ref);
}

std::string check(BenchSetup (*make)(DType)) {
  return check_bench_setup({"testing_scale", "testing_scale.case", {DType::F32}, make, {}},
                           DType::F32);
}

TEST(BenchLibraryReference, IsRecordedWithItsOperands) {
  const BenchSetup s = with_library(DType::BF16, identity_product());
  ASSERT_TRUE(s.library_call().has_value());
  EXPECT_EQ(s.library_call()->name, "x @ I (cuBLAS)");
  EXPECT_EQ(s.library_call()->a.input, "inp");
  EXPECT_EQ(s.library_call()->b.values.size(), 32u * 32u);
  EXPECT_EQ(check_library_reference(s), "");
  EXPECT_FALSE(BenchSetup("testing_scale", DType::F32).library_call().has_value());
}

TEST(BenchLibraryReference, NamesAndOwnValuesAreCheckedWhenGiven) {
  const auto problem = [](auto change) {
    LibraryReference ref = identity_product();
    change(ref);
    return error_of([&] { with_library(DType::F32, ref); });
  };
  EXPECT_TRUE(contains(problem([](LibraryReference& r) { r.k = 0; }),
                       "m, n and k must be positive, got 32, 32, 0"));
  EXPECT_TRUE(contains(problem([](LibraryReference& r) { r.a.input = "nope"; }),
                       "operand a names 'nope', which is not an input"));
  EXPECT_TRUE(contains(problem([](LibraryReference& r) { r.a.input = "out"; }),
                       "operand a names 'out', which is not an input"));
  EXPECT_TRUE(contains(problem([](LibraryReference& r) { r.b.values.pop_back(); }),
                       "operand b has 1023 values; 32 × 32 needs 1024"));
  EXPECT_TRUE(contains(problem([](LibraryReference& r) { r.a.values = {1.0f}; }),
                       "operand a needs either an input's name or values of its own"));
  EXPECT_TRUE(contains(problem([](LibraryReference& r) { r.output = "inp"; }),
                       "library reference x @ I (cuBLAS): 'inp' is not an output"));
}

TEST(BenchLibraryReference, TheDryRunChecksItsSizesAgainstTheBuffers) {
  EXPECT_EQ(check([](DType dt) { return with_library(dt, identity_product()); }), "");
  EXPECT_EQ(check([](DType dt) {
              LibraryReference ref = identity_product();
              ref.m = 33;
              return with_library(dt, ref);
            }),
            "library reference x @ I (cuBLAS): operand a: input 'inp' holds 1024 elements; the "
            "product reads 1056");
  EXPECT_EQ(check([](DType dt) {
              LibraryReference ref = identity_product();
              ref.m = 16;
              return with_library(dt, ref);
            }),
            "library reference x @ I (cuBLAS): output 'out' holds 1024 elements; the product "
            "writes 16 × 32 = 512");
}

TEST(BenchLibraryReference, TheHadamardBenchesCompareWithCublas) {
  int checked = 0;
  for (const BenchCase& bench : registered_benches()) {
    if (!bench.kernel.starts_with("iron_hadamard_")) continue;
    for (DType dt : bench.dtypes) {
      EXPECT_EQ(check_bench_setup(bench, dt), "") << bench.name;
      const BenchSetup setup = bench.make(dt);
      ASSERT_TRUE(setup.library_call().has_value()) << bench.name;
      EXPECT_EQ(setup.library_call()->name, "x @ H (cuBLAS)");
      ++checked;
    }
  }
  EXPECT_EQ(checked, 30);  // five sizes, two shapes, three dtypes
}

}  // namespace
}  // namespace iron::bench
