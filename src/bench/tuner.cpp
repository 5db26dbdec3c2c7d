/// The autotuner: configurations traced, planned, checked and timed in turn (or compiled only).
#include "iron/bench/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <thread>

#include "iron/bench/bench_inputs.hpp"
#include "iron/codegen/compile.hpp"
#include "iron/codegen/targets.hpp"
#include "iron/core/error.hpp"
#include "iron/core/size_expr.hpp"
#include "iron/core/specialization.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/runtime/dispatch_guard.hpp"
#include "iron/runtime/nvrtc.hpp"
#include "iron/runtime/warmup.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/geometry.hpp"
#include "iron/testing/tolerance.hpp"

namespace iron::bench {
namespace {

constexpr std::uint64_t kSeed = 20261204;
constexpr std::size_t kPatternElements = std::size_t{1} << 20;  ///< random values, then repeated
constexpr int kWarmup = 3;
constexpr std::uint64_t kMostBufferSets = 16;

/// Why a configuration was refused: an error message's first line and, where it ends in a colon
/// (a compiler's log follows, as NVRTC's does), the log's first line that is not blank.
std::string refusal_reason(const std::string& message) {
  std::istringstream lines(message);
  std::string reason;
  std::getline(lines, reason);
  if (reason.empty() || reason.back() != ':') return reason;
  for (std::string detail; std::getline(lines, detail);) {
    if (detail.find_first_not_of(" \t\r") != std::string::npos) return reason + " " + detail;
  }
  return reason;
}

/// Whether any element of `t` still holds the poison (all bytes 0xFF: a NaN for floats, which no
/// arithmetic produces).
bool has_poison(const runtime::HostTensor& t) {
  const std::size_t width = dtype_size(t.dtype);
  const auto* bytes = reinterpret_cast<const unsigned char*>(t.bytes.data());
  for (std::size_t i = 0; i < t.bytes.size(); i += width) {
    if (bytes[i] != 0xFF) continue;
    bool all = true;
    for (std::size_t b = 1; b < width && all; ++b) all = bytes[i + b] == 0xFF;
    if (all) return true;
  }
  return false;
}

/// Outputs of `got` differing from `want` by more than the tuner's tolerance: "" or the first.
/// Equal bytes match at once (configurations that sum in the same order give the same bits).
std::string compare(const std::string& name, const runtime::HostTensor& want_bytes,
                    const runtime::HostTensor& got_bytes) {
  if (want_bytes.bytes == got_bytes.bytes) return "";
  const DType dtype = want_bytes.dtype;
  const std::vector<float> want = testing::unpack(want_bytes);
  const std::vector<float> got = testing::unpack(got_bytes);
  float largest = 0.0f;
  for (const float w : want) largest = std::max(largest, std::abs(w));
  const double tolerance =
      is_float(dtype) ? largest * (4.0 * testing::tolerance::unit_roundoff(dtype) + 1e-3) : 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::abs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= tolerance)) {
      return fmt::format("output '{}'[{}] is {} where the defaults give {} (tolerance {:.3g})",
                         name, i, got[i], want[i], tolerance);
    }
  }
  return "";
}

/// The resident tensors of a tuning run, by parameter name.
struct Buffers {
  std::map<std::string, ResidentTensor> tensors;
};

runtime::Scalar scalar_of(const ir::Param& p, double value) {
  runtime::Scalar s;
  s.dtype = p.dtype;
  if (is_float(p.dtype)) {
    s.f = value;
  } else {
    s.i = static_cast<std::int64_t>(std::llround(value));
  }
  return s;
}

std::vector<ResidentArg> args_of(const ir::Kernel& kernel, const TuneRequest& request,
                                 const Buffers& buffers) {
  std::vector<ResidentArg> args;
  for (const ir::Param& p : kernel.params) {
    if (p.kind == ir::ParamKind::Constexpr) {
      args.emplace_back(scalar_of(p, request.constants.at(p.name)));
    } else {
      args.emplace_back(buffers.tensors.at(p.name));
    }
  }
  return args;
}

