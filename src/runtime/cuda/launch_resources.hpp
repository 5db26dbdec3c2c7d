/// What one CUDA launch holds on the device: its buffers and the two events that time it. Each
/// is released on the normal path with errors thrown, and by its destructor after an error.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "driver.hpp"

namespace iron::runtime::cuda {

/// The device allocations of one launch (cuMemAlloc: 256-byte aligned).
class DeviceBuffers {
 public:
  /// `what` names the kernel in every error message.
  DeviceBuffers(const Driver& driver, std::string what) : driver_(driver), what_(std::move(what)) {}
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  /// Frees what free() did not (after an error); a failure goes to stderr.
  ~DeviceBuffers();

  /// A new allocation holding a copy of `bytes`; 0 (no allocation) when `bytes` is empty.
  CUdeviceptr upload(std::span<const std::byte> bytes);
  /// Copies `to.size()` bytes from the device at `from` into `to`.
  void download(CUdeviceptr from, std::span<std::byte> to) const;
  /// Frees every allocation; throws iron::Error on the first failure.
  void free();

 private:
  const Driver& driver_;
  std::string what_;
  std::vector<CUdeviceptr> owned_;
};

/// Two events on stream 0 around a launch: the kernel's time on the GPU.
class LaunchTimer {
 public:
  LaunchTimer(const Driver& driver, std::string what);
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;
  /// Destroys what destroy() did not (after an error); a failure goes to stderr.
  ~LaunchTimer();

  void start();
  void stop();
  /// Waits for the stop event; milliseconds between the two.
  float elapsed_ms() const;
  /// Destroys both events; throws iron::Error on the first failure.
  void destroy();

 private:
  const Driver& driver_;
  std::string what_;
  std::vector<CUevent> events_;  // start, stop
};

}  // namespace iron::runtime::cuda
