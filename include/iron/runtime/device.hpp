/// The device-resident runtime API (CUDA): tensors that live on the GPU, streams, launches that
/// return before the kernel runs, events, and graphs captured from a stream and replayed
/// (docs/applications.md). Every launch still passes the dispatch guard: each tensor carries its
/// dtype and element count. Every call needs cuda_available(); each throws iron::Error naming
/// the kernel or the call on a failure.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "iron/core/hash.hpp"
#include "iron/core/ir.hpp"
#include "iron/runtime/dispatch_guard.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::runtime {

namespace cuda {
struct PreparedKernel;
}

/// Whether the device API can run here (the cuda backend's status), and if not why.
bool cuda_available();
std::string cuda_unavailable_reason();
/// The device's multiprocessor count, which kernels' geometry functions plan their grids for.
std::uint32_t cuda_multiprocessors();

/// A CUDA stream: one this object created (destroyed with it), or one the application owns.
class Stream {
 public:
  /// A new stream that does not synchronize with the legacy default stream.
  static Stream create();
  /// The application's CUstream (nullptr: the legacy default stream); never destroyed here.
  static Stream borrow(void* cu_stream);

  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  void* handle() const { return handle_; }
  /// Waits for everything enqueued; throws naming the failure of a kernel that faulted, after
  /// which the CUDA context is unusable (the error says so).
  void synchronize() const;

 private:
  Stream(void* handle, bool owned) : handle_(handle), owned_(owned) {}
  void* handle_ = nullptr;
  bool owned_ = false;
};

/// `count` elements of `dtype` in device memory: allocated here (freed with the object), or at an
/// address the application owns. A borrowed tensor is checked at every launch: its bytes must lie
/// inside one live allocation of the context, so memory freed behind its back (or never device
/// memory, or smaller than `count` says) is refused instead of read or written.
class DeviceTensor {
 public:
  static DeviceTensor allocate(DType dtype, std::size_t count);
  static DeviceTensor borrow(std::uint64_t address, DType dtype, std::size_t count);

  DeviceTensor(DeviceTensor&& other) noexcept;
  DeviceTensor& operator=(DeviceTensor&& other) noexcept;
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;
  ~DeviceTensor();

  std::uint64_t address() const { return address_; }
  DType dtype() const { return dtype_; }
  std::size_t count() const { return count_; }
  std::size_t bytes() const { return count_ * dtype_size(dtype_); }
  /// Whether this object allocated the memory (and frees it); false for a borrowed tensor.
  bool owned() const { return owned_; }

  /// Copies the tensor's bytes from or to the host (synchronous); Error unless the sizes match.
  void upload(std::span<const std::byte> from);
  void download(std::span<std::byte> to) const;

 private:
  DeviceTensor(std::uint64_t address, DType dtype, std::size_t count, bool owned)
      : address_(address), dtype_(dtype), count_(count), owned_(owned) {}
  std::uint64_t address_ = 0;
  DType dtype_ = DType::F32;
  std::size_t count_ = 0;
  bool owned_ = false;
};

/// One argument per kernel parameter, in parameter order: a device tensor or a constexpr.
using DeviceArg = std::variant<const DeviceTensor*, Scalar>;

/// Enqueues `kernel` on `stream` and returns: the dispatch guard with the device's limits (dtype
/// and size of each tensor, the grid, shared memory), each borrowed tensor's memory checked to be
/// live device memory at least its size, the kernel compiled on first use (through the module
/// cache), cuLaunchKernel. DispatchError when refused, nothing enqueued then.
void launch_async(const ir::Kernel& kernel, const std::vector<DeviceArg>& args, const Grid& grid,
                  const Stream& stream);

/// A kernel kept for repeated launches: launch_async on it finds its compiled function once (once
/// per specialization its launches bind, by the hash taken at construction) and derives the
/// guard's facts once (kernel_facts, at construction), where the overload on a plain
/// ir::Kernel hashes the whole IR at every launch to find it and copies and walks it for the
/// guard (for a large kernel with target paths, such as the warpgroup GEMMs, over a
/// millisecond a launch). Needs no CUDA to construct; the module is compiled or loaded at the
/// first launch.
class DeviceKernel {
 public:
  explicit DeviceKernel(ir::Kernel kernel)
      : kernel_(std::move(kernel)),
        facts_(kernel_facts(kernel_)),
        hash_(ir::structural_hash(kernel_)) {}
  DeviceKernel(const DeviceKernel&) = delete;
  DeviceKernel& operator=(const DeviceKernel&) = delete;
  const ir::Kernel& ir() const { return kernel_; }

 private:
  friend void launch_async(const DeviceKernel& kernel, const std::vector<DeviceArg>& args,
                           const Grid& grid, const Stream& stream);
  ir::Kernel kernel_;
  KernelFacts facts_;   ///< what the guard derives from the IR, derived once
  std::uint64_t hash_;  ///< ir::structural_hash, the key of its modules: a launch that binds
                        ///< specializations finds its module without walking the IR again
  mutable std::atomic<const cuda::PreparedKernel*> prepared_{nullptr};
};

/// launch_async for a kept kernel: the same checks, without hashing or walking its IR again.
void launch_async(const DeviceKernel& kernel, const std::vector<DeviceArg>& args, const Grid& grid,
                  const Stream& stream);

/// A CUDA event: recorded on a stream, waited for, timed against another.
class Event {
 public:
  Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  void record(const Stream& stream);
  void synchronize() const;
  /// Milliseconds from `start` to this event, both recorded and complete.
  float elapsed_ms(const Event& start) const;

 private:
  void* handle_ = nullptr;
};

/// A sequence of launches captured from a stream once, replayed as one CUDA graph.
class Graph {
 public:
  /// Runs `enqueue` with `stream` in capture mode: its launches are recorded, not run.
  static Graph capture(const Stream& stream, const std::function<void()>& enqueue);
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) = delete;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();
  /// Enqueues the whole sequence on `stream`.
  void replay(const Stream& stream) const;

 private:
  Graph(void* graph, void* exec) : graph_(graph), exec_(exec) {}
  void* graph_ = nullptr;
  void* exec_ = nullptr;
};

}  // namespace iron::runtime