/// The bytes of input `p` (`count` elements) that the request fills as a bench does, or nullopt.
std::optional<runtime::HostTensor> filled_input(const TuneRequest& request, const ir::Param& p,
                                                std::uint64_t count, testing::Rng& rng) {
  const auto fill = request.inputs.find(p.name);
  if (fill == request.inputs.end()) return std::nullopt;
  runtime::HostTensor host = make_input(fill->second, p.dtype, rng);
  if (host.bytes.size() > count * dtype_size(p.dtype)) {
    throw Error(
        fmt::format("kernel {}: input '{}' is filled with {} bytes, but its layout holds {}",
                    request.kernel, p.name, host.bytes.size(), count * dtype_size(p.dtype)));
  }
  return host;
}

/// Sets of every tensor, enough that one run's inputs are out of L2 when the next set runs
/// (four times the L2 between them, as `iron bench` does); each set's inputs the same: the
/// request's fills where it has them, else a repeated random pattern (floats uniform in
/// [-1, 1), integers zero).
std::vector<Buffers> allocate(BenchDevice& device, const ir::Kernel& kernel,
                              const TuneRequest& request,
                              const std::map<std::string, std::uint64_t>& sizes) {
  std::uint64_t set_bytes = 0;
  for (const ir::Param& p : kernel.params) {
    if (p.kind != ir::ParamKind::Constexpr) {
      set_bytes += std::max<std::uint64_t>(sizes.at(p.name), 1) * dtype_size(p.dtype);
    }
  }
  const std::uint64_t sets = std::clamp<std::uint64_t>(
      (4 * device.l2_bytes() + set_bytes - 1) / std::max<std::uint64_t>(set_bytes, 1), 1,
      kMostBufferSets);
  std::vector<Buffers> all(sets);
  testing::Rng rng(kSeed);
  for (const ir::Param& p : kernel.params) {
    if (p.kind == ir::ParamKind::Constexpr) continue;
    const std::uint64_t count = std::max<std::uint64_t>(sizes.at(p.name), 1);
    const std::size_t bytes = count * dtype_size(p.dtype);
    for (Buffers& set : all)
      set.tensors[p.name] = ResidentTensor{device.alloc(bytes), p.dtype, count};
    if (p.kind == ir::ParamKind::Output) continue;
    const DeviceAddress first = all.front().tensors.at(p.name).address;
    if (const auto host = filled_input(request, p, count, rng)) {
      device.fill(first, bytes, 0);
      device.upload(first, host->bytes);
    } else if (is_float(p.dtype)) {
      const auto pattern = testing::pack(
          rng.uniform(std::min<std::uint64_t>(count, kPatternElements), -1.0f, 1.0f), p.dtype);
      device.upload(first, pattern.bytes);
      for (std::size_t done = pattern.bytes.size(); done < bytes;) {
        const std::size_t chunk = std::min(done, bytes - done);
        device.copy(first + done, first, chunk);
        done += chunk;
      }
    } else {
      device.fill(first, bytes, 0);
    }
    for (std::size_t i = 1; i < all.size(); ++i) {
      device.copy(all[i].tensors.at(p.name).address, first, bytes);
    }
  }
  return all;
}

std::map<std::string, runtime::HostTensor> download_outputs(BenchDevice& device,
                                                            const ir::Kernel& kernel,
                                                            const Buffers& buffers) {
  std::map<std::string, runtime::HostTensor> out;
  for (const ir::Param& p : kernel.params) {
    if (p.kind != ir::ParamKind::Output) continue;
    const ResidentTensor& t = buffers.tensors.at(p.name);
    runtime::HostTensor& host = out[p.name];
    host.dtype = t.dtype;
    host.bytes.resize(t.count * dtype_size(t.dtype));
    device.download(t.address, host.bytes);
  }
  return out;
}

/// The configuration's kernel and grid for the request's shape on a device of this shape.
std::pair<ir::Kernel, runtime::Grid> plan(const TuneRequest& request,
                                          const dsl::TuningConfig& config,
                                          const std::map<std::string, std::uint64_t>& sizes,
                                          const dsl::DeviceShape& device) {
  ir::Kernel kernel = dsl::kernel_ir_for(request.kernel, request.dtype, config);
  std::map<std::string, runtime::Scalar> constants;
  for (const ir::Param& p : kernel.params) {
    if (p.kind == ir::ParamKind::Constexpr) {
      constants[p.name] = scalar_of(p, request.constants.at(p.name));
    }
  }
  const std::map<std::string, std::uint64_t> elements(sizes.begin(), sizes.end());
  const auto grid = testing::geometry_grid(
      kernel, testing::geometry_query(kernel, constants, elements, device), config);
  if (!grid) throw Error(fmt::format("kernel {} has no geometry (IRON_GEOMETRY)", request.kernel));
  return {std::move(kernel), *grid};
}

