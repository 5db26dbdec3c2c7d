// expect-error: else.* without a previous .*if
// A plain C++ `else` after IRON_IF would attach to the macro's internals: it must not compile.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_else, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  auto i = program_id<0>();
#ifdef IRON_CONTROL
  IRON_IF(i < n) { store(out[i], load(inp[i])); }
  IRON_ELSE { store(out[i], load(inp[i])); }
#else
  IRON_IF(i < n) { store(out[i], load(inp[i])); }
  else {
    store(out[i], load(inp[i]));
  }
#endif
}
