/// The CUDA backend: runs a Launch on the first CUDA device through the driver API, with the
/// kernel compiled by NVRTC for that device's exact architecture.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "driver.hpp"
#include "iron/core/specialization.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/runtime/device_info.hpp"
#include "prepared_kernel.hpp"

namespace iron::runtime::cuda {

/// Whether the backend can run here, and if not why: a driver with a device (the first one CUDA
/// lists; CUDA_VISIBLE_DEVICES picks it) of compute capability 8.0 or newer, its primary context,
/// and NVRTC. Found once per process. Thread-safe.
const BackendStatus& cuda_backend_status();

/// The device of cuda_backend_status() and its retained primary context; require available.
const CudaDeviceInfo& cuda_device();
CUcontext cuda_context();

/// Throws iron::Error naming `kernel` when an earlier kernel fault left the context unusable.
void refuse_after_fault(const ir::Kernel& kernel);
/// Records the process's first kernel fault (later ones are kept out): every later launch, on
/// the backend or the device API, is refused with it.
void record_fault(const std::string& fault);

/// Runs launches on the device of cuda_backend_status(). One instance per thread; instances on
/// several threads share the device, its primary context and the module cache.
class CudaBackend final : public Backend {
 public:
  /// Requires cuda_backend_status().available.
  CudaBackend();

  std::string_view name() const override { return "cuda"; }

  /// The dispatch guard with the device's limits; the kernel compiled for the device (through
  /// the module cache); every tensor copied to the device (outputs too, so elements the kernel
  /// does not write keep the poison the caller put there); the launch on stream 0; outputs
  /// copied back. Launches from several threads take turns on the device. Throws DispatchError
  /// when refused, iron::Error naming the kernel and the driver's error otherwise; after a kernel
  /// fails on the GPU, which leaves the context unusable, every later run is refused with that
  /// first failure.
  void run(const Launch& launch) override;

  /// The GPU time of the last run's kernel, measured with events around the launch.
  double last_kernel_ms() const { return last_kernel_ms_; }

 private:
  /// The loaded function for the traced kernel and the specialization `args` bind, compiled on
  /// first use by this instance.
  const PreparedKernel& prepare(const ir::Kernel& kernel, const std::vector<Arg>& args);

  const CudaDeviceInfo& device_;
  CUcontext context_;
  /// By structural hash of the traced IR, then specialization_key.
  std::map<std::pair<std::uint64_t, std::uint64_t>, PreparedKernel> prepared_;
  std::unordered_map<std::uint64_t, ir::SpecializationPlan> plans_;  ///< by structural hash
  double last_kernel_ms_ = 0.0;
};

}  // namespace iron::runtime::cuda
