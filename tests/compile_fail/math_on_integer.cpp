// expect-error: needs_a_float_value_cast_first.*exp
// Float math on an integer needs an explicit cast.
#include <iron/iron.hpp>
using namespace iron::dsl;

IRON_KERNEL(bad_math, (Out<f32> out)) {
  auto i = program_id<0>();
#ifdef IRON_CONTROL
  store(out[i], exp(cast<f32>(i)));
#else
  store(out[i], cast<f32>(exp(i)));
#endif
}