/// Remembers each configuration's emitted code and grid, to tell one that compiles to the same
/// kernel as an earlier one (a ring deeper than the target holds is cut to what fits).
class SameCode {
 public:
  /// The index of an earlier configuration with this code and grid, else nullopt (and this one
  /// is remembered as `index`).
  std::optional<std::size_t> earlier(const std::string& source, const runtime::Grid& grid,
                                     std::size_t index) {
    const std::string key =
        fmt::format("{}x{}x{} {}x{}x{}\n{}", grid.groups.x, grid.groups.y, grid.groups.z,
                    grid.group_size.x, grid.group_size.y, grid.group_size.z, source);
    const auto [at, fresh] = seen_.emplace(key, index);
    if (fresh) return std::nullopt;
    return at->second;
  }

 private:
  std::map<std::string, std::size_t> seen_;
};

/// The CUDA C++ a launch on compute capability `sm` × 10 compiles `kernel` into, for the
/// usual specialization (the tuned shapes' launches bind it unless a shape is unusual).
codegen::CompiledKernel cuda_code(const ir::Kernel& kernel, int sm) {
  return codegen::compile_for_cuda_device(kernel, sm, ir::usual_specialization(kernel));
}

std::string same_code_text(const TuneResult& result, std::size_t earlier) {
  return "same code and grid as " + dsl::format_config(result.configs[earlier].config);
}

/// Compiles every configuration that traces into the module cache, one a CPU at a time, so that
/// preparing each on the device loads it; without a cache folder or NVRTC each compiles when
/// prepared instead (that is where a failure is reported).
void precompile(const TuneRequest& request, const std::vector<dsl::TuningConfig>& configs, int sm,
                const std::function<void(const std::string&)>& progress) {
  std::vector<ir::Kernel> kernels;
  for (const dsl::TuningConfig& config : configs) {
    try {
      kernels.push_back(dsl::kernel_ir_for(request.kernel, request.dtype, config));
    } catch (const Error&) {
      // Reported when the configuration is planned.
    }
  }
  const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  try {
    const auto start = std::chrono::steady_clock::now();
    const auto warmed = runtime::warm_module_cache(kernels, sm, jobs);
    const auto compiled = std::count_if(warmed.begin(), warmed.end(),
                                        [](const runtime::WarmupResult& w) { return w.compiled; });
    progress(fmt::format(
        "compiled {} configurations ({} already in the cache) in {:.1f} s, {} at a time", compiled,
        warmed.size() - static_cast<std::size_t>(compiled),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), jobs));
  } catch (const Error& e) {
    progress(fmt::format("not compiled ahead ({}): each compiles when prepared",
                         refusal_reason(e.what())));
  }
}

}  // namespace

void check_shape(const ir::Kernel& kernel, const TuneRequest& request) {
  std::string missing;
  for (const ir::Param& p : kernel.params) {
    if (p.kind == ir::ParamKind::Constexpr && !request.constants.contains(p.name)) {
      missing += (missing.empty() ? "" : ", ") + p.name;
    }
  }
  if (!missing.empty()) {
    throw Error(fmt::format("the shape of {} needs constexpr {}", kernel.name, missing));
  }
  for (const ir::Param& p : kernel.params) {
    if (p.kind == ir::ParamKind::InOut) {
      throw Error(fmt::format(
          "kernel {} updates tensor '{}' in place, so its runs do not start from the same data: "
          "the tuner times kernels whose outputs are written afresh",
          kernel.name, p.name));
    }
  }
  for (const auto& given : request.constants) {
    const auto at =
        std::find_if(kernel.params.begin(), kernel.params.end(), [&](const ir::Param& p) {
          return p.name == given.first && p.kind == ir::ParamKind::Constexpr;
        });
    if (at == kernel.params.end()) {
      throw Error(fmt::format("kernel {} has no constexpr '{}'", kernel.name, given.first));
    }
  }
}

