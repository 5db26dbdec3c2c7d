/// The C interface of Iron's Python module (python/iron_torch): the kernel catalog, one kernel
/// form's signature, and launches on memory the caller owns — device memory on a CUDA stream
/// (a torch.Tensor on the GPU, zero-copy) or host memory through the simulator (a CPU tensor).
/// A C ABI loaded with ctypes, so building it needs no Python headers and it works with any
/// Python. Strings returned are valid until the calling thread's next call.
#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "iron/core/error.hpp"
#include "iron/dsl/geometry.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/dsl/tuning.hpp"
#include "iron/dsl/tuning_table.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/runtime/device.hpp"
#include "iron/runtime/device_info.hpp"

namespace {

using iron::DType;
namespace ir = iron::ir;
namespace runtime = iron::runtime;

/// One argument: a tensor at `address` (device or host memory, as the call says) of `count`
/// elements of `dtype`, or a constexpr (`number` for floats, `integer` otherwise).
struct IronPyArg {
  std::uint32_t is_tensor;
  std::uint32_t dtype;  // iron::DType's value
  std::uint64_t address;
  std::uint64_t count;
  double number;
  std::int64_t integer;
};

enum Outcome : int { kOk = 0, kRefused = 1, kFailed = 2 };

thread_local std::string last_text;

const char* keep(std::string text) {
  last_text = std::move(text);
  return last_text.c_str();
}

/// Each traced form, under each tuning configuration it launched with, kept for the process:
/// launches point into it, and it keeps its compiled function (DeviceKernel), so a launch does
/// not hash the IR again.
const runtime::DeviceKernel& form(const std::string& name, const std::string& dtype_name,
                                  const iron::dsl::TuningConfig& config = {}) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, std::string, std::string>,
                  std::unique_ptr<runtime::DeviceKernel>>
      forms;
  const std::lock_guard lock(mutex);
  auto& slot = forms[{name, dtype_name, iron::dsl::format_config(config)}];
  if (slot == nullptr) {
    const std::optional<DType> dtype = iron::parse_dtype(dtype_name);
    if (!dtype) throw iron::Error(fmt::format("{}: no dtype named '{}'", name, dtype_name));
    slot = std::make_unique<runtime::DeviceKernel>(iron::dsl::kernel_ir_for(name, *dtype, config));
  }
  return *slot;
}

/// The arguments checked against the form's parameters: their number, tensor or constexpr, and
/// each tensor's dtype. Error naming the argument.
void check_arguments(const ir::Kernel& kernel, const IronPyArg* args, std::size_t n) {
  if (n != kernel.params.size()) {
    throw iron::DispatchError(fmt::format("{}: {} arguments given, the kernel takes {}",
                                          kernel.name, n, kernel.params.size()));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const ir::Param& p = kernel.params[i];
    const bool tensor = p.kind != ir::ParamKind::Constexpr;
    if ((args[i].is_tensor != 0) != tensor) {
      throw iron::DispatchError(fmt::format("{}: argument '{}' must be {}", kernel.name, p.name,
                                            tensor ? "a tensor" : "a number"));
    }
    if (tensor && args[i].dtype != static_cast<std::uint32_t>(p.dtype)) {
      throw iron::DispatchError(fmt::format(
          "{}: argument '{}' holds {} elements, the kernel takes {}", kernel.name, p.name,
          iron::dtype_name(static_cast<DType>(args[i].dtype)), iron::dtype_name(p.dtype)));
    }
  }
}

runtime::Scalar scalar(const ir::Param& p, const IronPyArg& a) {
  return iron::is_float(p.dtype) ? runtime::Scalar{.dtype = p.dtype, .f = a.number}
                                 : runtime::Scalar{.dtype = p.dtype, .i = a.integer};
}

/// The geometry query of a launch with these arguments on a device of `multiprocessors`.
iron::dsl::GeometryQuery query_of(const ir::Kernel& kernel, const IronPyArg* args,
                                  std::uint32_t multiprocessors) {
  iron::dsl::GeometryQuery query;
  query.dtype = kernel.dtype;
  query.device.multiprocessors = multiprocessors;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (p.kind == ir::ParamKind::Constexpr) {
      query.constants[p.name] = scalar(p, args[i]).as_double();
    } else {
      query.elements[p.name] = args[i].count;
    }
  }
  return query;
}

