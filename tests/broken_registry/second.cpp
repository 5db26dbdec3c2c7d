// The other half: the same kernel, test and bench names as first.cpp, further down the file.
#include <iron/bench/registry.hpp>
#include <iron/iron.hpp>
#include <iron/testing/registry.hpp>

using namespace iron::dsl;

// A test listing no dtypes is a registration problem too.
IRON_TEST(dup_copy, no_dtypes) { return iron::testing::TestSetup("dup_copy", dt); }

IRON_KERNEL(dup_copy, (Tensor<T> inp, Out<T> out)) { store(out[global_id<0>()], load(inp[0u])); }

IRON_TEST(dup_copy, once, F32) { return iron::testing::TestSetup("dup_copy", dt); }

IRON_BENCH(dup_copy, once, F32) { return iron::bench::BenchSetup("dup_copy", dt); }
