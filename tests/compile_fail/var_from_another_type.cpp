// expect-error: deleted function .*Var.*operands_have_different_element_types
// A Var<f32> cannot start from a T (f16/bf16) value without a cast.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_var_init, (Tensor<T> inp, Out<f32> out)) {
  auto i = program_id<0>();
#ifdef IRON_CONTROL
  Var<f32> v = cast<f32>(load(inp[i]));
#else
  Var<f32> v = load(inp[i]);
#endif
  store(out[i], v);
}
template void bad_var_init_body<f16>(Tensor<f16>, Out<f32>);
