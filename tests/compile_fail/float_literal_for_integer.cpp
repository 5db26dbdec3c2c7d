// expect-error: literal_cannot_stand_for_this_element_type
// A floating-point literal cannot silently become an integer.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_literal, (Tensor<T> inp, Out<T> out)) {
  auto i = program_id<0>();
#ifdef IRON_CONTROL
  store(out[i], load(inp[i + 1u]));
#else
  store(out[i], load(inp[i + 1.5f]));
#endif
}
