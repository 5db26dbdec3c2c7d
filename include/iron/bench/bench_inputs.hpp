/// A bench input's bytes, made on the host from its fill (BenchSetup::random, input, input_u32,
/// random_u32): what `iron bench` uploads, and what `iron tune --bench` times a kernel on.
#pragma once

#include "iron/bench/setup.hpp"
#include "iron/runtime/launch.hpp"
#include "iron/testing/data.hpp"

namespace iron::bench {

/// The bytes of one input of `dtype`, made from its fill; random fills draw from `rng`.
runtime::HostTensor make_input(const BenchFill& f, DType dtype, testing::Rng& rng);

}  // namespace iron::bench
