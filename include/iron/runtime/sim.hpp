/// The CPU simulator: runs Iron IR with the GPU execution model (threadgroups, 32-lane
/// simdgroups, barriers, threadgroup memory, atomics, exact f16/bf16 rounding) and reports
/// every out-of-bounds access, shared- and global-memory race, read of unwritten memory,
/// wrapping index arithmetic, divergent barrier and runaway loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iron/core/error.hpp"
#include "iron/core/fragment.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::runtime {

/// A sanitizer finding. `what()` names the kernel, group, thread, buffer, index and source line.
class SimError : public Error {
 public:
  enum class Kind : std::uint8_t {
    OutOfBounds,
    SharedRace,
    GlobalRace,         ///< two threads' accesses of one tensor element that nothing orders
    UninitializedRead,  ///< a read of shared memory or of an Out<T> element nobody wrote
    IndexOverflow,      ///< index arithmetic whose true value does not fit its type
    DivergentBarrier,
    DivergentSimdgroup,
    RunawayLoop,
    ZeroStepLoop,
    LaneMapDependent,     ///< outputs that change with which lane holds which fragment element
    PendingProduct,       ///< an accumulator used before the wg.wait of a product into it
    AsyncProxy,           ///< a shared write read by a warpgroup product with no fence between
    TargetPathDependent,  ///< outputs that change with the path a target query (target.has) takes
    Mbarrier,  ///< an mbarrier misused: a wait that never passes (a hang), one not initialized
    BadArgument,
  };
  SimError(Kind kind, const std::string& message) : Error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

/// Which instruction last wrote each element of each tensor a launch wrote: what the simulator
/// knows when a test finds a wrong element ("which store wrote this?").
struct SimWriters {
  /// Per parameter: per element, 0 when no thread wrote it, else 1 + an index into `where`.
  /// Empty for parameters the kernel does not write.
  std::vector<std::vector<std::uint32_t>> writer;
  /// Source locations ("file:line") of the stores and atomics named by `writer`.
  std::vector<std::string> where;

  /// The location of the store (or atomic) that last wrote element `index` of parameter
  /// `param`; "" when no thread wrote it; nullopt when the launch did not track that element.
  std::optional<std::string> of(std::size_t param, std::uint64_t index) const;
};

struct SimOptions {
  /// Loop iterations allowed per thread group before the run is called runaway.
  std::uint64_t step_budget = std::uint64_t{1} << 26;
  /// Host threads that run groups: 1 runs them in order on the calling thread; 2 lets a second
  /// thread run every other group when the launch is large and has no tensor atomics. Outputs
  /// and findings are the same either way.
  unsigned host_threads = 2;
  /// When set, a run that ends without a finding fills it with the last writer of every element
  /// of every tensor the kernel writes.
  SimWriters* writers = nullptr;
  /// Which lane holds which fragment element (include/iron/core/fragment.hpp).
  ir::LaneMap lane_map = ir::LaneMap::Mma;
  /// A kernel with fragments runs again under the other lane map, on copies of the tensors it
  /// writes, and any output that differs is a LaneMapDependent finding: its result would depend
  /// on the target.
  bool compare_lane_maps = true;
  /// The simulator's answer to target.has(WarpgroupProducts) and target.has(TensorMaps): the path
  /// an sm_90a device takes when true (with a pipeline's tile copies as TMA copies on mbarriers,
  /// as sm_90a runs them), the path of every other target when false.
  bool warpgroup_products = true;
  /// Its answer to target.has(PairedAccumulatorColumns): true as both its lane maps pair them;
  /// false takes the path of a target whose lane map is unknown (wmma).
  bool paired_accumulator_columns = true;
  /// Its answer to target.has(LargeSharedMemory): true as a CUDA device's; false takes Metal's
  /// path.
  bool large_shared_memory = true;
  /// A kernel with target queries runs again with the other answers, on copies of the tensors it
  /// writes, and any output that differs is a TargetPathDependent finding: its targets would
  /// compute different results.
  bool compare_target_paths = true;
};

/// Runs one launch on the simulator. Throws SimError on a sanitizer finding (and with kind
/// BadArgument and the verifier's findings for a malformed kernel), DispatchError when the grid
/// breaks the kernel's contract. Output tensors are written in place.
void sim_run(const Launch& launch, const SimOptions& options = {});

/// The kernel of `launch` as the simulator runs it under `options`: its target queries answered,
/// its specializations bound, its tile copies lowered and its pipelines expanded as a device of
/// compute capability 9.0 has them (sm_90a's when it has warpgroup products and
/// options.warpgroup_products).
ir::Kernel simulated_kernel(const Launch& launch, const SimOptions& options = {});

}  // namespace iron::runtime
