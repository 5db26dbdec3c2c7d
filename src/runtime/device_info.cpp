/// Describes the CUDA driver and each device through the driver API, once per process.
#include "iron/runtime/device_info.hpp"

#include <fmt/format.h>

#include <array>

#include "cuda/driver.hpp"
#include "iron/core/error.hpp"

namespace iron::runtime {
namespace {

using cuda::DeviceAttribute;

class DeviceQuery {
 public:
  DeviceQuery(const cuda::Driver& driver, int ordinal)
      : driver_(driver), what_(fmt::format("CUDA device {}", ordinal)) {
    driver_.check(driver_.api().device_get(&device_, ordinal), "cuDeviceGet", what_);
  }

  int attribute(DeviceAttribute attribute) const {
    int value = 0;
    driver_.check(driver_.api().device_get_attribute(&value, static_cast<int>(attribute), device_),
                  fmt::format("cuDeviceGetAttribute({})", static_cast<int>(attribute)), what_);
    return value;
  }

  std::string name() const {
    std::array<char, 256> name{};
    driver_.check(
        driver_.api().device_get_name(name.data(), static_cast<int>(name.size()), device_),
        "cuDeviceGetName", what_);
    name.back() = '\0';
    return name.data();
  }

  std::uint64_t total_memory() const {
    std::size_t bytes = 0;
    driver_.check(driver_.api().device_total_mem(&bytes, device_), "cuDeviceTotalMem_v2", what_);
    return bytes;
  }

 private:
  const cuda::Driver& driver_;
  std::string what_;
  cuda::CUdevice device_ = 0;
};

std::uint32_t as_count(int value) { return value > 0 ? static_cast<std::uint32_t>(value) : 0; }

CudaDeviceInfo describe(const cuda::Driver& driver, int ordinal) {
  const DeviceQuery query(driver, ordinal);
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  info.name = query.name();
  info.major = query.attribute(DeviceAttribute::ComputeCapabilityMajor);
  info.minor = query.attribute(DeviceAttribute::ComputeCapabilityMinor);
  info.multiprocessors = query.attribute(DeviceAttribute::MultiprocessorCount);
  info.memory_bytes = query.total_memory();
  info.l2_bytes = as_count(query.attribute(DeviceAttribute::L2CacheSize));
  info.sm_clock_khz = query.attribute(DeviceAttribute::ClockRate);
  info.memory_clock_khz = query.attribute(DeviceAttribute::MemoryClockRate);
  info.bus_width_bits = query.attribute(DeviceAttribute::GlobalMemoryBusWidth);
  info.limits.max_threads_per_group =
      as_count(query.attribute(DeviceAttribute::MaxThreadsPerBlock));
  // Kernels past the static 48 KB opt in to more (cuFuncSetAttribute), up to this.
  info.limits.max_shared_bytes =
      as_count(query.attribute(DeviceAttribute::MaxSharedMemoryPerBlockOptin));
  info.limits.max_groups[0] = as_count(query.attribute(DeviceAttribute::MaxGridDimX));
  info.limits.max_groups[1] = as_count(query.attribute(DeviceAttribute::MaxGridDimY));
  info.limits.max_groups[2] = as_count(query.attribute(DeviceAttribute::MaxGridDimZ));
  return info;
}

CudaReport make_report() {
  const cuda::Driver& driver = cuda::driver();
  CudaReport report;
  report.driver_loaded = driver.version() > 0;  // known only once cuInit succeeded
  report.driver_library = driver.library_path();
  report.driver_version = driver.version();
  if (!driver.available()) {
    report.reason = driver.reason();
    return report;
  }
  try {
    for (int ordinal = 0; ordinal < driver.device_count(); ++ordinal) {
      report.devices.push_back(describe(driver, ordinal));
    }
  } catch (const Error& e) {
    report.reason = e.what();
  }
  return report;
}

}  // namespace

const CudaReport& cuda_report() {
  static const CudaReport report = make_report();  // initialised once, thread-safe
  return report;
}

std::string cuda_version_text(int version) {
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

}  // namespace iron::runtime
