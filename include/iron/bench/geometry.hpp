/// A bench's grid from its kernel's registered geometry, planned for the CUDA device benches run
/// on (the default device when none is present, as in `iron bench --dry-run`).
#pragma once

#include "iron/bench/setup.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::bench {

/// The grid the kernel's geometry gives for the bench's constexprs, buffers and tuning
/// configuration; Error when the
/// kernel registered no geometry. Give the constexprs and buffers first:
///   bench::BenchSetup setup("iron_copy", dt);
///   setup.random("inp", n).output("out", n).constant("n", n);
///   return setup.grid(bench::geometry_grid(setup));
runtime::Grid geometry_grid(const BenchSetup& setup);

}  // namespace iron::bench
