/// The device-resident API on the CUDA driver: streams, device tensors, guarded asynchronous
/// launches (each kernel prepared once per process), events and graphs.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <utility>

#include "cuda_backend.hpp"
#include "iron/core/error.hpp"
#include "iron/core/hash.hpp"
#include "iron/runtime/device.hpp"
#include "iron/runtime/dispatch_guard.hpp"
#include "iron/runtime/launch_specialization.hpp"
#include "kernel_params.hpp"
#include "prepared_kernel.hpp"

namespace iron::runtime {
namespace {

using cuda::driver;

constexpr unsigned int kNonBlocking = 0x1;  // CU_STREAM_NON_BLOCKING
constexpr int kCaptureThreadLocal = 1;      // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL

/// Makes the device's primary context current on the calling thread; Error when CUDA is not here.
void enter(std::string_view what) {
  if (!cuda_available()) {
    throw Error(fmt::format("{}: CUDA is unavailable: {}", what, cuda_unavailable_reason()));
  }
  driver().check(driver().api().ctx_set_current(cuda::cuda_context()), "cuCtxSetCurrent", what);
}

/// The primary context made current for a destructor, which cannot throw.
void enter_quietly() { driver().api().ctx_set_current(cuda::cuda_context()); }

/// Whether `result` is one of the driver's sticky errors: a kernel faulted, and every later call
/// in the context fails (cuda.h: the context "cannot be used anymore" for these).
bool ends_the_context(cuda::CUresult result) {
  switch (result) {
    case 214:  // CUDA_ERROR_ECC_UNCORRECTABLE
    case 700:  // CUDA_ERROR_ILLEGAL_ADDRESS
    case 702:  // CUDA_ERROR_LAUNCH_TIMEOUT
    case 710:  // CUDA_ERROR_ASSERT
    case 714:  // CUDA_ERROR_HARDWARE_STACK_ERROR
    case 715:  // CUDA_ERROR_ILLEGAL_INSTRUCTION
    case 716:  // CUDA_ERROR_MISALIGNED_ADDRESS
    case 717:  // CUDA_ERROR_INVALID_ADDRESS_SPACE
    case 718:  // CUDA_ERROR_INVALID_PC
    case 719:  // CUDA_ERROR_LAUNCH_FAILED
      return true;
    default:
      return false;
  }
}

/// A failure found while waiting. A sticky one means a kernel faulted and the context is unusable
/// from now on (recorded, so that every later launch is refused); any other (an argument the
/// driver refused, say) is a plain Error and the context stays usable.
void check_wait(cuda::CUresult result, std::string_view call, std::string_view what) {
  if (result == cuda::kCudaSuccess) return;
  const std::string failure =
      fmt::format("{} failed for {}: {}", call, what, driver().describe(result));
  if (!ends_the_context(result)) throw Error(failure);
  cuda::record_fault(failure);
  throw Error(failure + "; the CUDA context is unusable: restart the process");
}

/// Every kernel launched through the API, prepared once per process for each specialization
/// its launches bind, found by `hash` (the kernel's ir::structural_hash, which a caller that
/// keeps the kernel takes once).
const cuda::PreparedKernel& prepared(const ir::Kernel& kernel, std::uint64_t hash,
                                     const std::vector<bool>& specialization) {
  static std::mutex mutex;
  static std::map<std::pair<std::uint64_t, std::uint64_t>, cuda::PreparedKernel> kernels;
  const std::pair key{hash, specialization_key(specialization)};
  const std::lock_guard lock(mutex);
  if (const auto found = kernels.find(key); found != kernels.end()) return found->second;
  return kernels
      .emplace(key, cuda::prepare_kernel(kernel, cuda::cuda_device().sm(), specialization))
      .first->second;
}

/// DispatchError unless the borrowed tensor `t` (argument `param` of `kernel`) lies inside one live
/// allocation: memory freed behind the API's back, host memory, or a count larger than the
/// allocation would otherwise be read or written by the kernel.
void check_borrowed(const ir::Kernel& kernel, const std::string& param, const DeviceTensor& t) {
  if (t.owned() || t.bytes() == 0) return;
  int memory_type = 0;
  cuda::CUdeviceptr start = 0;
  std::size_t size = 0;
  std::array<int, 3> attributes = {static_cast<int>(cuda::PointerAttribute::MemoryType),
                                   static_cast<int>(cuda::PointerAttribute::RangeStartAddr),
                                   static_cast<int>(cuda::PointerAttribute::RangeSize)};
  std::array<void*, 3> data = {&memory_type, &start, &size};
  const cuda::CUresult asked =
      driver().api().pointer_get_attributes(3, attributes.data(), data.data(), t.address());
  if (asked != cuda::kCudaSuccess || memory_type == 0 || size == 0) {
    throw DispatchError(fmt::format(
        "{}: argument '{}' at {:#x} is not in any live allocation of this CUDA context (freed, "
        "or not device memory){}",
        kernel.name, param, t.address(),
        asked == cuda::kCudaSuccess ? "" : ": " + driver().describe(asked)));
  }
  if (t.address() + t.bytes() > start + size) {
    throw DispatchError(fmt::format(
        "{}: argument '{}' at {:#x} says {} bytes, past the end of its allocation ({} bytes from "
        "{:#x})",
        kernel.name, param, t.address(), t.bytes(), size, start));
  }
}

}  // namespace

bool cuda_available() { return cuda::cuda_backend_status().available; }
std::string cuda_unavailable_reason() { return cuda::cuda_backend_status().reason; }

std::uint32_t cuda_multiprocessors() {
  enter("cuda_multiprocessors");
  return static_cast<std::uint32_t>(cuda::cuda_device().multiprocessors);
}

Stream Stream::create() {
  enter("Stream::create");
  cuda::CUstream s = nullptr;
  driver().check(driver().api().stream_create(&s, kNonBlocking), "cuStreamCreate", "a stream");
  return {s, true};
}

Stream Stream::borrow(void* cu_stream) { return {cu_stream, false}; }

Stream::Stream(Stream&& other) noexcept : handle_(other.handle_), owned_(other.owned_) {
  other.owned_ = false;
}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    this->~Stream();
    handle_ = other.handle_;
    owned_ = other.owned_;
    other.owned_ = false;
  }
  return *this;
}

