/// The bench runner: host data made once, uploaded once and copied into rotated sets on the
/// device; Iron's kernel, the CUDA reference and the library call launched on resident buffers
/// and timed with events.
#include "iron/bench/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cublas.hpp"
#include "iron/bench/bench_inputs.hpp"
#include "iron/bench/peer_ops.hpp"
#include "iron/codegen/targets.hpp"
#include "iron/core/error.hpp"
#include "iron/runtime/device_info.hpp"
#include "iron/runtime/dispatch_guard.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/runner.hpp"

namespace iron::bench {
namespace {

constexpr int kWarmup = 3;
constexpr std::uint64_t kMaxRotatedBytes = std::uint64_t{8} << 30;  // all sets together
constexpr int kMaxSets = 64;
constexpr std::uint64_t kSeed = 1;  // benches use fixed data: runs compare

/// One set of device buffers, by parameter name.
using BufferSet = std::map<std::string, ResidentTensor>;

/// The launch arguments of `kernel` over one buffer set, in parameter order.
std::vector<ResidentArg> kernel_args(const BenchSetup& setup, const BufferSet& set) {
  std::vector<ResidentArg> args;
  for (const ir::Param& p : setup.kernel().params) {
    if (p.kind == ir::ParamKind::Constexpr) {
      const auto found = setup.constants().find(p.name);
      if (found == setup.constants().end()) {
        throw Error(
            fmt::format("bench of {}: constexpr '{}' is not given", setup.kernel().name, p.name));
      }
      args.emplace_back(found->second);
    } else {
      const auto found = set.find(p.name);
      if (found == set.end()) {
        throw Error(fmt::format("bench of {}: {} '{}' is not given", setup.kernel().name,
                                p.kind == ir::ParamKind::Input ? "input" : "output", p.name));
      }
      args.emplace_back(found->second);
    }
  }
  return args;
}

/// The reference's arguments: named buffers from `set` (its outputs from `own_outputs`), named
/// constexprs, and its own scalars.
std::vector<ResidentArg> reference_args(const BenchSetup& setup, const BufferSet& set,
                                        const BufferSet& own_outputs) {
  std::vector<ResidentArg> args;
  for (const ReferenceArg& a : setup.cuda_reference()->args) {
    if (const auto* scalar = std::get_if<runtime::Scalar>(&a)) {
      args.emplace_back(*scalar);
      continue;
    }
    const auto& name = std::get<std::string>(a);
    if (const auto c = setup.constants().find(name); c != setup.constants().end()) {
      args.emplace_back(c->second);
    } else if (const auto o = own_outputs.find(name); o != own_outputs.end()) {
      args.emplace_back(o->second);
    } else {
      args.emplace_back(set.at(name));
    }
  }
  return args;
}

BenchTiming timing_of(const std::vector<double>& ms, const BenchSetup& setup) {
  std::vector<double> us(ms.size());
  std::transform(ms.begin(), ms.end(), us.begin(), [](double m) { return m * 1e3; });
  BenchTiming t;
  t.us = spread_of(us);
  t.gbps = static_cast<double>(setup.bytes()) / (t.us.median * 1e3);
  t.tflops = static_cast<double>(setup.flop_count()) / (t.us.median * 1e6);
  return t;
}

runtime::HostTensor download(BenchDevice& device, const ResidentTensor& t) {
  runtime::HostTensor h;
  h.dtype = t.dtype;
  h.bytes.resize(t.count * dtype_size(t.dtype));
  device.download(t.address, h.bytes);
  return h;
}

/// Elements of `t` that still hold the poison (all bytes 0xFF).
std::size_t poisoned_elements(const runtime::HostTensor& t) {
  const std::size_t width = dtype_size(t.dtype);
  std::size_t count = 0;
  for (std::size_t i = 0; i < t.bytes.size(); i += width) {
    bool all = true;
    for (std::size_t b = 0; b < width && all; ++b) all = t.bytes[i + b] == std::byte{0xFF};
    count += all ? 1 : 0;
  }
  return count;
}

class BenchRun {
 public:
  BenchRun(const BenchCase& bench, DType dtype, BenchDevice& device, int repeat,
           const dsl::TuningTable* tuning)
      : setup_(bench.make(dtype)), device_(device), repeat_(repeat) {
    // Without a table a kernel's own rule still chooses (TuningSpace::prefer), as at launches
    // through the host entry points.
    apply(tuning != nullptr ? *tuning : dsl::TuningTable{});
    result_.name = bench.name;
    result_.kernel = bench.kernel;
    result_.dtype = dtype;
    result_.bytes = setup_.bytes();
    result_.flops = setup_.flop_count();
    result_.peer_op = setup_.peer_op();
    result_.peer_dims = setup_.peer_dims();
    result_.grid = setup_.launch_grid();
    result_.tuning = dsl::format_config(setup_.tuning());
  }

