/// The backend registry: the simulator always, CUDA when a driver, a device and NVRTC are here
/// (its cubins compiled ahead of time with NVRTC), and why Metal is absent.
#include "iron/runtime/backend.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cuda/cuda_backend.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/nvrtc.hpp"
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

BackendStatus sim_status() { return {"sim", true, ""}; }

BackendStatus metal_status() {
#ifdef __APPLE__
  return {"metal", false,
          "the Metal backend is not implemented yet; MSL is emitted by `iron build`"};
#else
  return {"metal", false,
          "Metal runs only on Apple platforms; MSL is still emitted by `iron build`"};
#endif
}

BackendStatus nvrtc_backend_status() {
  const NvrtcStatus& nvrtc = nvrtc_status();
  return {"nvrtc", nvrtc.available, nvrtc.reason};
}

std::vector<std::byte> compile_cuda_cubin(const std::string& source, const std::string& symbol,
                                          const codegen::TargetProfile& profile) {
  return compile_cubin(source, symbol, profile.cuda_sm, profile.arch_specific()).cubin;
}

/// "auto, sim, cuda or metal".
std::string choices() {
  std::string text = "auto";
  const auto& all = backends();
  for (std::size_t i = 0; i < all.size(); ++i) {
    text += fmt::format("{}{}", i + 1 == all.size() ? " or " : ", ", all[i].name);
  }
  return text;
}

}  // namespace

const std::vector<BackendEntry>& backends() {
  static const std::vector<BackendEntry> all = {
      {.name = "sim",
       .target = "",
       .device = false,
       .sanitizer = true,
       .status = sim_status,
       .make = [] { return std::unique_ptr<Backend>(std::make_unique<SimBackend>()); },
       .binary = std::nullopt},
      {.name = "cuda",
       .target = "cuda",
       .device = true,
       .sanitizer = false,
       .status = [] { return cuda::cuda_backend_status(); },
       .make = [] { return std::unique_ptr<Backend>(std::make_unique<cuda::CudaBackend>()); },
       .binary = BinaryFormat{.name = "cubin",
                              .compiler = "NVRTC",
                              .status = nvrtc_backend_status,
                              .compile = compile_cuda_cubin}},
      {.name = "metal",
       .target = "msl",
       .device = true,
       .sanitizer = false,
       .status = metal_status,
       .make = nullptr,
       .binary = std::nullopt},
  };
  return all;
}

const BackendEntry* find_backend(std::string_view name) {
  const auto& all = backends();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const BackendEntry& b) { return b.name == name; });
  return it == all.end() ? nullptr : &*it;
}

const BackendEntry& auto_backend() {
  const auto& all = backends();
  const auto device = std::find_if(all.begin(), all.end(), [](const BackendEntry& b) {
    return b.device && b.status().available;
  });
  if (device != all.end()) return *device;
  const auto host =
      std::find_if(all.begin(), all.end(), [](const BackendEntry& b) { return !b.device; });
  IRON_INTERNAL_ASSERT(host != all.end(), "no backend runs on the host");
  return *host;
}

std::vector<BackendStatus> backend_statuses() {
  std::vector<BackendStatus> statuses;
  for (const BackendEntry& b : backends()) statuses.push_back(b.status());
  return statuses;
}

std::unique_ptr<Backend> make_backend(std::string_view name) {
  const BackendEntry* entry = name == "auto" ? &auto_backend() : find_backend(name);
  if (entry == nullptr) {
    throw Error(fmt::format("unknown backend '{}': choose {}", name, choices()));
  }
  const BackendStatus status = entry->status();
  if (!status.available) {
    throw Error(fmt::format("backend {} is not available: {}", name, status.reason));
  }
  return entry->make();
}

}  // namespace iron::runtime
