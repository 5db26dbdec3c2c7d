// expect-error: operands_have_different_element_types
// Adding an f32 value to a T (f16/bf16) value needs an explicit cast.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_mix, (Tensor<T> inp, Out<f32> out, Constexpr<f32> alpha)) {
  auto i = program_id<0>();
#ifdef IRON_CONTROL
  store(out[i], cast<f32>(load(inp[i])) * alpha);
#else
  store(out[i], load(inp[i]) * alpha);
#endif
}
// Instantiate for a non-f32 T so the mismatch is real.
template void bad_mix_body<f16>(Tensor<f16>, Out<f32>, Constexpr<f32>);
