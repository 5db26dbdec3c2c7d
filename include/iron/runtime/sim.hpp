/// The CPU simulator: runs Iron IR with the GPU execution model (threadgroups, 32-lane
/// simdgroups, barriers, threadgroup memory, atomics, exact f16/bf16 rounding) and reports
/// every out-of-bounds access, shared-memory race, divergent barrier and runaway loop.
#pragma once

#include <cstdint>
#include <string>

#include "iron/core/error.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::runtime {

/// A sanitizer finding. `what()` names the kernel, group, thread, buffer, index and source line.
class SimError : public Error {
 public:
  enum class Kind : std::uint8_t {
    OutOfBounds,
    SharedRace,
    DivergentBarrier,
    DivergentSimdgroup,
    RunawayLoop,
    ZeroStepLoop,
    BadArgument,
  };
  SimError(Kind kind, const std::string& message) : Error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct SimOptions {
  /// Loop iterations allowed per thread group before the run is called runaway.
  std::uint64_t step_budget = std::uint64_t{1} << 26;
};

/// Runs one launch on the simulator. Throws SimError on a sanitizer finding, DispatchError when
/// the grid breaks the kernel's contract. Output tensors are written in place.
void sim_run(const Launch& launch, const SimOptions& options = {});

}  // namespace iron::runtime
