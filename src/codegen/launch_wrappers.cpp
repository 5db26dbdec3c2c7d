/// The launch-wrapper header: per kernel and dtype, an inline typed function over Backend::run.
#include "iron/codegen/launch_wrappers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "c_like/kernel_abi.hpp"
#include "iron/codegen/emit.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen {
namespace {

constexpr std::string_view kPreamble = R"(#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "iron/core/error.hpp"
#include "iron/dsl/geometry.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/dsl/tuning.hpp"
#include "iron/dsl/tuning_table.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/runtime/device.hpp"
#include "iron/runtime/device_info.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::launch {
namespace detail {

/// Throws iron::Error unless `tensor` holds elements of `dtype`.
inline void check_dtype(const char* function, const char* param,
                        const iron::runtime::HostTensor& tensor, iron::DType dtype) {
  if (tensor.dtype == dtype) return;
  throw iron::Error(std::string(function) + ": tensor '" + param + "' holds " +
                    std::string(iron::dtype_name(tensor.dtype)) + " elements, the kernel takes " +
                    std::string(iron::dtype_name(dtype)));
}

/// One entry point's kernel, traced on first use under each tuning configuration it launches
/// with: the one the tuning file IRON_TUNING_FILE holds for the launch's shape on this device
/// (docs/tuning.md), else the kernel's defaults.
class TunedKernels {
 public:
  TunedKernels(const char* name, iron::DType dtype)
      : name_(name), dtype_(dtype), has_knobs_(iron::dsl::tuning_space(name).has_value()) {}

  iron::DType dtype() const { return dtype_; }

  /// The tuning file's configuration for a launch with these constexprs on the first CUDA
  /// device, or the empty configuration (the defaults).
  iron::dsl::TuningConfig config_for(const iron::dsl::GeometryQuery& query) {
    const iron::runtime::CudaReport& cuda = iron::runtime::cuda_report();
    if (!has_knobs_ || cuda.devices.empty()) return {};
    return iron::dsl::environment_tuning_for(get({}).ir(), query.constants,
                                             cuda.devices.front().name,
                                             iron::runtime::cuda_version_text(cuda.driver_version));
  }

  /// The kernel traced under `config`, kept for the next launch.
  const iron::runtime::DeviceKernel& get(const iron::dsl::TuningConfig& config) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto& kept = kernels_[iron::dsl::format_config(config)];
    if (!kept) {
      kept = std::make_unique<iron::runtime::DeviceKernel>(
          iron::dsl::kernel_ir_for(name_, dtype_, config));
    }
    return *kept;
  }

 private:
  std::string name_;
  iron::DType dtype_;
  bool has_knobs_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<iron::runtime::DeviceKernel>> kernels_;
};

/// Launches the kernel of `kernels` on `stream` under its tuning configuration, with the grid
/// its geometry function plans for `query` (the constexprs and tensor sizes given, the device's
/// multiprocessors).
inline void launch_planned(TunedKernels& kernels, iron::dsl::GeometryQuery query,
                           const std::vector<iron::runtime::DeviceArg>& args,
                           const iron::runtime::Stream& stream) {
  query.dtype = kernels.dtype();
  query.device.multiprocessors = iron::runtime::cuda_multiprocessors();
  const iron::dsl::TuningConfig config = kernels.config_for(query);
  const iron::runtime::DeviceKernel& kernel = kernels.get(config);
  const auto planned = iron::dsl::geometry_for(kernel.ir().name, query, config);
  if (!planned) {
    throw iron::Error(kernel.ir().name +
                      ": no geometry function: launch it with launch_async and a grid");
  }
  const iron::runtime::Grid grid{{planned->groups.x, planned->groups.y, planned->groups.z},
                                 {planned->threads.x, planned->threads.y, planned->threads.z}};
  iron::runtime::launch_async(kernel, args, grid, stream);
}

}  // namespace detail
)";

std::string_view enumerator(DType t) {
  switch (t) {
    case DType::F32:
      return "F32";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    case DType::I32:
      return "I32";
    case DType::U32:
      return "U32";
    case DType::U8:
      return "U8";
    case DType::I8:
      return "I8";
    case DType::U16:
      return "U16";
    case DType::Bool:
      return "Bool";
    case DType::F8E4M3:
      return "F8E4M3";
    case DType::F8E5M2:
      return "F8E5M2";
  }
  return "";
}

/// The Launch argument for parameter `p`.
std::string argument(const ir::Param& p) {
  if (p.kind != ir::ParamKind::Constexpr) return "&" + p.name;
  const std::string dtype = fmt::format("iron::DType::{}", enumerator(p.dtype));
  if (is_float(p.dtype)) return fmt::format("iron::runtime::Scalar{{{}, {}, 0}}", dtype, p.name);
  if (p.dtype == DType::Bool) {
    return fmt::format("iron::runtime::Scalar{{{}, 0.0, {} ? 1 : 0}}", dtype, p.name);
  }
  return fmt::format("iron::runtime::Scalar{{{}, 0.0, {}}}", dtype, p.name);
}

