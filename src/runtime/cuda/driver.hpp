/// The CUDA driver API loaded with dlopen (never linked, no <cuda.h>): its few types, the
/// functions Iron calls, the libcuda search, and errors named with cuGetErrorName.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "library_loader.hpp"

namespace iron::runtime::cuda {

// The driver's C ABI, declared here so that building Iron needs no CUDA headers.
using CUresult = int;  // CUDA_SUCCESS is 0
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUevent = struct CUevent_st*;
using CUstream = struct CUstream_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;

inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorStubLibrary = 34;  // CUDA_ERROR_STUB_LIBRARY

/// CUdevice_attribute values Iron reads (cuda.h 13.0).
enum class DeviceAttribute : int {
  MaxThreadsPerBlock = 1,
  MaxGridDimX = 5,
  MaxGridDimY = 6,
  MaxGridDimZ = 7,
  MaxSharedMemoryPerBlock = 8,
  MaxSharedMemoryPerBlockOptin = 97,  ///< what a block may opt in to (dynamic shared memory)
  ClockRate = 13,                     ///< kHz
  MultiprocessorCount = 16,
  MemoryClockRate = 36,       ///< kHz
  GlobalMemoryBusWidth = 37,  ///< bits
  L2CacheSize = 38,           ///< bytes
  ComputeCapabilityMajor = 75,
  ComputeCapabilityMinor = 76,
};

/// CUpointer_attribute values Iron reads (cuda.h 13.0).
enum class PointerAttribute : int {
  MemoryType = 2,       ///< CUmemorytype: 0 when the address is no memory CUDA knows
  RangeStartAddr = 11,  ///< the start of the allocation holding the address
  RangeSize = 12,       ///< its size in bytes
};

/// CUfunction_attribute values Iron reads (cuda.h 13.0).
enum class FunctionAttribute : int {
  MaxThreadsPerBlock = 0,  ///< the most threads per block this compiled function can launch with
  MaxDynamicSharedSizeBytes = 8,  ///< the dynamic shared memory a launch may ask for (settable)
};

/// The driver functions Iron calls, resolved by name from the opened library.
struct DriverApi {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*device_total_mem)(std::size_t*, CUdevice) = nullptr;
  CUresult (*device_primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, std::size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*memcpy_htod)(CUdeviceptr, const void*, std::size_t) = nullptr;
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, std::size_t) = nullptr;
  CUresult (*memcpy_dtod)(CUdeviceptr, CUdeviceptr, std::size_t) = nullptr;
  CUresult (*memset_d8)(CUdeviceptr, unsigned char, std::size_t) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
  CUresult (*event_create)(CUevent*, unsigned int) = nullptr;
  CUresult (*event_record)(CUevent, CUstream) = nullptr;
  CUresult (*event_synchronize)(CUevent) = nullptr;
  CUresult (*event_elapsed_time)(float*, CUevent, CUevent) = nullptr;
  CUresult (*event_destroy)(CUevent) = nullptr;
  CUresult (*func_get_attribute)(int*, int, CUfunction) = nullptr;
  CUresult (*func_set_attribute)(CUfunction, int, int) = nullptr;
  // Streams, and graphs captured from them (the device-resident API, iron/runtime/device.hpp).
  CUresult (*stream_create)(CUstream*, unsigned int) = nullptr;
  CUresult (*stream_destroy)(CUstream) = nullptr;
  CUresult (*stream_synchronize)(CUstream) = nullptr;
  CUresult (*stream_begin_capture)(CUstream, int) = nullptr;
  CUresult (*stream_end_capture)(CUstream, CUgraph*) = nullptr;
  CUresult (*graph_instantiate)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
  CUresult (*graph_launch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*graph_exec_destroy)(CUgraphExec) = nullptr;
  CUresult (*graph_destroy)(CUgraph) = nullptr;
  /// Attributes of an address; never an error for memory CUDA does not know (zeros instead).
  CUresult (*pointer_get_attributes)(unsigned int, int*, void**, CUdeviceptr) = nullptr;
  /// cuTensorMapEncodeTiled (CUDA 12+): the map (128 bytes), data type, rank, address, dims,
  /// strides in bytes (rank - 1), box, element strides, interleave, swizzle, L2 promotion,
  /// out-of-bounds fill. The enums are ints (cuda.h 13.0).
  CUresult (*tensor_map_encode_tiled)(void*, int, unsigned int, void*, const unsigned long long*,
                                      const unsigned long long*, const unsigned int*,
                                      const unsigned int*, int, int, int, int) = nullptr;
};

/// A loaded and initialised driver, or why there is none.
class Driver {
 public:
  bool available() const { return available_; }
  /// When unavailable: why, in one line (no library, a stub, a missing function, cuInit failed,
  /// no device).
  const std::string& reason() const { return reason_; }
  /// The libcuda file that was opened, as the dynamic loader resolved it.
  const std::string& library_path() const { return library_path_; }
  /// cuDriverGetVersion: 1000 * major + 10 * minor (13000 for CUDA 13.0).
  int version() const { return version_; }
  int device_count() const { return device_count_; }
  /// The resolved functions; only meaningful when available().
  const DriverApi& api() const { return api_; }

  /// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
  std::string describe(CUresult result) const;
  /// Throws iron::Error "CALL failed for WHAT: NAME (description)" unless `result` is success.
  void check(CUresult result, std::string_view call, std::string_view what) const;

  /// Searches driver_search_list() and initialises the first real libcuda found; never throws.
  /// Each call searches again: use driver() for the process's one driver.
  static Driver load();

 private:
  bool available_ = false;
  std::string reason_;
  std::string library_path_;
  int version_ = 0;
  int device_count_ = 0;
  DriverApi api_;
};

/// Where libcuda is looked for, in order. When $IRON_LIBCUDA is set it is the only candidate;
/// else the sonames libcuda.so.1 and libcuda.so (the dynamic loader's own search), then
/// /usr/lib/x86_64-linux-gnu/libcuda.so.1, /usr/lib64/libcuda.so.1 and
/// /usr/local/nvidia/lib64/libcuda.so.1. A path in a stubs/ folder (the CUDA toolkit's link-time
/// stub, whose cuInit always fails) is never opened.
std::vector<LibraryCandidate> driver_search_list();

/// The process's driver, loaded once on first use. Thread-safe.
const Driver& driver();

}  // namespace iron::runtime::cuda