/// The kernel's own launch for these sizes and constexprs, on a device of `multiprocessors`,
/// under tuning configuration `config`.
runtime::Grid planned_grid(const ir::Kernel& kernel, const IronPyArg* args,
                           std::uint32_t multiprocessors,
                           const iron::dsl::TuningConfig& config = {}) {
  const auto g =
      iron::dsl::geometry_for(kernel.name, query_of(kernel, args, multiprocessors), config);
  if (!g) throw iron::Error(kernel.name + ": the kernel has no geometry function (IRON_GEOMETRY)");
  return {{g->groups.x, g->groups.y, g->groups.z}, {g->threads.x, g->threads.y, g->threads.z}};
}

/// What a launch of a form runs: the form under the tuning entry for its constexprs, and the grid
/// its geometry function plans.
struct LaunchPlan {
  const runtime::DeviceKernel* kernel = nullptr;
  runtime::Grid grid;
};

/// The plan of a launch of `defaults` with these arguments on a device of `multiprocessors`,
/// kept per argument values: the tuning table and the device are fixed for the process, and the
/// geometry function depends on the values alone, so a repeated launch skips both lookups
/// (~3 µs of a launch's host time). Kept for at most kPlans value lists.
LaunchPlan launch_plan(const runtime::DeviceKernel& defaults, const std::string& dtype_name,
                       const IronPyArg* args, std::uint32_t multiprocessors) {
  constexpr std::size_t kPlans = 4096;
  static std::mutex mutex;
  static std::map<std::pair<const runtime::DeviceKernel*, std::vector<std::uint64_t>>, LaunchPlan>
      plans;
  const ir::Kernel& ir_kernel = defaults.ir();
  std::vector<std::uint64_t> values;
  values.reserve(ir_kernel.params.size());
  for (std::size_t i = 0; i < ir_kernel.params.size(); ++i) {
    const IronPyArg& a = args[i];
    values.push_back(a.is_tensor != 0 ? a.count
                     : iron::is_float(ir_kernel.params[i].dtype)
                         ? std::bit_cast<std::uint64_t>(a.number)
                         : static_cast<std::uint64_t>(a.integer));
  }
  auto key = std::make_pair(&defaults, std::move(values));
  {
    const std::lock_guard lock(mutex);
    if (const auto found = plans.find(key); found != plans.end()) return found->second;
  }
  const runtime::CudaReport& cuda = runtime::cuda_report();
  const iron::dsl::TuningConfig config = iron::dsl::environment_tuning_for(
      ir_kernel, query_of(ir_kernel, args, multiprocessors).constants, cuda.devices.front().name,
      runtime::cuda_version_text(cuda.driver_version));
  LaunchPlan plan;
  plan.kernel = config.empty() ? &defaults : &form(ir_kernel.name, dtype_name, config);
  plan.grid = planned_grid(plan.kernel->ir(), args, multiprocessors, config);
  const std::lock_guard lock(mutex);
  if (plans.size() >= kPlans) plans.clear();
  plans.emplace(std::move(key), plan);
  return plan;
}

/// Launches the form on `stream` under the configuration the tuning files (IRON_TUNING_FILE and
/// the built-in ones) hold for these constexprs on the first CUDA device, else the kernel's rule's,
/// else its defaults (docs/tuning.md).
void launch_on_device(const runtime::DeviceKernel& defaults, const std::string& dtype_name,
                      const IronPyArg* args, void* stream) {
  if (!runtime::cuda_available()) {
    throw iron::Error(defaults.ir().name +
                      ": CUDA is unavailable: " + runtime::cuda_unavailable_reason());
  }
  const LaunchPlan plan = launch_plan(defaults, dtype_name, args, runtime::cuda_multiprocessors());
  const runtime::DeviceKernel& tuned = *plan.kernel;
  const ir::Kernel& kernel = tuned.ir();
  std::vector<runtime::DeviceTensor> tensors;
  tensors.reserve(kernel.params.size());
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    if (args[i].is_tensor != 0) {
      tensors.push_back(
          runtime::DeviceTensor::borrow(args[i].address, kernel.params[i].dtype, args[i].count));
    }
  }
  std::vector<runtime::DeviceArg> launch_args;
  std::size_t next = 0;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    if (args[i].is_tensor != 0) {
      launch_args.emplace_back(&tensors[next++]);
    } else {
      launch_args.emplace_back(scalar(kernel.params[i], args[i]));
    }
  }
  runtime::launch_async(tuned, launch_args, plan.grid, runtime::Stream::borrow(stream));
}

