// expect-error: operands_have_different_element_types
// A u32 index plus an i32 value is a mix of integer types: cast one of them.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_index, (Tensor<T> inp, Tensor<i32> offsets, Out<T> out)) {
  auto i = program_id<0>();
#ifdef IRON_CONTROL
  store(out[i], load(inp[i + cast<u32>(load(offsets[i]))]));
#else
  store(out[i], load(inp[i + load(offsets[i])]));
#endif
}
