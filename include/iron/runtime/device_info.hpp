/// The CUDA driver and devices present, with the numbers `iron device` shows and benches report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iron/runtime/dispatch_guard.hpp"

namespace iron::runtime {

/// One CUDA device as the driver describes it.
struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0;  ///< compute capability
  int minor = 0;
  int multiprocessors = 0;
  std::uint64_t memory_bytes = 0;
  std::uint64_t l2_bytes = 0;
  int sm_clock_khz = 0;
  int memory_clock_khz = 0;
  int bus_width_bits = 0;
  /// Threads per block, static shared memory per block, and grid dimensions.
  DeviceLimits limits;

  /// major * 10 + minor: 90 for compute capability 9.0.
  int sm() const { return major * 10 + minor; }
};

/// The driver, if one loaded, and every device it lists (CUDA_VISIBLE_DEVICES applies).
struct CudaReport {
  bool driver_loaded = false;  ///< libcuda opened and cuInit succeeded
  std::string driver_library;  ///< the libcuda file opened
  int driver_version = 0;      ///< 1000 * major + 10 * minor
  /// Why there is no device to run on (no driver, cuInit failed, no device, a failed query);
  /// empty when every device was described.
  std::string reason;
  std::vector<CudaDeviceInfo> devices;
};

/// Loads the driver and queries every device, once per process; never throws. Thread-safe.
const CudaReport& cuda_report();

/// "13.0" for 13000.
std::string cuda_version_text(int version);

}  // namespace iron::runtime
