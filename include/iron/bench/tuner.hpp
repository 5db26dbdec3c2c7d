/// The autotuner behind `iron tune` (docs/tuning.md): every configuration of a kernel's tuning
/// knobs, on one shape, traced, planned, checked against the defaults' outputs and timed in turn
/// on the device; or, without a device, traced, guarded and compiled by NVRTC.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "iron/bench/device.hpp"
#include "iron/bench/setup.hpp"
#include "iron/core/ir.hpp"
#include "iron/dsl/tuning.hpp"

namespace iron::bench {

/// A kernel form, one shape (every constexpr of the kernel by name) and the configurations to
/// try.
struct TuneRequest {
  std::string kernel;
  DType dtype = DType::F32;
  std::map<std::string, double, std::less<>> constants;
  std::vector<dsl::TuningConfig> configs;  ///< empty: every configuration of the kernel's space
  int repeat = 20;                         ///< timed runs per configuration
  /// Inputs filled as a bench fills them (a bench case's, `iron tune --bench`); any other input
  /// gets the random pattern (floats) or zeros (integers).
  std::map<std::string, BenchFill> inputs;
};

/// What became of one configuration.
struct TunedConfig {
  dsl::TuningConfig config;  ///< every knob's value
  runtime::Grid grid;        ///< the launch its geometry planned
  std::string refused;       ///< why it was not timed (trace, guard, compile, outputs); "" if timed
  /// The earlier configuration it compiles to the same code and grid as (a ring deeper than the
  /// target holds is cut to what fits): not run again.
  std::optional<std::size_t> same_as;
  std::optional<Spread> us;  ///< microseconds a run (tune)
  std::string resources;     ///< ptxas's registers and spills (check_configs)
};

struct TuneResult {
  std::vector<TunedConfig> configs;  ///< the defaults first
  std::optional<std::size_t> best;   ///< the fastest timed configuration
};

/// The element count of each tensor of `kernel`, by name, from its layout declarations and
/// `constants`; Error for a tensor without a layout or whose layout depends on the grid.
std::map<std::string, std::uint64_t> tensor_sizes(
    const ir::Kernel& kernel, const std::map<std::string, double, std::less<>>& constants);

/// Error unless `request` gives every constexpr of `kernel` and no other name, and the kernel
/// writes no tensor in place (its runs would not start from the same data).
void check_shape(const ir::Kernel& kernel, const TuneRequest& request);

/// The configurations `request` asks for, each completed with the kernel's defaults, the
/// defaults first; Error when the kernel has no knobs or a configuration does not fit its space.
std::vector<dsl::TuningConfig> requested_configs(const TuneRequest& request);

/// Times each configuration on `device`: inputs uniform in [-1, 1) (integer ones zero), outputs
/// poisoned and then compared with the first configuration that runs (the defaults, when they
/// do), within 4 units in the last place of the dtype plus 10⁻³ of the largest output; then
/// every configuration that matched timed in turn, `repeat` runs each, run i of the j-th on set
/// i + j of enough sets of buffers that its inputs are not in L2 (as `iron bench`). `progress`
/// hears one line a configuration.
TuneResult tune(BenchDevice& device, const TuneRequest& request,
                const std::function<void(const std::string&)>& progress);

/// Without a device: each configuration traced, its grid planned, the dispatch guard run on
/// tensors of the planned sizes (CUDA's shared memory as the limit) and the kernel compiled by
/// NVRTC for compute capability `sm` × 10 as a launch would be (sm_90a where it has warpgroup
/// products), with ptxas's registers and spills. `best` stays empty.
TuneResult check_configs(const TuneRequest& request, int sm,
                         const std::function<void(const std::string&)>& progress);

}  // namespace iron::bench