Stream::~Stream() {
  if (!owned_) return;
  enter_quietly();
  driver().api().stream_destroy(static_cast<cuda::CUstream>(handle_));
}

void Stream::synchronize() const {
  enter("Stream::synchronize");
  check_wait(driver().api().stream_synchronize(static_cast<cuda::CUstream>(handle_)),
             "cuStreamSynchronize", "a stream's work");
}

DeviceTensor DeviceTensor::allocate(DType dtype, std::size_t count) {
  enter("DeviceTensor::allocate");
  cuda::CUdeviceptr address = 0;
  const std::size_t bytes = std::max<std::size_t>(count * dtype_size(dtype), 1);
  driver().check(driver().api().mem_alloc(&address, bytes), "cuMemAlloc",
                 fmt::format("{} elements of {}", count, dtype_name(dtype)));
  return {address, dtype, count, true};
}

DeviceTensor DeviceTensor::borrow(std::uint64_t address, DType dtype, std::size_t count) {
  if (address == 0 && count != 0) throw Error("DeviceTensor::borrow: a null address");
  return {address, dtype, count, false};
}

DeviceTensor::DeviceTensor(DeviceTensor&& other) noexcept
    : address_(other.address_), dtype_(other.dtype_), count_(other.count_), owned_(other.owned_) {
  other.owned_ = false;
}

DeviceTensor& DeviceTensor::operator=(DeviceTensor&& other) noexcept {
  if (this != &other) {
    this->~DeviceTensor();
    address_ = other.address_;
    dtype_ = other.dtype_;
    count_ = other.count_;
    owned_ = other.owned_;
    other.owned_ = false;
  }
  return *this;
}

