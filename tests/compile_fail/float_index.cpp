// expect-error: an_index_must_be_an_integer_value
// A float value cannot index a tensor: convert it with cast<u32>(x).
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_float_index, (Tensor<T> inp, Tensor<f32> where, Out<T> out)) {
  auto i = program_id<0>();
#ifdef IRON_CONTROL
  store(out[i], load(inp[cast<u32>(load(where[i]))]));
#else
  store(out[i], load(inp[load(where[i])]));
#endif
}
