/// CudaBackend::run: guard, compile (cached), copy in, launch, synchronise, copy out, free.
#include "cuda_backend.hpp"

#include <fmt/format.h>

#include <mutex>
#include <string>

#include "cuda_module_cache.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/core/error.hpp"
#include "iron/core/hash.hpp"
#include "iron/runtime/dispatch_guard.hpp"
#include "iron/runtime/launch_specialization.hpp"
#include "iron/runtime/nvrtc.hpp"
#include "kernel_params.hpp"
#include "launch_resources.hpp"
#include "prepared_kernel.hpp"

namespace iron::runtime::cuda {
namespace {

constexpr int kMinimumSm = 80;  // the emitters' floor (iron/codegen/emit.hpp)

/// The device the backend runs on, its retained primary context, and whether all is usable.
struct Target {
  BackendStatus status{"cuda", false, ""};
  const CudaDeviceInfo* device = nullptr;
  CUcontext context = nullptr;
};

Target find_target() {
  Target target;
  const CudaReport& report = cuda_report();
  if (report.devices.empty()) {
    target.status.reason = report.reason;
    return target;
  }
  const CudaDeviceInfo& device = report.devices.front();
  if (device.sm() < kMinimumSm) {
    target.status.reason = fmt::format(
        "CUDA device {} ({}) has compute capability {}.{}; Iron's CUDA code needs {}.{} or newer",
        device.ordinal, device.name, device.major, device.minor, kMinimumSm / 10, kMinimumSm % 10);
    return target;
  }
  const NvrtcStatus& nvrtc = nvrtc_status();
  if (!nvrtc.available) {
    target.status.reason = "NVRTC, which compiles the kernels, is unavailable: " + nvrtc.reason;
    return target;
  }
  const Driver& d = driver();
  cuda::CUdevice handle = 0;
  try {
    const std::string what = fmt::format("CUDA device {} ({})", device.ordinal, device.name);
    d.check(d.api().device_get(&handle, device.ordinal), "cuDeviceGet", what);
    d.check(d.api().device_primary_ctx_retain(&target.context, handle), "cuDevicePrimaryCtxRetain",
            what);
  } catch (const Error& e) {
    target.status.reason = e.what();
    return target;
  }
  target.device = &device;
  target.status.available = true;  // the context stays retained for the whole process
  return target;
}

const Target& target() {
  static const Target found = find_target();  // initialised once, thread-safe
  return found;
}

/// Launches from every thread take turns on the device, so that a kernel fault, reported to
/// whichever thread synchronises next, is always the fault of the kernel just launched. Kernels on
/// stream 0 run one after another anyway; compiles, the slow part, stay parallel.
std::mutex& device_turn() {
  static std::mutex mutex;
  return mutex;
}

/// The first kernel fault of the process: it leaves the context unusable, so later launches are
/// refused with it rather than failing with an error that names them.
class FaultRecord {
 public:
  void set(const std::string& fault) {
    const std::lock_guard lock(mutex_);
    if (fault_.empty()) fault_ = fault;
  }
  std::string get() const {
    const std::lock_guard lock(mutex_);
    return fault_;
  }

