/// Device-side measurement for `iron bench` (CUDA): buffers that stay on the device between
/// runs, kernels launched on them without copies, device-event timing, and the two ceilings
/// (device-to-device copy bandwidth, cuBLAS bf16 matrix-product rate) measured in the same run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "iron/core/ir.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::bench {

/// A device address owned by a BenchDevice.
using DeviceAddress = std::uint64_t;

/// A tensor argument that lives on the device: its address, dtype and element count.
struct ResidentTensor {
  DeviceAddress address = 0;
  DType dtype = DType::F32;
  std::size_t count = 0;
};
using ResidentArg = std::variant<ResidentTensor, runtime::Scalar>;

/// A cuBLAS matrix product on resident buffers, row-major: c[m, n] = alpha · a[m, k] @ b[k, n],
/// every matrix in `dtype` (f32, f16 or bf16), accumulated in f32.
struct DeviceGemm {
  DType dtype = DType::F32;
  std::uint32_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  DeviceAddress a = 0, b = 0, c = 0;
  bool b_transposed = false;  ///< b is [n, k] row-major: c = alpha · a @ bᵀ
};

/// A cuBLAS result: the rate, or why there is none (no library, a failed call).
struct GemmCeiling {
  std::optional<double> tflops;
  std::string library;  ///< the file opened
  std::string reason;   ///< when no rate: why
};

class BenchDevice {
 public:
  /// Opens the CUDA device of the cuda backend. Throws iron::Error saying why when CUDA is
  /// unavailable.
  BenchDevice();
  ~BenchDevice();
  BenchDevice(const BenchDevice&) = delete;
  BenchDevice& operator=(const BenchDevice&) = delete;

  std::string name() const;
  std::uint64_t l2_bytes() const;
  int sm() const;

  DeviceAddress alloc(std::size_t bytes);
  void upload(DeviceAddress to, std::span<const std::byte> bytes);
  void download(DeviceAddress from, std::span<std::byte> to);
  void copy(DeviceAddress to, DeviceAddress from, std::size_t bytes);
  void fill(DeviceAddress to, std::size_t bytes, std::uint8_t value);
  /// Frees every allocation (kernels stay loaded).
  void free_all();

  /// An Iron kernel, guarded and compiled once, launched on resident arguments: returns a handle
  /// for launch(). Throws DispatchError when the guard refuses the arguments or grid.
  int prepare(const ir::Kernel& kernel, const std::vector<ResidentArg>& args,
              const runtime::Grid& grid);
  /// A hand-written CUDA kernel (compiled by NVRTC for this device) on resident arguments.
  int prepare_source(const std::string& source, const std::string& symbol,
                     const std::vector<ResidentArg>& args, const runtime::Grid& grid);
  /// A cuBLAS product (cuBLAS loaded at run time, one handle per device, on stream 0), for
  /// launch(). Throws iron::Error saying why when cuBLAS cannot be loaded.
  int prepare_gemm(const DeviceGemm& gemm);
  /// Enqueues one launch (or library call) on stream 0; does not wait.
  void launch(int handle);
  /// Waits for the device; throws iron::Error naming `what` when a kernel failed.
  void synchronize(const std::string& what);

  /// GPU milliseconds of each of `repeat` runs of `enqueue` (which puts work on stream 0), each
  /// between its own pair of events, after `warmup` untimed runs.
  std::vector<double> time(const std::function<void(int run)>& enqueue, int warmup, int repeat,
                           const std::string& what);
  /// As time() for several launches taken in turn: run i enqueues enqueues[0](i), then
  /// enqueues[1](i), …, each between its own pair of events, so that every one of them is timed
  /// under the same clocks (a card that lowers its clocks under a power cap would otherwise
  /// favour whichever ran first). Result j holds enqueues[j]'s runs.
  std::vector<std::vector<double>> time_in_turn(
      const std::vector<std::function<void(int run)>>& enqueues, int warmup, int repeat,
      const std::string& what);

  /// Device-to-device copy of `bytes` (cuMemcpyDtoD): GB/s counting bytes read plus written,
  /// median of `repeat` runs.
  double copy_gbps(std::size_t bytes, int repeat);
  /// cuBLAS bf16 n×n×n product (f32 accumulation) on random data, loaded at run time: TFLOP/s,
  /// median of `repeat` runs; or why not.
  GemmCeiling gemm_tflops(int n, int repeat);
  /// The rate of mma.sync.m16n8k16 (bf16 in, f32 accumulate) alone, in TFLOP/s, median of
  /// `repeat` runs (src/bench/mma_ceiling.cpp): the ceiling of the mma.sync fragment strategy.
  /// nullopt below sm_80, which lacks the instruction.
  std::optional<double> mma_sync_tflops(int repeat);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Median, min and max of a non-empty list.
struct Spread {
  double median = 0.0, min = 0.0, max = 0.0;
};
Spread spread_of(std::vector<double> values);

}  // namespace iron::bench
