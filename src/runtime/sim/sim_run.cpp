/// The simulator's entry point: checks the dispatch, prepares the kernel, and runs the groups one
/// after another, on two threads when the kernel has no tensor atomics (same result either way).
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "interpreter.hpp"
#include "iron/runtime/dispatch_guard.hpp"
#include "iron/runtime/sim.hpp"

namespace iron::runtime {
namespace {

using sim::GroupRunner;

// Below this many threads in the grid, starting a second OS thread costs more than it saves.
constexpr std::uint64_t kParallelThreshold = 4096;

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
  return b;
}

Dim3 group_at(const Dim3& groups, std::uint64_t linear) {
  Dim3 g;
  g.x = static_cast<std::uint32_t>(linear % groups.x);
  g.y = static_cast<std::uint32_t>(linear / groups.x % groups.y);
  g.z = static_cast<std::uint32_t>(linear / (std::uint64_t{groups.x} * groups.y));
  return g;
}

// Worker w runs groups w, w + n, w + 2n, ... and stops past the first failing group known so
// far; every group before the first failure runs, so the error reported is the sequential one.
class ParallelRun {
 public:
  ParallelRun(const sim::Program& program, const sim::Bindings& bindings, const Launch& launch,
              const SimOptions& options)
      : program_(program),
        bindings_(bindings),
        launch_(launch),
        options_(options),
        stop_at_(launch.grid.groups.volume()) {}

  void run(unsigned workers) {
    std::vector<std::thread> threads;
    for (unsigned w = 1; w < workers; ++w)
      threads.emplace_back([this, w, workers] { work(w, workers); });
    work(0, workers);
    for (std::thread& t : threads) t.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work(unsigned first, unsigned stride) {
    std::uint64_t g = first;
    try {
      GroupRunner runner(program_, bindings_, launch_.grid, options_);
      for (; g < stop_at_.load(std::memory_order_relaxed); g += stride) {
        runner.run(group_at(launch_.grid.groups, g));
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (g < stop_at_.load()) {
        stop_at_.store(g);
        error_ = std::current_exception();
      }
    }
  }

  const sim::Program& program_;
  const sim::Bindings& bindings_;
  const Launch& launch_;
  const SimOptions& options_;
  std::atomic<std::uint64_t> stop_at_;
  std::mutex mutex_;
  std::exception_ptr error_;
};

}  // namespace

void sim_run(const Launch& launch, const SimOptions& options) {
  if (launch.kernel == nullptr) {
    throw SimError(SimError::Kind::BadArgument, "sim_run: the launch has no kernel");
  }
  const ir::Kernel& kernel = *launch.kernel;
  check_dispatch(kernel, launch.args, launch.grid, DeviceLimits{});
  const sim::Program program = sim::compile(kernel);
  const sim::Bindings bindings = bind(kernel, launch.args);
  const std::uint64_t groups = launch.grid.groups.volume();
  const bool parallel = !program.tensor_atomics && groups > 1 &&
                        std::thread::hardware_concurrency() > 1 &&
                        groups * launch.grid.group_size.volume() >= kParallelThreshold;
  if (!parallel) {
    GroupRunner runner(program, bindings, launch.grid, options);
    for (std::uint64_t g = 0; g < groups; ++g) runner.run(group_at(launch.grid.groups, g));
    return;
  }
  ParallelRun(program, bindings, launch, options).run(2);
}

}  // namespace iron::runtime
