/// The simulator's entry point: checks the dispatch, prepares the kernel, and runs the groups one
/// after another, on two threads when the kernel has no tensor atomics (same outputs and same
/// first finding either way).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <thread>

#include "interpreter.hpp"
#include "iron/codegen/passes/expand_pipelines.hpp"
#include "iron/codegen/passes/lower_tile_copies.hpp"
#include "iron/codegen/passes/lower_warpgroup_products.hpp"
#include "iron/codegen/passes/select_target_paths.hpp"
#include "iron/core/rewriter.hpp"
#include "iron/core/size_expr.hpp"
#include "iron/runtime/dispatch_guard.hpp"
#include "iron/runtime/launch_specialization.hpp"
#include "iron/runtime/sim.hpp"

namespace iron::runtime {
namespace {

using sim::GroupRunner;

// Below this many threads in the grid, starting a second OS thread costs more than it saves.
constexpr std::uint64_t kParallelThreshold = 4096;

// Threads are named by a 32-bit Actor::id in the race bookkeeping (0 is nobody).
constexpr std::uint64_t kMaxThreads = 0xFFFFFFFEu;

/// The extent of tensor map `map` for a launch with `args`, and whether the GPU could encode it:
/// the tensor's first element and its rows 16-byte aligned (a tensor's elements start aligned),
/// the matrix (an image map: the images) inside the tensor.
sim::MapExtent map_extent(const ir::Kernel& kernel, const std::vector<Arg>& args,
                          const ir::TensorMap& map, std::uint64_t count) {
  sim::MapExtent e;
  std::string error;
  auto value = [&](const ir::SizeExpr& expr) -> std::int64_t {
    const ir::SizeValue v = evaluate_for_launch(kernel, args, expr);
    if (!v.ok() && error.empty()) error = v.error;
    return v.ok() ? v.value : 0;
  };
  e.base = value(map.base);
  e.height = value(map.height);
  e.width = value(map.width);
  if (map.box_width != 0) {  // an image map: `images` images of height × image_width pixels
    e.images = value(map.images);
    e.image_width = value(map.image_width);
  }
  const std::uint64_t rows = static_cast<std::uint64_t>(std::max<std::int64_t>(e.images, 0)) *
                             static_cast<std::uint64_t>(std::max<std::int64_t>(e.height, 0)) *
                             static_cast<std::uint64_t>(std::max<std::int64_t>(e.image_width, 0));
  const std::uint64_t size =
      dtype_size(kernel.params.at(static_cast<std::size_t>(map.param)).dtype);
  if (!error.empty()) {
    e.why = "cannot be evaluated: " + error;
  } else if (e.base < 0 || e.height < 1 || e.width < 1 || e.images < 1 || e.image_width < 1) {
    e.why = fmt::format("starts at {} with {} rows of {} ({} images {} pixels wide)", e.base,
                        e.height, e.width, e.images, e.image_width);
  } else if (static_cast<std::uint64_t>(e.base) * size % 16 != 0) {
    e.why = fmt::format("starts at element {}, not 16-byte aligned", e.base);
  } else if (static_cast<std::uint64_t>(e.width) * size % 16 != 0) {
    e.why = fmt::format("has rows of {} elements, not a multiple of 16 bytes", e.width);
  } else if (static_cast<std::uint64_t>(e.base) + rows * static_cast<std::uint64_t>(e.width) >
             count) {
    e.why = fmt::format("spans elements {} to {} of a tensor of {}", e.base,
                        static_cast<std::uint64_t>(e.base) + rows * e.width - 1, count);
  } else {
    e.encodable = true;
  }
  return e;
}

sim::Bindings bind(const ir::Kernel& kernel, const std::vector<Arg>& args) {
  sim::Bindings b;
  b.tensors.resize(args.size());
  b.scalars.resize(args.size(), nullptr);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (const Scalar* s = std::get_if<Scalar>(&args[i])) {
      b.scalars[i] = s;
    } else {
      HostTensor* t = std::get<HostTensor*>(args[i]);
      b.tensors[i] = {t->bytes.data(), t->bytes.size() / dtype_size(kernel.params[i].dtype)};
    }
  }
  for (const ir::TensorMap& map : kernel.tensor_maps) {
    b.maps.push_back(
        map_extent(kernel, args, map, b.tensors.at(static_cast<std::size_t>(map.param)).count));
  }
  return b;
}

Dim3 group_at(const Dim3& groups, std::uint64_t linear) {
  Dim3 g;
  g.x = static_cast<std::uint32_t>(linear % groups.x);
  g.y = static_cast<std::uint32_t>(linear / groups.x % groups.y);
  g.z = static_cast<std::uint32_t>(linear / (std::uint64_t{groups.x} * groups.y));
  return g;
}

// Worker w of two runs groups w, w + 2, w + 4, ... against a shadow of its own, and all stop at the
// first finding. A run is kept only when it is the sequential run's twin: no finding, and no
// element written by one worker and touched by the other (so no two groups of different workers
// share an element). Otherwise the caller restores the tensors and runs the groups in order,
// which gives the same outputs and the same first finding whatever the host's thread count.
class ParallelRun {
 public:
  ParallelRun(const sim::Program& program, const sim::Bindings& bindings, const Launch& launch,
              const SimOptions& options)
      : program_(program), bindings_(bindings), launch_(launch), options_(options) {}