std::map<std::string, std::uint64_t> tensor_sizes(
    const ir::Kernel& kernel, const std::map<std::string, double, std::less<>>& constants) {
  std::map<std::string, std::uint64_t> sizes;
  for (const ir::Param& p : kernel.params) {
    if (p.kind == ir::ParamKind::Constexpr) continue;
    const ir::TensorLayout* layout = kernel.dispatch.layout_of(p.name);
    if (layout == nullptr) {
      throw Error(fmt::format("tensor '{}' of {} declares no layout, so its size is not known",
                              p.name, kernel.name));
    }
    std::string grid_leaf;
    const ir::SizeValue v = ir::evaluate_size_expr(
        ir::product_of(layout->dims), [&](const ir::SizeExpr& leaf) -> std::optional<std::int64_t> {
          if (leaf.kind != ir::SizeExpr::Kind::Constexpr) {
            grid_leaf = "the grid";
            return std::nullopt;
          }
          const auto found = constants.find(leaf.name);
          if (found == constants.end()) return std::nullopt;
          return static_cast<std::int64_t>(std::llround(found->second));
        });
    if (!v.ok() || v.value < 0) {
      throw Error(fmt::format("the size of tensor '{}' of {} ({}) is not known from the shape: {}",
                              p.name, kernel.name, ir::print_size_dims(layout->dims),
                              grid_leaf.empty() ? v.error : "it depends on the grid"));
    }
    sizes[p.name] = static_cast<std::uint64_t>(v.value);
  }
  return sizes;
}

std::vector<dsl::TuningConfig> requested_configs(const TuneRequest& request) {
  const auto space = dsl::tuning_space(request.kernel);
  if (!space) {
    throw Error(fmt::format("kernel {} declares no tuning knobs (IRON_TUNING)", request.kernel));
  }
  std::vector<dsl::TuningConfig> configs;
  if (request.configs.empty()) {
    configs = space->configs();
  } else {
    configs.push_back(space->defaults());
    for (const auto& c : request.configs) {
      const dsl::TuningConfig full = space->complete(request.kernel, c);
      if (std::find(configs.begin(), configs.end(), full) == configs.end()) configs.push_back(full);
    }
  }
  return configs;
}

TuneResult tune(BenchDevice& device, const TuneRequest& request,
                const std::function<void(const std::string&)>& progress) {
  const std::vector<dsl::TuningConfig> configs = requested_configs(request);
  const ir::Kernel defaults = dsl::kernel_ir_for(request.kernel, request.dtype);
  check_shape(defaults, request);
  const auto sizes = tensor_sizes(defaults, request.constants);
  const std::vector<Buffers> sets = allocate(device, defaults, request, sizes);
  const Buffers& buffers = sets.front();  // the one whose outputs are checked
  const dsl::DeviceShape shape = testing::device_shape("cuda");

  precompile(request, configs, device.sm(), progress);
  TuneResult result;
  std::vector<std::vector<int>> handles;  // of the configurations that matched, one a set
  std::vector<std::size_t> matched;       // their indices in result.configs
  std::map<std::string, runtime::HostTensor> reference;
  SameCode same;
  for (const dsl::TuningConfig& config : configs) {
    TunedConfig& tried = result.configs.emplace_back();
    tried.config = config;
    try {
      auto [kernel, grid] = plan(request, config, sizes, shape);
      tried.grid = grid;
      tried.same_as =
          same.earlier(cuda_code(kernel, device.sm()).source, grid, result.configs.size() - 1);
      if (tried.same_as) {
        progress(fmt::format("{} {}", dsl::format_config(config),
                             same_code_text(result, *tried.same_as)));
        continue;
      }
      std::vector<int> on_sets;
      on_sets.reserve(sets.size());
      for (const Buffers& set : sets) {
        on_sets.push_back(device.prepare(kernel, args_of(kernel, request, set), grid));
      }
      const int handle = on_sets.front();
      for (const auto& [name, t] : buffers.tensors) {
        const ir::Param& p = kernel.params[kernel.find_param(name)];
        if (p.kind == ir::ParamKind::Output) {
          device.fill(t.address, t.count * dtype_size(t.dtype), 0xFF);
        }
      }
      device.launch(handle);
      device.synchronize(request.kernel + " " + dsl::format_config(config));
      const auto outputs = download_outputs(device, kernel, buffers);
      for (const auto& [name, values] : outputs) {
        if (has_poison(values)) {
          tried.refused = fmt::format("output '{}' is not wholly written", name);
          break;
        }
        if (!reference.empty()) tried.refused = compare(name, reference.at(name), values);
        if (!tried.refused.empty()) break;
      }
      if (reference.empty() && tried.refused.empty()) reference = outputs;
      if (tried.refused.empty()) {
        handles.push_back(std::move(on_sets));
        matched.push_back(result.configs.size() - 1);
      }
    } catch (const Error& e) {
      tried.refused = refusal_reason(e.what());
    }
    progress(fmt::format("{} {}", dsl::format_config(config),
                         tried.refused.empty() ? "ready" : "refused: " + tried.refused));
  }
  if (!handles.empty()) {
    std::vector<std::function<void(int)>> enqueues;
    // Configuration j runs on set run + j: the configurations taken in one turn read different
    // sets, so none finds its inputs in L2 from the one before it.
    for (std::size_t j = 0; j < handles.size(); ++j) {
      enqueues.emplace_back([&device, &h = handles[j], j](int run) {
        device.launch(h[(static_cast<std::size_t>(run) + j) % h.size()]);
      });
    }
    progress(fmt::format("timing {} configurations in turn, {} runs each, over {} sets of buffers",
                         handles.size(), request.repeat, sets.size()));
    const auto ms = device.time_in_turn(enqueues, kWarmup, request.repeat, request.kernel);
    for (std::size_t j = 0; j < matched.size(); ++j) {
      std::vector<double> us(ms[j].size());
      std::transform(ms[j].begin(), ms[j].end(), us.begin(), [](double m) { return m * 1e3; });
      TunedConfig& c = result.configs[matched[j]];
      c.us = spread_of(us);
      if (!result.best || c.us->median < result.configs[*result.best].us->median) {
        result.best = matched[j];
      }
    }
  }
  device.free_all();
  return result;
}