std::string wrapper(const ir::Kernel& kernel) {
  const std::string symbol = kernel_symbol(kernel);
  std::vector<std::string> params = {"iron::runtime::Backend& backend"};
  std::string checks;
  std::vector<std::string> args;
  for (const ir::Param& p : kernel.params) {
    if (p.kind == ir::ParamKind::Constexpr) {
      params.push_back(fmt::format("{} {}", c_like::host_type(p.dtype), p.name));
    } else {
      params.push_back("iron::runtime::HostTensor& " + p.name);
      checks += fmt::format("  detail::check_dtype(\"{}\", \"{}\", {}, iron::DType::{});\n", symbol,
                            p.name, p.name, enumerator(p.dtype));
    }
    args.push_back(argument(p));
  }
  params.emplace_back("iron::runtime::Grid grid");
  return fmt::format(
      "\n/// {} ({}) with T = {}.\ninline void {}(\n    {}) {{\n{}"
      "  static const iron::ir::Kernel kernel =\n"
      "      iron::dsl::kernel_ir_for(\"{}\", iron::DType::{});\n"
      "  iron::runtime::Launch launch;\n"
      "  launch.kernel = &kernel;\n"
      "  launch.args = {{\n      {}}};\n"
      "  launch.grid = grid;\n"
      "  backend.run(launch);\n}}\n",
      kernel.name, format_loc(kernel.loc), dtype_name(kernel.dtype), symbol,
      fmt::join(params, ",\n    "), checks, kernel.name, enumerator(kernel.dtype),
      fmt::join(args, ",\n      "));
}

/// The device-resident entry point of a kernel form: tensors on the device, the grid planned.
std::string entry_point(const ir::Kernel& kernel) {
  const std::string symbol = kernel_symbol(kernel);
  std::vector<std::string> params = {"const iron::runtime::Stream& stream"};
  std::vector<std::string> args;
  std::string query;
  for (const ir::Param& p : kernel.params) {
    if (p.kind == ir::ParamKind::Constexpr) {
      params.push_back(fmt::format("{} {}", c_like::host_type(p.dtype), p.name));
      args.push_back(argument(p));
      query += fmt::format("  query.constants[\"{0}\"] = static_cast<double>({0});\n", p.name);
    } else {
      params.push_back(fmt::format("{}iron::runtime::DeviceTensor& {}",
                                   p.kind == ir::ParamKind::Input ? "const " : "", p.name));
      args.push_back("&" + p.name);
      query += fmt::format("  query.elements[\"{0}\"] = {0}.count();\n", p.name);
    }
  }
  return fmt::format(
      "\n/// {} ({}) with T = {}, on device tensors: enqueued on `stream` with the grid the\n"
      "/// kernel's geometry function plans for these sizes, under the tuning file's\n"
      "/// configuration for them (IRON_TUNING_FILE) when it has one.\ninline void {}(\n    {}) "
      "{{\n"
      "  static detail::TunedKernels kernels{{\"{}\", iron::DType::{}}};\n"
      "  iron::dsl::GeometryQuery query;\n{}"
      "  detail::launch_planned(kernels, query, {{\n      {}}}, stream);\n}}\n",
      kernel.name, format_loc(kernel.loc), dtype_name(kernel.dtype), symbol,
      fmt::join(params, ",\n    "), kernel.name, enumerator(kernel.dtype), query,
      fmt::join(args, ",\n      "));
}

}  // namespace

std::string emit_launch_wrappers(const std::vector<ir::Kernel>& kernels) {
  std::string text =
      "// Typed launch wrappers for Iron kernels, one function per kernel and dtype. Generated by\n"
      "// Iron \u2014 do not edit.\n//\n"
      "// Each checks its tensors' dtypes (iron::Error naming the parameter), then runs the "
      "kernel,\n"
      "// traced on first use by iron::dsl::kernel_ir_for, on the backend given. Link the kernel "
      "library.\n"
      "// iron::lib has the same kernels on device tensors, enqueued on a stream with the grid "
      "each\n// kernel's geometry function plans (iron/runtime/device.hpp).\n";
  text += kPreamble;
  std::set<std::string> symbols;
  for (const ir::Kernel& k : kernels) {
    c_like::check_names(k, "the launch wrappers", "backend grid launch kernel detail iron std");
    IRON_INTERNAL_ASSERT(symbols.insert(kernel_symbol(k)).second,
                         "launch wrappers asked twice for " + kernel_symbol(k));
    text += wrapper(k);
  }
  text +=
      "\n}  // namespace iron::launch\n\n"
      "// Device-resident entry points (iron/runtime/device.hpp), one per kernel and dtype.\n"
      "namespace iron::lib {\nnamespace detail = iron::launch::detail;\n";
  for (const ir::Kernel& k : kernels) {
    c_like::check_names(k, "the device entry points", "stream query kernels detail iron std");
    text += entry_point(k);
  }
  return text + "\n}  // namespace iron::lib\n";
}

}  // namespace iron::codegen
