// expect-error: no matching (member )?function for call to .*to_a
// An accumulator converts to an A operand only in whole 16x16 tiles.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_to_a, (Tensor<f32> inp, Out<T> out)) {
  dispatch(tiled, {exactly(32)});
#ifdef IRON_CONTROL
  FragAcc<16, 16> acc;
#else
  FragAcc<16, 8> acc;
#endif
  acc.load(inp, 0u, 8u);
  acc.to_a<T>().store(out, 0u, 8u);
}