  /// Whether the run is kept (else the tensors hold a partial, possibly racy, result).
  bool run() {
    const auto threads = static_cast<std::uint32_t>(launch_.grid.group_size.volume());
    sim::TensorShadow odd(program_, bindings_.tensors, threads);
    sim::TensorShadow even(program_, bindings_.tensors, threads);
    std::thread helper([&] { work(1, odd); });
    work(0, even);
    helper.join();
    if (failed_.load() || even.overlaps(odd)) return false;
    if (options_.writers != nullptr) even.export_writers(program_, *options_.writers, &odd);
    return true;
  }

 private:
  void work(std::uint64_t first, sim::TensorShadow& shadow) {
    try {
      GroupRunner runner(program_, bindings_, launch_.grid, options_, shadow);
      const std::uint64_t groups = launch_.grid.groups.volume();
      for (std::uint64_t g = first; g < groups && !failed_.load(std::memory_order_relaxed);
           g += 2) {
        runner.run(group_at(launch_.grid.groups, g), g);
      }
    } catch (...) {
      failed_.store(true);
    }
  }

  const sim::Program& program_;
  const sim::Bindings& bindings_;
  const Launch& launch_;
  const SimOptions& options_;
  std::atomic<bool> failed_{false};
};

/// The bytes of every tensor the kernel writes, to restore before a sequential rerun.
std::vector<std::vector<std::byte>> written_tensors(const ir::Kernel& kernel,
                                                    const std::vector<Arg>& args) {
  std::vector<std::vector<std::byte>> saved(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (ir::is_output(kernel.params[i].kind)) saved[i] = std::get<HostTensor*>(args[i])->bytes;
  }
  return saved;
}

void restore(const ir::Kernel& kernel, const std::vector<Arg>& args,
             const std::vector<std::vector<std::byte>>& saved) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!ir::is_output(kernel.params[i].kind)) continue;
    std::vector<std::byte>& bytes = std::get<HostTensor*>(args[i])->bytes;
    std::copy(saved[i].begin(), saved[i].end(), bytes.begin());  // the bindings point into bytes
  }
}

void run_in_order(const sim::Program& program, const sim::Bindings& bindings, const Launch& launch,
                  const SimOptions& options) {
  const auto threads = static_cast<std::uint32_t>(launch.grid.group_size.volume());
  sim::TensorShadow shadow(program, bindings.tensors, threads);
  GroupRunner runner(program, bindings, launch.grid, options, shadow);
  const std::uint64_t groups = launch.grid.groups.volume();
  for (std::uint64_t g = 0; g < groups; ++g) runner.run(group_at(launch.grid.groups, g), g);
  if (options.writers != nullptr) shadow.export_writers(program, *options.writers);
}

bool uses_fragments(const ir::Kernel& kernel) {
  bool found = false;
  ir::walk(kernel.body, [&](const ir::Op& op) { found |= op.kind == ir::OpKind::FragDecl; });
  return found;
}

