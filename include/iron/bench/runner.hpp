/// Runs registered benches on the device: resident buffers rotated past the L2, a warm-up,
/// device-event timing, the check that every output was written, and the optional CUDA
/// reference and library call timed and compared; and checks setups without a GPU
/// (`iron bench --dry-run`).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "iron/bench/device.hpp"
#include "iron/bench/registry.hpp"
#include "iron/dsl/tuning_table.hpp"

namespace iron::bench {

/// One timed kernel: per-run GPU time and the rates it implies.
struct BenchTiming {
  Spread us;            ///< microseconds per run
  double gbps = 0.0;    ///< bytes moved / median time
  double tflops = 0.0;  ///< FLOPs / median time
};

/// A reference (hand-written CUDA or a library call) timed and compared with Iron's outputs.
struct ReferenceResult {
  std::string name;
  BenchTiming timing;
  double max_abs_error = 0.0;  ///< against Iron's outputs
  bool matches = false;
  std::string message;      ///< the first mismatches when not
  std::string unavailable;  ///< a library call that could not run (no library): why; no timing
};

struct BenchResult {
  std::string name;  ///< "<kernel>.<case>"
  std::string kernel;
  DType dtype = DType::F32;
  std::uint64_t bytes = 0;
  std::uint64_t flops = 0;
  std::string peer_op;
  std::map<std::string, double> peer_dims;
  runtime::Grid grid;
  std::string tuning;   ///< the tuning file's configuration it ran under ("" for the defaults)
  int buffer_sets = 1;  ///< rotated copies of the buffers (working set ≥ 4 × L2)
  std::uint64_t working_set = 0;  ///< bytes of one set of buffers
  BenchTiming iron;
  std::optional<ReferenceResult> reference;
  std::optional<ReferenceResult> library;  ///< the library call (cuBLAS), when the bench names one
  bool all_written = true;  ///< every output element written (unless the bench is partial)
  std::string error;        ///< non-empty: the bench failed and has no timing
};

/// The ceilings measured at the start of a run.
struct Ceilings {
  double copy_gbps = 0.0;
  std::uint64_t copy_bytes = 0;
  GemmCeiling gemm;
  int gemm_n = 0;
  std::optional<double> mma_sync_tflops;  ///< BenchDevice::mma_sync_tflops
};

Ceilings measure_ceilings(BenchDevice& device, int repeat);

/// Runs one bench in one dtype; never throws (failures land in `error`). With `tuning`, a kernel
/// with tuning knobs runs under the table's entry for its shape on this device, if any.
BenchResult run_bench(const BenchCase& bench, DType dtype, BenchDevice& device, int repeat,
                      const dsl::TuningTable* tuning = nullptr);

/// Builds the setup and checks it without a device: a grid, bytes or FLOPs, a peer case, the
/// dispatch guard on placeholder arguments, and the library reference's sizes against the
/// buffers. Returns "" or what is wrong.
std::string check_bench_setup(const BenchCase& bench, DType dtype);

}  // namespace iron::bench