DeviceTensor::~DeviceTensor() {
  if (!owned_) return;
  enter_quietly();
  driver().api().mem_free(address_);
}

// NOLINTNEXTLINE(readability-make-member-function-const): it writes the tensor's memory
void DeviceTensor::upload(std::span<const std::byte> from) {
  if (from.size() != bytes()) {
    throw Error(fmt::format("DeviceTensor::upload: {} bytes given for a tensor of {} bytes",
                            from.size(), bytes()));
  }
  enter("DeviceTensor::upload");
  if (!from.empty()) {
    check_wait(driver().api().memcpy_htod(address_, from.data(), from.size()), "cuMemcpyHtoD",
               "an upload");
  }
}

void DeviceTensor::download(std::span<std::byte> to) const {
  if (to.size() != bytes()) {
    throw Error(fmt::format("DeviceTensor::download: {} bytes asked of a tensor of {} bytes",
                            to.size(), bytes()));
  }
  enter("DeviceTensor::download");
  if (!to.empty()) {
    check_wait(driver().api().memcpy_dtoh(to.data(), address_, to.size()), "cuMemcpyDtoH",
               "a download");
  }
}

namespace {

/// launch_async once the kernel's compiled function is known, with the guard's facts of the
/// kernel; `prepare` finds the function (after the guard, so that a refused launch compiles
/// nothing).
void launch_with(const ir::Kernel& kernel, const KernelFacts& facts,
                 const std::vector<DeviceArg>& args, const Grid& grid, const Stream& stream,
                 const std::function<const cuda::PreparedKernel&()>& prepare) {
  std::vector<GuardArg> guarded;
  std::vector<Arg> carried;
  std::vector<cuda::CUdeviceptr> addresses;
  for (const DeviceArg& a : args) {
    if (const Scalar* s = std::get_if<Scalar>(&a)) {
      guarded.emplace_back(*s);
      carried.emplace_back(*s);
      addresses.push_back(0);
      continue;
    }
    const DeviceTensor* t = std::get<const DeviceTensor*>(a);
    guarded.emplace_back(t == nullptr ? TensorExtent{DType::F32, 0, true}
                                      : TensorExtent{t->dtype(), t->bytes(), false});
    carried.emplace_back(static_cast<HostTensor*>(nullptr));
    addresses.push_back(t == nullptr ? 0 : t->address());
  }
  enter(kernel.name);
  check_dispatch(kernel, guarded, grid, cuda::cuda_device().limits, facts);
  for (std::size_t i = 0; i < args.size() && i < kernel.params.size(); ++i) {
    const auto* const* t = std::get_if<const DeviceTensor*>(&args[i]);
    if (t != nullptr && *t != nullptr) check_borrowed(kernel, kernel.params[i].name, **t);
  }
  cuda::refuse_after_fault(kernel);
  const cuda::PreparedKernel& fn = prepare();
  cuda::check_threads(kernel, fn, grid.group_size.volume());
  cuda::KernelParams params(carried, addresses,
                            cuda::encode_tensor_maps(kernel, fn.tensor_maps, carried, addresses));
  driver().check(driver().api().launch_kernel(
                     fn.function, grid.groups.x, grid.groups.y, grid.groups.z, grid.group_size.x,
                     grid.group_size.y, grid.group_size.z, fn.dynamic_shared,
                     static_cast<cuda::CUstream>(stream.handle()), params.data(), nullptr),
                 "cuLaunchKernel", fn.symbol);
}

}  // namespace

void launch_async(const ir::Kernel& kernel, const std::vector<DeviceArg>& args, const Grid& grid,
                  const Stream& stream) {
  const KernelFacts facts = kernel_facts(kernel);
  launch_with(kernel, facts, args, grid, stream, [&]() -> const cuda::PreparedKernel& {
    return prepared(kernel, ir::structural_hash(kernel),
                    launch_specialization(facts.specializations, args));
  });
}

