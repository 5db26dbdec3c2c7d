// expect-error: deleted function .*operator\+=.*operands_have_different_element_types
// Accumulating T (f16/bf16) values into a Var<f32> needs an explicit cast.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_accumulate, (Tensor<T> inp, Out<f32> out, Constexpr<u32> n)) {
  Var<f32> acc = 0.0f;
  for (auto j : range(0u, n)) {
#ifdef IRON_CONTROL
    acc += cast<f32>(load(inp[j]));
#else
    acc += load(inp[j]);
#endif
  }
  store(out[program_id<0>()], acc);
}
template void bad_accumulate_body<bf16>(Tensor<bf16>, Out<f32>, Constexpr<u32>);