  BenchResult run() {
    if (!setup_.has_grid()) throw Error("the bench sets no grid");
    allocate_sets();
    std::vector<int> handles;
    for (const BufferSet& set : sets_) {
      handles.push_back(
          device_.prepare(setup_.kernel(), kernel_args(setup_, set), setup_.launch_grid()));
    }
    poison(sets_[0]);
    device_.launch(handles[0]);
    device_.synchronize(result_.name);
    check_written();
    if (setup_.cuda_reference()) run_reference();
    if (setup_.library_call()) run_library();
    time_in_turn(handles);
    return result_;
  }

 private:
  /// Traces the kernel under `table`'s configuration for this shape on this device, or its rule's
  /// where the table has no entry, if any.
  void apply(const dsl::TuningTable& table) {
    std::map<std::string, double, std::less<>> constants;
    for (const auto& [name, value] : setup_.constants()) constants.emplace(name, value.as_double());
    const dsl::TuningConfig config =
        table.config_for(setup_.kernel(), constants, device_.name(),
                         runtime::cuda_version_text(runtime::cuda_report().driver_version));
    if (!config.empty()) setup_.tune(config);
  }

  void allocate_sets() {
    testing::Rng rng(testing::case_seed(kSeed, result_.name, result_.dtype));
    std::map<std::string, runtime::HostTensor> host;
    std::uint64_t ws = 0;
    for (const auto& [name, fill] : setup_.inputs()) {
      const ir::Param& p = setup_.kernel().params[setup_.kernel().find_param(name)];
      host[name] = make_input(fill, p.dtype, rng);
      ws += host[name].bytes.size();
    }
    for (const auto& [name, count] : setup_.outputs()) {
      ws += count * dtype_size(output_dtype(name));
    }
    result_.working_set = ws;
    const std::uint64_t want = 4 * device_.l2_bytes();
    int sets = ws >= want ? 1 : static_cast<int>((want + ws - 1) / std::max<std::uint64_t>(ws, 1));
    sets = std::clamp(sets, 1, kMaxSets);
    while (sets > 1 && sets * ws > kMaxRotatedBytes) --sets;
    result_.buffer_sets = sets;
    for (int s = 0; s < sets; ++s) {
      BufferSet set;
      for (const auto& [name, h] : host) {
        const ResidentTensor t{device_.alloc(h.bytes.size()), h.dtype, h.count()};
        if (s == 0) {
          device_.upload(t.address, h.bytes);
        } else {
          device_.copy(t.address, sets_[0].at(name).address, h.bytes.size());
        }
        set[name] = t;
      }
      for (const auto& [name, count] : setup_.outputs()) {
        const DType dt = output_dtype(name);
        set[name] = {device_.alloc(count * dtype_size(dt)), dt, count};
      }
      sets_.push_back(std::move(set));
    }
  }

  DType output_dtype(const std::string& name) const {
    return setup_.kernel().params[setup_.kernel().find_param(name)].dtype;
  }

  void poison(const BufferSet& set) {
    for (const auto& [name, count] : setup_.outputs()) {
      const ResidentTensor& t = set.at(name);
      device_.fill(t.address, count * dtype_size(t.dtype), 0xFF);
    }
  }

  void check_written() {
    if (!setup_.checks_every_output()) return;
    for (const auto& [name, count] : setup_.outputs()) {
      const std::size_t left = poisoned_elements(download(device_, sets_[0].at(name)));
      if (left > 0) {
        result_.all_written = false;
        throw Error(
            fmt::format("output '{}': {} of {} elements were not written", name, left, count));
      }
    }
  }