void launch_async(const DeviceKernel& kernel, const std::vector<DeviceArg>& args, const Grid& grid,
                  const Stream& stream) {
  launch_with(kernel.ir(), kernel.facts_, args, grid, stream, [&]() -> const cuda::PreparedKernel& {
    if (kernel.facts_.specializations.size() > 0) {  // the module depends on the arguments
      return prepared(kernel.ir(), kernel.hash_,
                      launch_specialization(kernel.facts_.specializations, args));
    }
    const cuda::PreparedKernel* known = kernel.prepared_.load(std::memory_order_acquire);
    if (known == nullptr) {
      known = &prepared(kernel.ir(), kernel.hash_, {});  // entries of the map never move
      kernel.prepared_.store(known, std::memory_order_release);
    }
    return *known;
  });
}

Event::Event() {
  enter("Event");
  cuda::CUevent e = nullptr;
  driver().check(driver().api().event_create(&e, 0), "cuEventCreate", "an event");
  handle_ = e;
}

Event::~Event() {
  enter_quietly();
  driver().api().event_destroy(static_cast<cuda::CUevent>(handle_));
}

void Event::record(const Stream& stream) {
  driver().check(driver().api().event_record(static_cast<cuda::CUevent>(handle_),
                                             static_cast<cuda::CUstream>(stream.handle())),
                 "cuEventRecord", "an event");
}

void Event::synchronize() const {
  check_wait(driver().api().event_synchronize(static_cast<cuda::CUevent>(handle_)),
             "cuEventSynchronize", "an event");
}

float Event::elapsed_ms(const Event& start) const {
  float ms = 0.0f;
  driver().check(driver().api().event_elapsed_time(&ms, static_cast<cuda::CUevent>(start.handle_),
                                                   static_cast<cuda::CUevent>(handle_)),
                 "cuEventElapsedTime", "two events");
  return ms;
}

Graph Graph::capture(const Stream& stream, const std::function<void()>& enqueue) {
  enter("Graph::capture");
  auto* const s = static_cast<cuda::CUstream>(stream.handle());
  if (s == nullptr) throw Error("Graph::capture: the legacy default stream cannot be captured");
  const auto& api = driver().api();
  driver().check(api.stream_begin_capture(s, kCaptureThreadLocal), "cuStreamBeginCapture",
                 "a graph");
  cuda::CUgraph graph = nullptr;
  try {
    enqueue();
  } catch (...) {
    api.stream_end_capture(s, &graph);  // leave the stream usable; the partial graph is dropped
    if (graph != nullptr) api.graph_destroy(graph);
    throw;
  }
  driver().check(api.stream_end_capture(s, &graph), "cuStreamEndCapture", "a graph");
  cuda::CUgraphExec exec = nullptr;
  if (const cuda::CUresult r = api.graph_instantiate(&exec, graph, 0); r != cuda::kCudaSuccess) {
    api.graph_destroy(graph);
    driver().check(r, "cuGraphInstantiate", "a graph");
  }
  return {graph, exec};
}

Graph::Graph(Graph&& other) noexcept : graph_(other.graph_), exec_(other.exec_) {
  other.graph_ = nullptr;
  other.exec_ = nullptr;
}

Graph::~Graph() {
  if (exec_ == nullptr && graph_ == nullptr) return;
  enter_quietly();
  if (exec_ != nullptr) driver().api().graph_exec_destroy(static_cast<cuda::CUgraphExec>(exec_));
  if (graph_ != nullptr) driver().api().graph_destroy(static_cast<cuda::CUgraph>(graph_));
}

void Graph::replay(const Stream& stream) const {
  enter("Graph::replay");
  driver().check(driver().api().graph_launch(static_cast<cuda::CUgraphExec>(exec_),
                                             static_cast<cuda::CUstream>(stream.handle())),
                 "cuGraphLaunch", "a graph");
}

}  // namespace iron::runtime