/// Runs `launch` again with `second`, on copies of the tensors it writes holding what they held
/// before the first run (`before`), and reports the first output element that differs from the
/// first run's as a finding of `kind`: `first` and `second` name what the runs ran under, `why`
/// says what a difference means.
void compare_runs(const Launch& launch, const SimOptions& second,
                  const std::vector<std::vector<std::byte>>& before, SimError::Kind kind,
                  const std::string& first, const std::string& second_name,
                  const std::string& why) {
  const ir::Kernel& kernel = *launch.kernel;
  Launch other = launch;
  std::vector<HostTensor> copies(launch.args.size());
  for (std::size_t i = 0; i < launch.args.size(); ++i) {
    if (!ir::is_output(kernel.params[i].kind)) continue;
    copies[i] = *std::get<HostTensor*>(launch.args[i]);
    copies[i].bytes = before[i];
    other.args[i] = &copies[i];
  }
  try {
    sim_run(other, second);
  } catch (const SimError& e) {
    throw SimError(e.kind(), fmt::format("under {}: {}", second_name, e.what()));
  }
  for (std::size_t i = 0; i < launch.args.size(); ++i) {
    if (!ir::is_output(kernel.params[i].kind)) continue;
    const std::vector<std::byte>& ran = std::get<HostTensor*>(launch.args[i])->bytes;
    const std::size_t size = dtype_size(kernel.params[i].dtype);
    for (std::size_t at = 0; at < ran.size(); at += size) {
      if (std::memcmp(ran.data() + at, copies[i].bytes.data() + at, size) == 0) continue;
      throw SimError(
          kind, fmt::format("{}: element {} of '{}' differs between {} and {}: {}", kernel.name,
                            at / size, kernel.params[i].name, first, second_name, why));
    }
  }
}

/// Runs `launch` again under the other lane map (compare_runs).
void compare_lane_maps(const Launch& launch, const SimOptions& options,
                       const std::vector<std::vector<std::byte>>& before) {
  SimOptions second = options;
  second.writers = nullptr;
  second.compare_lane_maps = false;
  second.compare_target_paths = false;
  second.lane_map =
      options.lane_map == ir::LaneMap::Mma ? ir::LaneMap::Simdgroup8x8 : ir::LaneMap::Mma;
  compare_runs(launch, second, before, SimError::Kind::LaneMapDependent,
               fmt::format("the {} lane map", ir::lane_map_name(options.lane_map)),
               fmt::format("the {} lane map", ir::lane_map_name(second.lane_map)),
               "the result depends on which lane holds which fragment element (positions come "
               "from the fragment's row() and col(), never from lane_id())");
}

/// Runs `launch` again with the other answer to its target queries (compare_runs).
void compare_target_paths(const Launch& launch, const SimOptions& options,
                          const std::vector<std::vector<std::byte>>& before) {
  SimOptions second = options;
  second.writers = nullptr;
  second.compare_lane_maps = false;
  second.compare_target_paths = false;
  second.warpgroup_products = !options.warpgroup_products;
  second.paired_accumulator_columns = !options.paired_accumulator_columns;
  second.large_shared_memory = !options.large_shared_memory;
  const auto path = [](const SimOptions& o) {
    return fmt::format(
        "the path of targets {} warpgroup products, {} paired accumulator columns and {} large "
        "shared memory",
        o.warpgroup_products ? "with" : "without",
        o.paired_accumulator_columns ? "with" : "without",
        o.large_shared_memory ? "with" : "without");
  };
  compare_runs(launch, second, before, SimError::Kind::TargetPathDependent, path(options),
               path(second), "the branches on target_has(...) must compute the same results");
}

/// The simulator stands for a CUDA device of compute capability 9.0: its shared memory, and the
/// stages its pipelines run with (as sm_90a for a kernel with warpgroup products, which it runs
/// asynchronously as wgmma does). Its target queries take the path options.warpgroup_products
/// says; on the path with them, a pipeline's tile copies run as TMA copies on mbarriers where
/// sm_90a runs them so.
codegen::TargetProfile simulated_device(const ir::Kernel& kernel, const SimOptions& options) {
  const bool products = codegen::has_warpgroup_products(kernel);
  codegen::TargetProfile device = codegen::TargetProfile::cuda(
      90, products ? codegen::MmaStrategy::Wgmma : codegen::MmaStrategy::MmaSync);
  device.tensor_maps = products && options.warpgroup_products;
  return device;
}

