// One half of a program whose registrations are broken: kernel `dup_copy`, its test and its
// bench are defined here and again in second.cpp.
#include <iron/bench/registry.hpp>
#include <iron/iron.hpp>
#include <iron/testing/registry.hpp>

using namespace iron::dsl;

IRON_KERNEL(dup_copy, (Tensor<T> inp, Out<T> out)) { store(out[global_id<0>()], load(inp[0u])); }

IRON_TEST(dup_copy, once, F32) { return iron::testing::TestSetup("dup_copy", dt); }

IRON_BENCH(dup_copy, once, F32) { return iron::bench::BenchSetup("dup_copy", dt); }
