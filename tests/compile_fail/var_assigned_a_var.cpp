// expect-error: deleted function .*copy_a_var_with_get
// `a = b` between two Vars has no place to record its line: write `a = b.get()`.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_var_copy, (Tensor<T> inp, Out<T> out)) {
  auto i = program_id<0>();
  Var<T> a = load(inp[i]);
  Var<T> b = load(inp[i + 1u]);
#ifdef IRON_CONTROL
  a = b.get();
#else
  a = b;
#endif
  store(out[i], a);
}