/// simulated_kernel's passes; nullopt when none changes the kernel (no copy is made).
std::optional<ir::Kernel> lowered_for_simulation(const Launch& launch, const SimOptions& options,
                                                 const codegen::TargetProfile& device) {
  // Its specializations are bound as a CUDA launch binds them, so it runs the code that
  // launch compiles.
  std::optional<ir::Kernel> expanded;
  if (codegen::has_target_queries(*launch.kernel) || codegen::has_specializations(*launch.kernel)) {
    expanded = *launch.kernel;
    codegen::select_target_paths(
        *expanded,
        [&](ir::TargetFeature f) {
          switch (f) {
            case ir::TargetFeature::WarpgroupProducts:
            case ir::TargetFeature::TensorMaps:  // the path of a launch on an sm_90a device
              return options.warpgroup_products;
            case ir::TargetFeature::PairedAccumulatorColumns:
              return options.paired_accumulator_columns;
            case ir::TargetFeature::LargeSharedMemory:
              return options.large_shared_memory;
          }
          return false;
        },
        launch_specialization(ir::SpecializationPlan(*launch.kernel), launch.args));
  }
  if (codegen::has_tile_copies(expanded ? *expanded : *launch.kernel)) {
    if (!expanded) expanded = *launch.kernel;
    codegen::lower_tile_copies(*expanded, device);
  }
  if (codegen::pipeline_stages(expanded ? *expanded : *launch.kernel, device) > 0) {
    if (!expanded) expanded = *launch.kernel;
    codegen::expand_pipelines(*expanded, device);
  }
  return expanded;
}

}  // namespace

ir::Kernel simulated_kernel(const Launch& launch, const SimOptions& options) {
  if (launch.kernel == nullptr) {
    throw SimError(SimError::Kind::BadArgument, "simulated_kernel: the launch has no kernel");
  }
  std::optional<ir::Kernel> lowered =
      lowered_for_simulation(launch, options, simulated_device(*launch.kernel, options));
  if (lowered) return std::move(*lowered);
  return *launch.kernel;
}

void sim_run(const Launch& launch, const SimOptions& options) {
  if (launch.kernel == nullptr) {
    throw SimError(SimError::Kind::BadArgument, "sim_run: the launch has no kernel");
  }
  const codegen::TargetProfile device = simulated_device(*launch.kernel, options);
  const bool queries = codegen::has_target_queries(*launch.kernel);
  const std::optional<ir::Kernel> expanded = lowered_for_simulation(launch, options, device);
  const ir::Kernel& kernel = expanded ? *expanded : *launch.kernel;
  const sim::Program program = sim::compile(kernel);  // verifies the kernel first
  DeviceLimits limits;
  limits.max_shared_bytes = device.max_shared_bytes;
  check_dispatch(kernel, launch.args, launch.grid, limits);
  const std::uint64_t groups = launch.grid.groups.volume();
  std::uint64_t threads = 0;
  if (__builtin_mul_overflow(groups, launch.grid.group_size.volume(), &threads) ||
      threads > kMaxThreads) {
    throw SimError(SimError::Kind::BadArgument,
                   fmt::format("{}: the simulator runs at most {} threads per launch; this grid "
                               "has {} groups of {}",
                               kernel.name, kMaxThreads, groups, launch.grid.group_size.volume()));
  }
  const bool check_maps = options.compare_lane_maps && uses_fragments(kernel);
  const bool check_paths = options.compare_target_paths && queries;
  const auto before = check_maps || check_paths ? written_tensors(kernel, launch.args)
                                                : std::vector<std::vector<std::byte>>{};
  const sim::Bindings bindings = bind(kernel, launch.args);
  const bool parallel = options.host_threads > 1 && !program.tensor_atomics && groups > 1 &&
                        threads >= kParallelThreshold;
  bool done = false;
  if (parallel) {
    auto saved = written_tensors(kernel, launch.args);
    done = ParallelRun(program, bindings, launch, options).run();
    if (!done) restore(kernel, launch.args, saved);
  }
  if (!done) run_in_order(program, bindings, launch, options);
  if (check_maps) compare_lane_maps(launch, options, before);
  if (check_paths) compare_target_paths(launch, options, before);
}

}  // namespace iron::runtime