  void run_reference() {
    const CudaReference& ref = *setup_.cuda_reference();
    ReferenceResult r;
    r.name = ref.name;
    const std::string source = fmt::format(
        "#define IRON_REF_T {}\n#include <cuda_fp16.h>\n"
        "#include <cuda_bf16.h>\n{}",
        cuda_type(setup_.dtype()), ref.source);
    std::vector<int> handles;
    std::vector<BufferSet> own(sets_.size());
    for (std::size_t s = 0; s < sets_.size(); ++s) {
      for (const auto& [name, count] : setup_.outputs()) {
        const DType dt = output_dtype(name);
        own[s][name] = {device_.alloc(count * dtype_size(dt)), dt, count};
      }
      handles.push_back(device_.prepare_source(source, ref.symbol,
                                               reference_args(setup_, sets_[s], own[s]), ref.grid));
    }
    poison(own[0]);
    device_.launch(handles[0]);
    device_.synchronize(ref.name);
    r.matches = true;
    for (const auto& [name, count] : setup_.outputs()) {
      compare(r, name, own[0].at(name), ref.tolerance);
    }
    reference_handles_ = std::move(handles);
    result_.reference = std::move(r);
  }

  /// The library call: cuBLAS on each buffer set's inputs (operands of its own uploaded once),
  /// into outputs of its own, checked against Iron's output and timed like Iron's kernel.
  void run_library() {
    const LibraryReference& ref = *setup_.library_call();
    ReferenceResult r;
    r.name = ref.name;
    if (const Cublas& lib = cublas(); !lib.available) {
      r.unavailable = lib.reason;
      result_.library = std::move(r);
      return;
    }
    if (std::string problem = check_library_reference(setup_); !problem.empty()) {
      throw Error(problem);
    }
    const auto own_operand = [&](const MatrixOperand& operand) -> DeviceAddress {
      if (!operand.input.empty()) return 0;
      const runtime::HostTensor h = testing::pack(operand.values, setup_.dtype());
      const DeviceAddress address = device_.alloc(h.bytes.size());
      device_.upload(address, h.bytes);
      return address;
    };
    const DeviceAddress own_a = own_operand(ref.a);
    const DeviceAddress own_b = own_operand(ref.b);
    const std::size_t count = std::size_t{ref.m} * ref.n;
    std::vector<ResidentTensor> outputs;
    std::vector<int> handles;
    for (const BufferSet& set : sets_) {
      const ResidentTensor& out = outputs.emplace_back(
          ResidentTensor{device_.alloc(count * dtype_size(setup_.dtype())), setup_.dtype(), count});
      const DeviceAddress a = ref.a.input.empty() ? own_a : set.at(ref.a.input).address;
      const DeviceAddress b = ref.b.input.empty() ? own_b : set.at(ref.b.input).address;
      handles.push_back(device_.prepare_gemm(
          {setup_.dtype(), ref.m, ref.n, ref.k, ref.alpha, a, b, out.address, ref.b_transposed}));
    }
    device_.fill(outputs[0].address, count * dtype_size(setup_.dtype()), 0xFF);
    device_.launch(handles[0]);
    device_.synchronize(ref.name);
    r.matches = true;
    compare(r, ref.output, outputs[0], ref.tolerance);
    library_handles_ = std::move(handles);
    result_.library = std::move(r);
  }

  /// Compares a reference's output with Iron's output `name` (first buffer set), into `r`.
  void compare(ReferenceResult& r, const std::string& name, const ResidentTensor& theirs,
               testing::Tolerance tolerance) {
    const auto want = testing::unpack(download(device_, sets_[0].at(name)));
    const auto got = testing::unpack(download(device_, theirs));
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double d = std::fabs(double{got[i]} - want[i]);
      r.max_abs_error = std::isnan(d) ? d : std::max(r.max_abs_error, d);
    }
    if (std::string m = testing::compare_outputs(name, got, want, tolerance); !m.empty()) {
      r.matches = false;
      r.message += m;
    }
  }

