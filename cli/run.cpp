/// `iron run KERNEL --in x=a.npy --out y=b.npy --const n=… [--grid …] [--tpg …]`: runs any kernel
/// on the user's own data, with names, dtypes and shapes checked against the kernel, on the grid
/// its geometry chooses unless the user gives one.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "commands.hpp"
#include "iron/core/error.hpp"
#include "iron/dsl/geometry.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/geometry.hpp"
#include "iron/testing/npy.hpp"
#include "kernel_params.hpp"
#include "kernel_selection.hpp"
#include "target_options.hpp"

namespace iron::cli {
namespace {

struct RunOptions {
  std::string kernel;
  std::string dtype = "f32";
  std::string backend = "auto";
  std::vector<std::string> inputs, outputs, constants, out_shapes;
  std::string grid, tpg;
  std::string config;
};

/// "NAME=VALUE" pairs into a map; UsageError naming the option for a malformed one.
std::map<std::string, std::string> pairs(const std::vector<std::string>& items,
                                         const char* option) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw UsageError(fmt::format("{} takes NAME=VALUE, not '{}'", option, item));
    }
    if (!out.emplace(item.substr(0, eq), item.substr(eq + 1)).second) {
      throw UsageError(fmt::format("{} names '{}' twice", option, item.substr(0, eq)));
    }
  }
  return out;
}

/// "A,B,C" as unsigned 64-bit numbers; UsageError naming `what` (the option and its value) for
/// anything else.
std::vector<std::uint64_t> numbers(const std::string& text, const std::string& what) {
  std::vector<std::uint64_t> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const std::string part = text.substr(start, comma - start);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec == std::errc::result_out_of_range) {
      throw UsageError(fmt::format("{}: {} is too large", what, part));
    }
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
      throw UsageError(fmt::format("{} takes numbers separated by commas, not '{}'", what, text));
    }
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

/// --grid or --tpg: 1 to 3 numbers, each fitting the u32 the launch takes.
runtime::Dim3 dim3_of(const std::string& text, const char* option) {
  const std::string what = fmt::format("{} {}", option, text);
  const auto v = numbers(text, what);
  if (v.size() > 3) throw UsageError(fmt::format("{}: takes 1 to 3 numbers", what));
  for (const std::uint64_t n : v) {
    if (n > std::numeric_limits<std::uint32_t>::max()) {
      throw UsageError(fmt::format("{}: {} does not fit in 32 bits (at most {})", what, n,
                                   std::numeric_limits<std::uint32_t>::max()));
    }
  }
  runtime::Dim3 d;
  d.x = static_cast<std::uint32_t>(v[0]);
  if (v.size() > 1) d.y = static_cast<std::uint32_t>(v[1]);
  if (v.size() > 2) d.z = static_cast<std::uint32_t>(v[2]);
  return d;
}

/// The kernel's parameters, for a message about a missing or unknown one.
std::string parameters_of(const ir::Kernel& k) {
  std::string table = param_table(k);
  if (!table.empty()) table.pop_back();  // the message's own end of line follows
  return fmt::format("kernel {} [{}] takes:\n{}", k.name, dtype_name(k.dtype), table);
}

/// The input tensor for parameter `p` from `path`; an f32 file is rounded into a narrower float
/// (f16, bf16, the 8-bit floats, for which numpy has no type). Any
/// problem with the file is a UsageError naming the option and the file.
testing::NpyArray load_input(const ir::Param& p, const std::string& path) {
  testing::NpyArray a;
  try {
    a = testing::read_npy(path);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--in {}: {}", p.name, e.what()));
  }
  if (a.tensor.dtype == p.dtype) return a;
  if (a.tensor.dtype == DType::F32 && is_float(p.dtype)) {
    a.tensor = testing::pack(testing::unpack(a.tensor), p.dtype);
    return a;
  }
  throw UsageError(fmt::format("--in {}={}: the file holds {} but '{}' is {}{}", p.name, path,
                               dtype_name(a.tensor.dtype), p.name, dtype_name(p.dtype),
                               is_float(p.dtype) ? " (an f32 file is also accepted)" : ""));
}

