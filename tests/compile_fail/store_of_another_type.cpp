// expect-error: deleted function .*store.*operands_have_different_element_types
// Storing a T (f16/bf16) value into an f32 output needs an explicit cast.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_store_type, (Tensor<T> inp, Out<f32> out)) {
  auto i = program_id<0>();
#ifdef IRON_CONTROL
  store(out[i], cast<f32>(load(inp[i])));
#else
  store(out[i], load(inp[i]));
#endif
}
// Instantiate for a non-f32 T so the mismatch is real.
template void bad_store_type_body<f16>(Tensor<f16>, Out<f32>);