  /// Times Iron's launches (`iron`, one handle per buffer set), the CUDA reference's and the
  /// library call's in turn (BenchDevice::time_in_turn), each rotating over the buffer sets; the
  /// others start half-way (or a third of the way) round, so none finds its inputs in the L2 left
  /// by the launch before it.
  void time_in_turn(const std::vector<int>& iron) {
    std::vector<const std::vector<int>*> series = {&iron};
    if (!reference_handles_.empty()) series.push_back(&reference_handles_);
    if (!library_handles_.empty()) series.push_back(&library_handles_);
    std::vector<std::function<void(int)>> enqueues;
    for (std::size_t j = 0; j < series.size(); ++j) {
      const std::vector<int>& handles = *series[j];
      const std::size_t offset = j * handles.size() / series.size();
      enqueues.emplace_back([this, &handles, offset](int run) {
        device_.launch(handles[(static_cast<std::size_t>(run) + offset) % handles.size()]);
      });
    }
    const auto ms = device_.time_in_turn(enqueues, kWarmup, repeat_, result_.name);
    result_.iron = timing_of(ms[0], setup_);
    std::size_t next = 1;
    if (!reference_handles_.empty()) result_.reference->timing = timing_of(ms[next++], setup_);
    if (!library_handles_.empty()) result_.library->timing = timing_of(ms[next], setup_);
  }

  static std::string_view cuda_type(DType dt) {
    switch (dt) {
      case DType::F16:
        return "__half";
      case DType::BF16:
        return "__nv_bfloat16";
      default:
        return "float";
    }
  }

  BenchSetup setup_;
  BenchDevice& device_;
  int repeat_;
  std::vector<BufferSet> sets_;
  std::vector<int> reference_handles_;  ///< the CUDA reference's launches, one per buffer set
  std::vector<int> library_handles_;    ///< the library call's, one per buffer set
  BenchResult result_;
};

}  // namespace

Ceilings measure_ceilings(BenchDevice& device, int repeat) {
  Ceilings c;
  c.copy_bytes = std::uint64_t{1} << 30;
  c.copy_gbps = device.copy_gbps(c.copy_bytes, repeat);
  device.free_all();
  c.gemm_n = 8192;
  c.gemm = device.gemm_tflops(c.gemm_n, repeat);
  device.free_all();
  c.mma_sync_tflops = device.mma_sync_tflops(repeat);
  device.free_all();
  return c;
}

BenchResult run_bench(const BenchCase& bench, DType dtype, BenchDevice& device, int repeat,
                      const dsl::TuningTable* tuning) {
  BenchResult result;
  result.name = bench.name;
  result.kernel = bench.kernel;
  result.dtype = dtype;
  try {
    BenchRun run(bench, dtype, device, repeat, tuning);
    result = run.run();
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  try {
    device.free_all();
  } catch (const std::exception& e) {
    if (result.error.empty()) result.error = e.what();
  }
  return result;
}

std::string check_bench_setup(const BenchCase& bench, DType dtype) {
  try {
    const BenchSetup setup = bench.make(dtype);
    if (!setup.has_grid()) return "the bench sets no grid";
    if (setup.bytes() == 0 && setup.flop_count() == 0) {
      return "the bench gives neither bytes_moved nor flops";
    }
    if (setup.peer_op().empty()) return "the bench names no peer case (peer(op, dims))";
    if (std::string why = unknown_peer_op(setup.peer_op()); !why.empty()) return why;
    // Tensors as the guard sees them: their dtype and the element count the bench allocates.
    std::vector<runtime::GuardArg> args;
    for (const ir::Param& p : setup.kernel().params) {
      if (p.kind == ir::ParamKind::Constexpr) {
        const auto found = setup.constants().find(p.name);
        if (found == setup.constants().end())
          return fmt::format("constexpr '{}' is not given", p.name);
        args.emplace_back(found->second);
        continue;
      }
      std::size_t count = 0;
      if (p.kind == ir::ParamKind::Input) {
        const auto found = setup.inputs().find(p.name);
        if (found == setup.inputs().end()) return fmt::format("buffer '{}' is not given", p.name);
        count = found->second.count;
      } else {
        const auto found = setup.outputs().find(p.name);
        if (found == setup.outputs().end()) return fmt::format("buffer '{}' is not given", p.name);
        count = found->second;
      }
      args.emplace_back(runtime::TensorExtent{p.dtype, count * dtype_size(p.dtype)});
    }
    // Benches run on a CUDA device: the default CUDA profile's shared memory is its limit.
    runtime::DeviceLimits limits;
    for (const codegen::TargetProfile& profile : codegen::TargetProfile::defaults()) {
      if (codegen::target_of(profile).name == std::string_view("cuda")) {
        limits.max_shared_bytes = profile.max_shared_bytes;
      }
    }
    runtime::check_dispatch(setup.kernel(), args, setup.launch_grid(), limits);
    if (std::string why = check_library_reference(setup); !why.empty()) return why;
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace iron::bench
