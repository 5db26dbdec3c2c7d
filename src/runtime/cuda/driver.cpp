/// libcuda through dlopen: the search (never a stub), the function table, cuInit, the device
/// count, and error names.
#include "driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "iron/core/error.hpp"

namespace iron::runtime::cuda {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSonames[] = {"libcuda.so.1", "libcuda.so"};
constexpr const char* kFixedPaths[] = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                       "/usr/lib64/libcuda.so.1",
                                       "/usr/local/nvidia/lib64/libcuda.so.1"};
constexpr const char* kStubSkipped =
    "the CUDA toolkit's link-time stub, which cannot run kernels: not opened";

bool is_stub_path(std::string_view path) { return path.find("/stubs/") != std::string::npos; }

const char* iron_libcuda() {
  const char* value = std::getenv("IRON_LIBCUDA");
  return value != nullptr && *value != '\0' ? value : nullptr;
}

/// The toolkit's stub libcuda, if this machine has one; "" otherwise.
std::string toolkit_stub() {
  for (const auto& root : cuda_toolkit_roots()) {
    for (const char* folder : {"lib64/stubs", "lib/stubs", "targets/x86_64-linux/lib/stubs"}) {
      std::error_code error;
      const fs::path stub = root / folder / "libcuda.so";
      if (fs::exists(stub, error)) return stub.string();
    }
  }
  return "";
}

/// open_first over `candidates`, passing over a soname that the loader resolved into a stubs/
/// folder (LD_LIBRARY_PATH may point there).
LibrarySearch open_real_driver(const std::vector<LibraryCandidate>& candidates) {
  LibrarySearch result;
  std::size_t next = 0;
  while (next < candidates.size()) {
    const std::vector<LibraryCandidate> rest(candidates.begin() + static_cast<std::ptrdiff_t>(next),
                                             candidates.end());
    LibrarySearch search = open_first(rest);
    result.tried.insert(result.tried.end(), search.tried.begin(), search.tried.end());
    if (search.handle == nullptr || !is_stub_path(search.path)) {
      result.handle = search.handle;
      result.path = search.path;
      return result;
    }
    // Close the stub so that a later soname does not find it already loaded.
    const bool closed = dlclose(search.handle) == 0;
    result.tried.push_back(fmt::format(
        "{}: resolved to {}, the CUDA toolkit's link-time stub, which cannot run kernels: {}",
        rest[search.tried.size()].path, search.path,
        closed ? "closed again" : "skipped (dlclose failed)"));
    next += search.tried.size() + 1;
  }
  return result;
}

std::string not_found_reason(const LibrarySearch& search) {
  const std::string tried = fmt::format("{}", fmt::join(search.tried, "; "));
  if (const char* path = iron_libcuda()) {
    return fmt::format("no NVIDIA driver: $IRON_LIBCUDA={} did not open ({})", path, tried);
  }
  std::string reason = fmt::format("no NVIDIA driver: libcuda.so.1 not found (tried: {})", tried);
  if (const std::string stub = toolkit_stub(); !stub.empty()) {
    reason += fmt::format(
        "; only the CUDA toolkit's stub {} is here, which links programs but cannot run "
        "kernels: install the NVIDIA driver",
        stub);
  }
  return reason;
}

template <class Fn>
void resolve(void* handle, const char* symbol, Fn& fn, std::vector<std::string>& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr) missing.emplace_back(symbol);
}

/// Resolves every function; returns the names of those the library lacks.
std::vector<std::string> resolve_all(void* handle, DriverApi& api) {
  std::vector<std::string> missing;
  resolve(handle, "cuInit", api.init, missing);
  resolve(handle, "cuDriverGetVersion", api.driver_get_version, missing);
  resolve(handle, "cuDeviceGetCount", api.device_get_count, missing);
  resolve(handle, "cuDeviceGet", api.device_get, missing);
  resolve(handle, "cuDeviceGetName", api.device_get_name, missing);
  resolve(handle, "cuDeviceGetAttribute", api.device_get_attribute, missing);
  resolve(handle, "cuDeviceTotalMem_v2", api.device_total_mem, missing);
  resolve(handle, "cuDevicePrimaryCtxRetain", api.device_primary_ctx_retain, missing);
  resolve(handle, "cuCtxSetCurrent", api.ctx_set_current, missing);
  resolve(handle, "cuModuleLoadData", api.module_load_data, missing);
  resolve(handle, "cuModuleGetFunction", api.module_get_function, missing);
  resolve(handle, "cuModuleUnload", api.module_unload, missing);
  resolve(handle, "cuMemAlloc_v2", api.mem_alloc, missing);
  resolve(handle, "cuMemFree_v2", api.mem_free, missing);
  resolve(handle, "cuMemcpyHtoD_v2", api.memcpy_htod, missing);
  resolve(handle, "cuMemcpyDtoH_v2", api.memcpy_dtoh, missing);
  resolve(handle, "cuMemcpyDtoD_v2", api.memcpy_dtod, missing);
  resolve(handle, "cuMemsetD8_v2", api.memset_d8, missing);
  resolve(handle, "cuLaunchKernel", api.launch_kernel, missing);
  resolve(handle, "cuCtxSynchronize", api.ctx_synchronize, missing);
  resolve(handle, "cuGetErrorName", api.get_error_name, missing);
  resolve(handle, "cuGetErrorString", api.get_error_string, missing);
  resolve(handle, "cuEventCreate", api.event_create, missing);
  resolve(handle, "cuEventRecord", api.event_record, missing);
  resolve(handle, "cuEventSynchronize", api.event_synchronize, missing);
  resolve(handle, "cuEventElapsedTime", api.event_elapsed_time, missing);
  resolve(handle, "cuEventDestroy_v2", api.event_destroy, missing);
  resolve(handle, "cuFuncGetAttribute", api.func_get_attribute, missing);
  resolve(handle, "cuFuncSetAttribute", api.func_set_attribute, missing);
  resolve(handle, "cuStreamCreate", api.stream_create, missing);
  resolve(handle, "cuStreamDestroy_v2", api.stream_destroy, missing);
  resolve(handle, "cuStreamSynchronize", api.stream_synchronize, missing);
  resolve(handle, "cuStreamBeginCapture_v2", api.stream_begin_capture, missing);
  resolve(handle, "cuStreamEndCapture", api.stream_end_capture, missing);
  resolve(handle, "cuGraphInstantiateWithFlags", api.graph_instantiate, missing);
  resolve(handle, "cuGraphLaunch", api.graph_launch, missing);
  resolve(handle, "cuGraphExecDestroy", api.graph_exec_destroy, missing);
  resolve(handle, "cuGraphDestroy", api.graph_destroy, missing);
  resolve(handle, "cuPointerGetAttributes", api.pointer_get_attributes, missing);
  resolve(handle, "cuTensorMapEncodeTiled", api.tensor_map_encode_tiled, missing);
  return missing;
}