TuneResult check_configs(const TuneRequest& request, int sm,
                         const std::function<void(const std::string&)>& progress) {
  const std::vector<dsl::TuningConfig> configs = requested_configs(request);
  const ir::Kernel defaults = dsl::kernel_ir_for(request.kernel, request.dtype);
  check_shape(defaults, request);
  const auto sizes = tensor_sizes(defaults, request.constants);
  runtime::DeviceLimits limits;
  for (const codegen::TargetProfile& profile : codegen::TargetProfile::defaults()) {
    if (codegen::target_of(profile).name == std::string_view("cuda")) {
      limits.max_shared_bytes = profile.max_shared_bytes;
    }
  }
  TuneResult result;
  SameCode same;
  for (const dsl::TuningConfig& config : configs) {
    TunedConfig& tried = result.configs.emplace_back();
    tried.config = config;
    try {
      auto [kernel, grid] = plan(request, config, sizes, {});
      tried.grid = grid;
      const auto compiled = cuda_code(kernel, sm);
      tried.same_as = same.earlier(compiled.source, grid, result.configs.size() - 1);
      if (tried.same_as) {
        progress(fmt::format("{} {}", dsl::format_config(config),
                             same_code_text(result, *tried.same_as)));
        continue;
      }
      std::vector<runtime::GuardArg> args;
      for (const ir::Param& p : kernel.params) {
        if (p.kind == ir::ParamKind::Constexpr) {
          args.emplace_back(scalar_of(p, request.constants.at(p.name)));
        } else {
          args.emplace_back(runtime::TensorExtent{
              p.dtype, std::max<std::uint64_t>(sizes.at(p.name), 1) * dtype_size(p.dtype)});
        }
      }
      runtime::check_dispatch(kernel, args, grid, limits);
      const auto cubin =
          runtime::compile_cubin(compiled.source, compiled.symbol, sm, compiled.arch_specific);
      if (const auto* f = cubin.resources.find(compiled.symbol)) {
        tried.resources = fmt::format("{} registers, {} B spilled", f->registers,
                                      f->spill_store_bytes + f->spill_load_bytes);
      }
    } catch (const Error& e) {
      tried.refused = refusal_reason(e.what());
    }
    progress(fmt::format(
        "{} {}", dsl::format_config(config),
        tried.refused.empty() ? "compiles: " + tried.resources : "refused: " + tried.refused));
  }
  return result;
}

}  // namespace iron::bench
