/// The backend registry: the simulator today; CUDA and Metal report why they cannot run.
#include "iron/runtime/backend.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "iron/core/error.hpp"
#include "iron/runtime/sim.hpp"

namespace iron::runtime {
namespace {

class SimBackend final : public Backend {
 public:
  std::string_view name() const override { return "sim"; }
  void run(const Launch& launch) override { sim_run(launch); }
};

}  // namespace

std::vector<BackendStatus> backend_statuses() {
  return {
      {"sim", true, ""},
      {"cuda", false, "the CUDA backend is not implemented yet"},
#ifdef __APPLE__
      {"metal", false, "the Metal backend is not implemented yet"},
#else
      {"metal", false, "Metal runs only on Apple platforms"},
#endif
  };
}

std::unique_ptr<Backend> make_backend(std::string_view name) {
  // "auto" is the best available backend; only the simulator runs in this version.
  if (name == "sim" || name == "auto") return std::make_unique<SimBackend>();
  const auto statuses = backend_statuses();
  const auto known = std::find_if(statuses.begin(), statuses.end(),
                                  [&](const BackendStatus& s) { return s.name == name; });
  if (known == statuses.end()) {
    throw Error(fmt::format("unknown backend '{}': choose auto, sim, cuda or metal", name));
  }
  throw Error(fmt::format("backend {} is not available: {}", name, known->reason));
}

}  // namespace iron::runtime
