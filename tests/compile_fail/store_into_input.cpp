// expect-error: use of deleted function .*store
// Only Out<T> parameters can be written.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_store, (Tensor<T> inp, Out<T> out)) {
  auto i = program_id<0>();
#ifdef IRON_CONTROL
  store(out[i], load(inp[i]));
#else
  store(inp[i], load(inp[i]));
  store(out[i], load(inp[i]));
#endif
}