/// An output of `shape`, poisoned like test outputs so elements the kernel never writes come
/// back as NaN; UsageError when its size overflows or cannot be allocated.
runtime::HostTensor output_tensor(const ir::Param& p, const std::vector<std::uint64_t>& shape) {
  const std::optional<std::uint64_t> count = testing::element_count(shape);
  std::uint64_t bytes = 0;
  if (!count || __builtin_mul_overflow(*count, dtype_size(p.dtype), &bytes)) {
    throw UsageError(fmt::format("output '{}': shape ({}) has more bytes than fit in 64 bits",
                                 p.name, fmt::join(shape, ", ")));
  }
  const auto too_large = [&] {
    return UsageError(
        fmt::format("output '{}': shape ({}) needs {} bytes, which cannot be allocated", p.name,
                    fmt::join(shape, ", "), bytes));
  };
  try {
    return testing::poisoned(p.dtype, *count);
  } catch (const std::bad_alloc&) {
    throw too_large();
  } catch (const std::length_error&) {
    throw too_large();
  }
}

/// "64" for (64, 1, 1), "8,2" for (8, 2, 1): the --grid/--tpg text that gives `d`.
std::string dim3_text(const runtime::Dim3& d) {
  if (d.z != 1) return fmt::format("{},{},{}", d.x, d.y, d.z);
  if (d.y != 1) return fmt::format("{},{}", d.x, d.y);
  return fmt::format("{}", d.x);
}

/// The launch grid: --grid and --tpg as given; what either leaves out comes from the kernel's
/// geometry for these arguments on the device of `backend`, planned for the --tpg given.
runtime::Grid launch_grid(const ir::Kernel& kernel, const dsl::TuningConfig& config,
                          const std::vector<runtime::Arg>& args,
                          const std::optional<runtime::Dim3>& groups,
                          const std::optional<runtime::Dim3>& tpg, std::string_view backend) {
  if (groups && tpg) return {*groups, *tpg};
  std::map<std::string, runtime::Scalar> constants;
  std::map<std::string, std::uint64_t> elements;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const std::string& name = kernel.params[i].name;
    if (const auto* scalar = std::get_if<runtime::Scalar>(&args[i])) {
      constants.emplace(name, *scalar);
    } else {
      elements.emplace(name, std::get<runtime::HostTensor*>(args[i])->count());
    }
  }
  dsl::GeometryQuery query =
      testing::geometry_query(kernel, constants, elements, testing::device_shape(backend));
  if (tpg) query.fixed_threads = dsl::Dim3{tpg->x, tpg->y, tpg->z};
  std::optional<runtime::Grid> grid = testing::geometry_grid(kernel, query, config);
  IRON_INTERNAL_ASSERT(grid, "a kernel without a geometry reached the launch without a grid");
  if (groups) grid->groups = *groups;
  return *grid;
}

runtime::Scalar parse_constant(const ir::Param& p, const std::string& text) {
  runtime::Scalar s{p.dtype};
  try {
    std::size_t used = 0;
    if (is_float(p.dtype)) {
      s.f = std::stod(text, &used);
    } else if (p.dtype == DType::Bool && (text == "true" || text == "false")) {
      s.i = text == "true";
      used = text.size();
    } else {
      s.i = std::stoll(text, &used);
    }
    if (used != text.size()) throw std::invalid_argument(text);
  } catch (const std::out_of_range&) {
    throw UsageError(
        fmt::format("--const {}={}: out of range for {}", p.name, text, dtype_name(p.dtype)));
  } catch (const std::exception&) {
    throw UsageError(
        fmt::format("--const {}={}: not a {} value", p.name, text, dtype_name(p.dtype)));
  }
  if (!is_float(p.dtype) && !testing::holds_integer(p.dtype, static_cast<double>(s.i))) {
    throw UsageError(
        fmt::format("--const {}={}: out of range for {}", p.name, text, dtype_name(p.dtype)));
  }
  return s;
}