/// Host memory through the simulator: inputs copied in, outputs copied back after the run.
void run_on_simulator(const ir::Kernel& kernel, const IronPyArg* args) {
  std::vector<runtime::HostTensor> tensors(kernel.params.size());
  runtime::Launch launch;
  launch.kernel = &kernel;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (args[i].is_tensor == 0) {
      launch.args.emplace_back(scalar(p, args[i]));
      continue;
    }
    runtime::HostTensor& t = tensors[i];
    t.dtype = p.dtype;
    t.bytes.resize(args[i].count * iron::dtype_size(p.dtype));
    if (!t.bytes.empty()) {
      // The caller's host buffer, given to Python as an integer address.
      // NOLINTNEXTLINE(performance-no-int-to-ptr)
      std::memcpy(t.bytes.data(), reinterpret_cast<const void*>(args[i].address), t.bytes.size());
    }
    launch.args.emplace_back(&t);
  }
  launch.grid = planned_grid(kernel, args, iron::dsl::DeviceShape{}.multiprocessors);
  static std::mutex mutex;  // one simulator run at a time
  const std::lock_guard lock(mutex);
  static const std::unique_ptr<runtime::Backend> sim = runtime::make_backend("sim");
  sim->run(launch);
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    if (args[i].is_tensor != 0 && ir::is_output(kernel.params[i].kind) &&
        !tensors[i].bytes.empty()) {
      // NOLINTNEXTLINE(performance-no-int-to-ptr): the caller's host buffer, as above
      std::memcpy(reinterpret_cast<void*>(args[i].address), tensors[i].bytes.data(),
                  tensors[i].bytes.size());
    }
  }
}

}  // namespace

extern "C" {

/// {"version", "cuda": {"available", "reason"}, "kernels": [{"name", "dtypes"}]} as JSON.
__attribute__((visibility("default"))) const char* iron_py_catalog() {
  nlohmann::json kernels = nlohmann::json::array();
  for (const iron::dsl::KernelInfo& k : iron::dsl::registered_kernels()) {
    nlohmann::json dtypes = nlohmann::json::array();
    for (const DType d : k.dtypes) dtypes.push_back(std::string(iron::dtype_name(d)));
    kernels.push_back({{"name", k.name}, {"dtypes", dtypes}});
  }
  const bool cuda = runtime::cuda_available();
  return keep(nlohmann::json{
      {"version", IRON_VERSION},
      {"cuda", {{"available", cuda}, {"reason", cuda ? "" : runtime::cuda_unavailable_reason()}}},
      {"kernels",
       kernels}}.dump());
}

/// The parameters of one form, [{"name", "kind", "dtype"}], or {"error": why} as JSON.
__attribute__((visibility("default"))) const char* iron_py_signature(const char* kernel,
                                                                     const char* dtype) {
  try {
    nlohmann::json params = nlohmann::json::array();
    for (const ir::Param& p : form(kernel, dtype).ir().params) {
      params.push_back({{"name", p.name},
                        {"kind", std::string(ir::param_kind_name(p.kind))},
                        {"dtype", std::string(iron::dtype_name(p.dtype))},
                        {"dtype_code", static_cast<int>(p.dtype)}});
    }
    return keep(params.dump());
  } catch (const std::exception& e) {
    return keep(nlohmann::json{{"error", e.what()}}.dump());
  }
}

/// Runs one form: on the GPU on `stream` (a CUstream; null is the legacy default stream) when
/// `on_device`, tensors being device addresses, returning before the kernel ends; else on the
/// simulator, tensors being host addresses, returning after it. 0: launched; 1: refused (a bad
/// argument: nothing ran); 2: failed. `*error` says why.
__attribute__((visibility("default"))) int iron_py_launch(const char* kernel, const char* dtype,
                                                          const IronPyArg* args, std::size_t n,
                                                          int on_device, void* stream,
                                                          const char** error) {
  *error = keep("");
  try {
    const runtime::DeviceKernel& k = form(kernel, dtype);
    check_arguments(k.ir(), args, n);
    if (on_device != 0) {
      launch_on_device(k, dtype, args, stream);
    } else {
      run_on_simulator(k.ir(), args);
    }
    return kOk;
  } catch (const iron::DispatchError& e) {
    *error = keep(e.what());
    return kRefused;
  } catch (const std::exception& e) {
    *error = keep(e.what());
    return kFailed;
  }
}

}  // extern "C"