std::string missing_reason(const std::string& path, const std::vector<std::string>& missing) {
  constexpr std::size_t kNamed = 3;
  const std::vector<std::string> named(
      missing.begin(),
      missing.begin() + static_cast<std::ptrdiff_t>(std::min(missing.size(), kNamed)));
  const std::string more =
      missing.size() > kNamed ? fmt::format(" and {} more", missing.size() - kNamed) : "";
  return fmt::format("{} is not a usable CUDA driver: it lacks {}{}", path, fmt::join(named, ", "),
                     more);
}

}  // namespace

std::vector<LibraryCandidate> driver_search_list() {
  if (const char* path = iron_libcuda()) {
    return {{path, is_stub_path(path) ? kStubSkipped : ""}};
  }
  std::vector<LibraryCandidate> candidates;
  for (const char* soname : kSonames) candidates.push_back({soname, ""});
  for (const char* path : kFixedPaths) candidates.push_back({path, ""});
  return candidates;
}

std::string Driver::describe(CUresult result) const {
  const char* name = nullptr;
  if (api_.get_error_name == nullptr || api_.get_error_name(result, &name) != kCudaSuccess ||
      name == nullptr) {
    return fmt::format("CUresult {}", result);
  }
  const char* text = nullptr;
  if (api_.get_error_string == nullptr || api_.get_error_string(result, &text) != kCudaSuccess ||
      text == nullptr) {
    return name;
  }
  return fmt::format("{} ({})", name, text);
}

void Driver::check(CUresult result, std::string_view call, std::string_view what) const {
  if (result != kCudaSuccess) {
    throw Error(fmt::format("{} failed for {}: {}", call, what, describe(result)));
  }
}

Driver Driver::load() {
  Driver d;
  const LibrarySearch search = open_real_driver(driver_search_list());
  if (search.handle == nullptr) {
    d.reason_ = not_found_reason(search);
    return d;
  }
  d.library_path_ = search.path;
  const std::vector<std::string> missing = resolve_all(search.handle, d.api_);
  if (!missing.empty()) {
    d.reason_ = missing_reason(search.path, missing);
    return d;
  }
  if (const CUresult init = d.api_.init(0); init != kCudaSuccess) {
    d.reason_ = init == kCudaErrorStubLibrary
                    ? fmt::format(
                          "{} is a stub libcuda (cuInit: {}): install the NVIDIA driver "
                          "or point $IRON_LIBCUDA at its libcuda.so.1",
                          search.path, d.describe(init))
                    : fmt::format("cuInit failed: {} (driver {})", d.describe(init), search.path);
    return d;
  }
  if (const CUresult got = d.api_.driver_get_version(&d.version_); got != kCudaSuccess) {
    d.reason_ =
        fmt::format("cuDriverGetVersion failed: {} (driver {})", d.describe(got), search.path);
    return d;
  }
  if (const CUresult got = d.api_.device_get_count(&d.device_count_); got != kCudaSuccess) {
    d.reason_ =
        fmt::format("cuDeviceGetCount failed: {} (driver {})", d.describe(got), search.path);
    return d;
  }
  if (d.device_count_ <= 0) {
    d.reason_ = fmt::format("no CUDA device: the driver ({}) reports none", search.path);
    return d;
  }
  d.available_ = true;
  return d;
}

const Driver& driver() {
  static const Driver loaded = Driver::load();  // initialised once, thread-safe
  return loaded;
}

}  // namespace iron::runtime::cuda
