// expect-error: could not convert .*Expr<bool>.* to .*bool
// A C++ `if` on a symbolic condition would run at trace time on no real value: rejected.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_if, (Tensor<T> inp, Out<T> out, Constexpr<u32> n)) {
  auto i = program_id<0>();
#ifdef IRON_CONTROL
  IRON_IF(i < n) { store(out[i], load(inp[i])); }
#else
  if (i < n) store(out[i], load(inp[i]));
#endif
}