int run(const RunOptions& o) {
  const KernelForm form = resolve_kernel(o.kernel, o.dtype);
  const dsl::TuningConfig config = tuning_config_option(o.kernel, o.config, "--config");
  const ir::Kernel kernel = dsl::kernel_ir_for(o.kernel, form.dtype, config);
  auto ins = pairs(o.inputs, "--in");
  auto outs = pairs(o.outputs, "--out");
  auto consts = pairs(o.constants, "--const");
  auto shapes = pairs(o.out_shapes, "--out-shape");
  std::vector<std::string> missing;
  for (const ir::Param& p : kernel.params) {
    const bool read = p.kind == ir::ParamKind::Input || p.kind == ir::ParamKind::InOut;
    const bool given =
        p.kind == ir::ParamKind::Constexpr
            ? consts.contains(p.name)
            : (!read || ins.contains(p.name)) && (!ir::is_output(p.kind) || outs.contains(p.name));
    if (!given) missing.push_back(run_option(p));
  }
  const bool has_geometry = dsl::find_geometry(kernel.name) != nullptr;
  std::string why_grid;
  if (!has_geometry && (o.grid.empty() || o.tpg.empty())) {
    if (o.grid.empty()) missing.emplace_back("--grid X[,Y,Z]");
    if (o.tpg.empty()) missing.emplace_back("--tpg X[,Y,Z]");
    why_grid = fmt::format(
        " ({} has no geometry function to choose the grid: give --grid and "
        "--tpg)",
        kernel.name);
  }
  if (!missing.empty()) {
    throw UsageError(
        fmt::format("missing {}{}; {}", fmt::join(missing, " "), why_grid, parameters_of(kernel)));
  }
  std::optional<runtime::Dim3> given_groups;
  std::optional<runtime::Dim3> given_tpg;
  if (!o.grid.empty()) given_groups = dim3_of(o.grid, "--grid");
  if (!o.tpg.empty()) given_tpg = dim3_of(o.tpg, "--tpg");
  std::vector<testing::NpyArray> tensors(kernel.params.size());
  std::vector<runtime::Arg> args(kernel.params.size());
  std::vector<std::uint64_t> first_input_shape;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (p.kind == ir::ParamKind::Input || p.kind == ir::ParamKind::InOut) {
      auto it = ins.find(p.name);
      tensors[i] = load_input(p, it->second);
      if (first_input_shape.empty()) first_input_shape = tensors[i].shape;
      ins.erase(it);
    } else if (p.kind == ir::ParamKind::Constexpr) {
      auto it = consts.find(p.name);
      args[i] = parse_constant(p, it->second);
      consts.erase(it);
    }
  }
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (p.kind != ir::ParamKind::Output) continue;
    std::vector<std::uint64_t> shape = first_input_shape;
    if (auto it = shapes.find(p.name); it != shapes.end()) {
      shape = numbers(it->second, fmt::format("--out-shape {}={}", p.name, it->second));
      shapes.erase(it);
    }
    if (shape.empty()) {
      throw UsageError(
          fmt::format("give --out-shape {}=D0[,D1…]: the kernel has no input whose "
                      "shape the output could take",
                      p.name));
    }
    tensors[i].tensor = output_tensor(p, shape);
    tensors[i].shape = shape;
  }
  for (const auto* leftover : {&ins, &consts, &shapes}) {
    if (!leftover->empty()) {
      throw UsageError(fmt::format("{} has no parameter '{}' of that kind; {}", kernel.name,
                                   leftover->begin()->first, parameters_of(kernel)));
    }
  }
  for (const auto& [name, file] : outs) {
    const int index = kernel.find_param(name);
    if (index < 0 || !ir::is_output(kernel.params[static_cast<std::size_t>(index)].kind)) {
      throw UsageError(
          fmt::format("{} has no output '{}'; {}", kernel.name, name, parameters_of(kernel)));
    }
  }
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    if (kernel.params[i].kind != ir::ParamKind::Constexpr) args[i] = &tensors[i].tensor;
  }
  const std::string_view backend_name =
      o.backend == "auto" ? runtime::auto_backend().name : std::string_view(o.backend);
  const runtime::Grid grid =
      launch_grid(kernel, config, args, given_groups, given_tpg, backend_name);
  auto backend = runtime::make_backend(o.backend);
  backend->run({&kernel, args, grid});
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (!ir::is_output(p.kind)) continue;
    try {
      testing::write_npy(outs.at(p.name), tensors[i]);
    } catch (const Error& e) {
      throw UsageError(fmt::format("--out {}: {}", p.name, e.what()));
    }
    fmt::print("wrote {} ({}, shape ({})) to {}\n", p.name,
               p.dtype == DType::BF16 || is_f8(p.dtype)
                   ? fmt::format("{} as f32", dtype_name(p.dtype))
                   : std::string(dtype_name(p.dtype)),
               fmt::join(tensors[i].shape, ", "), outs.at(p.name));
  }
  const bool chosen = !given_groups || !given_tpg;
  fmt::print("ran {} [{}] on {}: {} groups of {} threads{}\n", kernel.name, dtype_name(form.dtype),
             backend->name(), grid.groups.volume(), grid.group_size.volume(),
             chosen ? fmt::format(" (--grid {} --tpg {}, from the kernel's geometry)",
                                  dim3_text(grid.groups), dim3_text(grid.group_size))
                    : "");
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run one kernel on your own data: .npy inputs and outputs and constexprs given on the "
      "command line, on the grid the kernel's geometry chooses (or --grid/--tpg), everything "
      "checked against the kernel's parameters and contract");
  auto o = std::make_shared<RunOptions>();
  cmd->add_option("kernel", o->kernel,
                  "The kernel's name (see `iron list kernels --params`); without the options "
                  "it needs, its parameters are listed")
      ->required();
  cmd->add_option("--in", o->inputs,
                  "NAME=FILE.npy for each input tensor (an f32 file is rounded into an f16 or "
                  "bf16 parameter)");
  cmd->add_option("--out", o->outputs,
                  "NAME=FILE.npy for each output tensor (bf16 is written as f32, which NumPy "
                  "reads; unwritten elements are NaN)");
  cmd->add_option("--out-shape", o->out_shapes,
                  "NAME=D0[,D1…]: an output's shape (default: the first input's shape)");
  cmd->add_option("--const", o->constants, "NAME=VALUE for each constexpr");
  cmd->add_option("--config", o->config,
                  "Trace the kernel, and plan its grid, under this configuration of its tuning "
                  "knobs (NAME=VALUE separated by commas; the rest at their defaults; "
                  "docs/tuning.md)");
  cmd->add_option("--grid", o->grid,
                  "Threadgroups (not threads) per axis: X[,Y[,Z]] (default: the kernel's "
                  "geometry chooses; given, it is used as is)");
  cmd->add_option("--tpg", o->tpg,
                  "Threads per group per axis: X[,Y[,Z]] (default: the kernel's geometry "
                  "chooses; given, it is used as is and the geometry plans the group count "
                  "for it)");
  cmd->add_option("--dtype", o->dtype, "The float type T is bound to (default f32)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  std::vector<std::string> backends = backend_names();
  std::vector<std::string> host;
  for (const runtime::BackendEntry& b : runtime::backends()) {
    if (!b.device) host.emplace_back(b.name);
  }
  cmd->add_option("--backend", o->backend,
                  fmt::format("auto (default: the first GPU backend present, else {}), {}",
                              or_list(host), or_list(backends)))
      ->check(CLI::IsMember([&] {
        backends.insert(backends.begin(), "auto");
        return backends;
      }()));
  return {cmd, [o] { return run(*o); }};
}

}  // namespace iron::cli