 private:
  mutable std::mutex mutex_;
  std::string fault_;
};

FaultRecord& first_fault() {
  static FaultRecord record;
  return record;
}

std::string grid_text(const Grid& grid) {
  return fmt::format("{}x{}x{} groups of {}x{}x{} threads", grid.groups.x, grid.groups.y,
                     grid.groups.z, grid.group_size.x, grid.group_size.y, grid.group_size.z);
}

}  // namespace

void refuse_after_fault(const ir::Kernel& kernel) {
  if (const std::string fault = first_fault().get(); !fault.empty()) {
    throw Error(fmt::format(
        "{}: not run: the CUDA context is unusable since an earlier failure ({}); restart the "
        "process",
        kernel.name, fault));
  }
}

void record_fault(const std::string& fault) { first_fault().set(fault); }

const BackendStatus& cuda_backend_status() { return target().status; }

const CudaDeviceInfo& cuda_device() {
  IRON_INTERNAL_ASSERT(target().status.available, "cuda_device() while CUDA is unavailable");
  return *target().device;
}

CUcontext cuda_context() {
  IRON_INTERNAL_ASSERT(target().status.available, "cuda_context() while CUDA is unavailable");
  return target().context;
}

CudaBackend::CudaBackend() : device_(cuda_device()), context_(cuda_context()) {}

const PreparedKernel& CudaBackend::prepare(const ir::Kernel& kernel, const std::vector<Arg>& args) {
  const std::uint64_t hash = ir::structural_hash(kernel);
  auto plan = plans_.find(hash);
  if (plan == plans_.end()) plan = plans_.emplace(hash, ir::SpecializationPlan(kernel)).first;
  const std::vector<bool> specialization = launch_specialization(plan->second, args);
  const std::pair key{hash, specialization_key(specialization)};
  if (const auto found = prepared_.find(key); found != prepared_.end()) return found->second;
  return prepared_.emplace(key, prepare_kernel(kernel, device_.sm(), specialization)).first->second;
}

void CudaBackend::run(const Launch& launch) {
  if (launch.kernel == nullptr) throw Error("cuda backend: the launch has no kernel");
  const ir::Kernel& kernel = *launch.kernel;
  check_dispatch(kernel, launch.args, launch.grid, device_.limits);
  refuse_after_fault(kernel);
  const Driver& d = driver();
  const DriverApi& api = d.api();
  // The primary context is made current on whichever thread runs this launch.
  d.check(api.ctx_set_current(context_), "cuCtxSetCurrent", kernel.name);
  const PreparedKernel& kernel_fn = prepare(kernel, launch.args);
  const Grid& grid = launch.grid;
  check_threads(kernel, kernel_fn, grid.group_size.volume());
  const std::string what = fmt::format("{} ({})", kernel_fn.symbol, grid_text(grid));

  const std::lock_guard turn(device_turn());
  refuse_after_fault(kernel);  // again: another thread's kernel may have failed meanwhile
  DeviceBuffers buffers(d, what);
  std::vector<CUdeviceptr> addresses(launch.args.size(), 0);
  for (std::size_t i = 0; i < launch.args.size(); ++i) {
    if (HostTensor* const* tensor = std::get_if<HostTensor*>(&launch.args[i])) {
      addresses[i] = buffers.upload((*tensor)->bytes);
    }
  }
  KernelParams params(launch.args, addresses,
                      encode_tensor_maps(kernel, kernel_fn.tensor_maps, launch.args, addresses));
  LaunchTimer timer(d, what);
  timer.start();
  d.check(api.launch_kernel(kernel_fn.function, grid.groups.x, grid.groups.y, grid.groups.z,
                            grid.group_size.x, grid.group_size.y, grid.group_size.z,
                            kernel_fn.dynamic_shared, /*hStream=*/nullptr, params.data(),
                            /*extra=*/nullptr),
          "cuLaunchKernel", what);
  timer.stop();
  if (const CUresult synced = api.ctx_synchronize(); synced != kCudaSuccess) {
    const std::string fault =
        fmt::format("kernel {} failed on the GPU: {} (cuCtxSynchronize)", what, d.describe(synced));
    record_fault(fault);
    throw Error(fault);
  }
  last_kernel_ms_ = timer.elapsed_ms();
  for (std::size_t i = 0; i < launch.args.size(); ++i) {
    if (!ir::is_output(kernel.params[i].kind)) continue;
    HostTensor* tensor = std::get<HostTensor*>(launch.args[i]);
    buffers.download(addresses[i], tensor->bytes);
  }
  timer.destroy();
  buffers.free();
}

}  // namespace iron::runtime::cuda
