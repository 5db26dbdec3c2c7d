/// The backend registry: the simulator always, CUDA when a driver, a device and NVRTC are here,
/// and why Metal is absent.
#include "iron/runtime/backend.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cuda/cuda_backend.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/sim.hpp"

namespace iron::runtime {
namespace {

class SimBackend final : public Backend {
 public:
  std::string_view name() const override { return "sim"; }
  void run(const Launch& launch) override {
    writers_ = {};
    SimOptions options;
    options.writers = &writers_;
    sim_run(launch, options);
  }
  std::optional<std::string> element_writer(std::size_t param, std::uint64_t index) const override {
    return writers_.of(param, index);
  }

 private:
  SimWriters writers_;  ///< of the last run
};

BackendStatus metal_status() {
#ifdef __APPLE__
  return {"metal", false,
          "the Metal backend is not implemented yet; MSL is emitted by `iron build`"};
#else
  return {"metal", false,
          "Metal runs only on Apple platforms; MSL is still emitted by `iron build`"};
#endif
}

}  // namespace

std::vector<BackendStatus> backend_statuses() {
  return {{"sim", true, ""}, cuda::cuda_backend_status(), metal_status()};
}

std::unique_ptr<Backend> make_backend(std::string_view name) {
  const bool cuda_here = cuda::cuda_backend_status().available;
  if (name == "sim" || (name == "auto" && !cuda_here)) return std::make_unique<SimBackend>();
  if ((name == "cuda" || name == "auto") && cuda_here) return std::make_unique<cuda::CudaBackend>();
  const auto statuses = backend_statuses();
  const auto known = std::find_if(statuses.begin(), statuses.end(),
                                  [&](const BackendStatus& s) { return s.name == name; });
  if (known == statuses.end()) {
    throw Error(fmt::format("unknown backend '{}': choose auto, sim, cuda or metal", name));
  }
  throw Error(fmt::format("backend {} is not available: {}", name, known->reason));
}

}  // namespace iron::runtime
