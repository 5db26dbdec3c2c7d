/// Device buffers and launch events, released with every driver call checked.
#include "launch_resources.hpp"

#include <fmt/format.h>

#include "iron/core/error.hpp"

namespace iron::runtime::cuda {
namespace {

/// Runs `release` from a destructor: an error cannot be thrown there, so it is printed.
template <class Release>
void release_quietly(Release release) {
  try {
    release();
  } catch (const Error& e) {
    fmt::print(stderr, "iron: while cleaning up after an error: {}\n", e.what());
  }
}

}  // namespace

DeviceBuffers::~DeviceBuffers() {
  release_quietly([this] { free(); });
}

CUdeviceptr DeviceBuffers::upload(std::span<const std::byte> bytes) {
  if (bytes.empty()) return 0;
  CUdeviceptr address = 0;
  driver_.check(driver_.api().mem_alloc(&address, bytes.size()), "cuMemAlloc_v2", what_);
  owned_.push_back(address);
  driver_.check(driver_.api().memcpy_htod(address, bytes.data(), bytes.size()), "cuMemcpyHtoD_v2",
                what_);
  return address;
}

void DeviceBuffers::download(CUdeviceptr from, std::span<std::byte> to) const {
  if (to.empty()) return;
  driver_.check(driver_.api().memcpy_dtoh(to.data(), from, to.size()), "cuMemcpyDtoH_v2", what_);
}

void DeviceBuffers::free() {
  // Every allocation is freed even when one fails; the first failure is thrown.
  std::vector<CUdeviceptr> owned;
  owned.swap(owned_);
  CUresult first = kCudaSuccess;
  for (const CUdeviceptr address : owned) {
    const CUresult freed = driver_.api().mem_free(address);
    if (first == kCudaSuccess) first = freed;
  }
  driver_.check(first, "cuMemFree_v2", what_);
}

LaunchTimer::LaunchTimer(const Driver& driver, std::string what)
    : driver_(driver), what_(std::move(what)) {
  constexpr unsigned kDefaultFlags = 0;  // CU_EVENT_DEFAULT: timing enabled
  try {
    for (int i = 0; i < 2; ++i) {
      CUevent event = nullptr;
      driver_.check(driver_.api().event_create(&event, kDefaultFlags), "cuEventCreate", what_);
      events_.push_back(event);
    }
  } catch (const Error&) {
    // No destructor runs for a constructor that throws: destroy the first event here.
    release_quietly([this] { destroy(); });
    throw;
  }
}

LaunchTimer::~LaunchTimer() {
  release_quietly([this] { destroy(); });
}

void LaunchTimer::start() {
  driver_.check(driver_.api().event_record(events_.at(0), nullptr), "cuEventRecord", what_);
}

void LaunchTimer::stop() {
  driver_.check(driver_.api().event_record(events_.at(1), nullptr), "cuEventRecord", what_);
}

float LaunchTimer::elapsed_ms() const {
  driver_.check(driver_.api().event_synchronize(events_.at(1)), "cuEventSynchronize", what_);
  float ms = 0.0f;
  driver_.check(driver_.api().event_elapsed_time(&ms, events_.at(0), events_.at(1)),
                "cuEventElapsedTime", what_);
  return ms;
}

void LaunchTimer::destroy() {
  std::vector<CUevent> events;
  events.swap(events_);
  CUresult first = kCudaSuccess;
  for (CUevent event : events) {
    const CUresult destroyed = driver_.api().event_destroy(event);
    if (first == kCudaSuccess) first = destroyed;
  }
  driver_.check(first, "cuEventDestroy_v2", what_);
}

}  // namespace iron::runtime::cuda
