/// `iron run KERNEL --in x=a.npy --out y=b.npy --const n=… --grid … --tpg …`: runs any kernel
/// on the user's own data, with names, dtypes and shapes checked against the kernel.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/npy.hpp"
#include "kernel_selection.hpp"

namespace iron::cli {
namespace {

struct RunOptions {
  std::string kernel;
  std::string dtype = "f32";
  std::string backend = "auto";
  std::vector<std::string> inputs, outputs, constants, out_shapes;
  std::string grid, tpg;
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

std::vector<std::uint64_t> numbers(const std::string& text, const char* what) {
  std::vector<std::uint64_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string part = text.substr(start, comma - start);
    try {
      std::size_t used = 0;
      out.push_back(std::stoull(part, &used));
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw UsageError(fmt::format("{} takes numbers separated by commas, not '{}'", what, text));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

runtime::Dim3 dim3_of(const std::string& text, const char* what) {
  const auto v = numbers(text, what);
  if (v.empty() || v.size() > 3) throw UsageError(fmt::format("{} takes 1 to 3 numbers", what));
  runtime::Dim3 d;
  d.x = static_cast<std::uint32_t>(v[0]);
  if (v.size() > 1) d.y = static_cast<std::uint32_t>(v[1]);
  if (v.size() > 2) d.z = static_cast<std::uint32_t>(v[2]);
  return d;
}

std::string param_list(const ir::Kernel& k) {
  std::vector<std::string> parts;
  for (const auto& p : k.params) {
    parts.push_back(
        fmt::format("{} {}: {}", ir::param_kind_name(p.kind), p.name, dtype_name(p.dtype)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

/// The input tensor for parameter `p` from `path`; an f32 file is rounded into f16/bf16.
testing::NpyArray load_input(const ir::Param& p, const std::string& path) {
  testing::NpyArray a = testing::read_npy(path);
  if (a.tensor.dtype == p.dtype) return a;
  if (a.tensor.dtype == DType::F32 && (p.dtype == DType::F16 || p.dtype == DType::BF16)) {
    a.tensor = testing::pack(testing::unpack(a.tensor), p.dtype);
    return a;
  }
  throw UsageError(fmt::format("--in {}={}: the file holds {} but '{}' is {}{}", p.name, path,
                               dtype_name(a.tensor.dtype), p.name, dtype_name(p.dtype),
                               is_float(p.dtype) ? " (an f32 file is also accepted)" : ""));
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
  const ir::Kernel kernel = form.info->trace(form.dtype);
  auto ins = pairs(o.inputs, "--in");
  auto outs = pairs(o.outputs, "--out");
  auto consts = pairs(o.constants, "--const");
  auto shapes = pairs(o.out_shapes, "--out-shape");
  std::vector<testing::NpyArray> tensors(kernel.params.size());
  std::vector<runtime::Arg> args(kernel.params.size());
  std::vector<std::uint64_t> first_input_shape;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (p.kind == ir::ParamKind::Input) {
      auto it = ins.find(p.name);
      if (it == ins.end()) throw UsageError(fmt::format("missing --in {}=FILE.npy", p.name));
      tensors[i] = load_input(p, it->second);
      if (first_input_shape.empty()) first_input_shape = tensors[i].shape;
      ins.erase(it);
    } else if (p.kind == ir::ParamKind::Constexpr) {
      auto it = consts.find(p.name);
      if (it == consts.end()) throw UsageError(fmt::format("missing --const {}=VALUE", p.name));
      args[i] = parse_constant(p, it->second);
      consts.erase(it);
    }
  }
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (p.kind != ir::ParamKind::Output) continue;
    if (!outs.contains(p.name)) throw UsageError(fmt::format("missing --out {}=FILE.npy", p.name));
    std::vector<std::uint64_t> shape = first_input_shape;
    if (auto it = shapes.find(p.name); it != shapes.end()) {
      shape = numbers(it->second, "--out-shape");
      shapes.erase(it);
    }
    if (shape.empty()) {
      throw UsageError(
          fmt::format("give --out-shape {}=D0[,D1…]: the kernel has no input whose "
                      "shape the output could take",
                      p.name));
    }
    std::uint64_t count = 1;
    for (auto d : shape) count *= d;
    // Poisoned like test outputs, so elements the kernel never writes come back as NaN.
    tensors[i].tensor = testing::poisoned(p.dtype, count);
    tensors[i].shape = shape;
  }
  for (const auto* leftover : {&ins, &consts, &shapes}) {
    if (!leftover->empty()) {
      throw UsageError(
          fmt::format("kernel {} has no parameter '{}' of that kind; its parameters "
                      "are: {}",
                      kernel.name, leftover->begin()->first, param_list(kernel)));
    }
  }
  for (const auto& [name, file] : outs) {
    const int index = kernel.find_param(name);
    if (index < 0 || kernel.params[static_cast<std::size_t>(index)].kind != ir::ParamKind::Output) {
      throw UsageError(fmt::format("kernel {} has no output '{}'; its parameters are: {}",
                                   kernel.name, name, param_list(kernel)));
    }
  }
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    if (kernel.params[i].kind != ir::ParamKind::Constexpr) args[i] = &tensors[i].tensor;
  }
  auto backend = runtime::make_backend(o.backend);
  const runtime::Grid grid{dim3_of(o.grid, "--grid"), dim3_of(o.tpg, "--tpg")};
  backend->run({&kernel, args, grid});
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (p.kind != ir::ParamKind::Output) continue;
    testing::write_npy(outs.at(p.name), tensors[i]);
    fmt::print("wrote {} ({}, shape ({})) to {}\n", p.name,
               p.dtype == DType::BF16 ? "bf16 as f32" : std::string(dtype_name(p.dtype)),
               fmt::join(tensors[i].shape, ", "), outs.at(p.name));
  }
  fmt::print("ran {} [{}] on {}: {} groups of {} threads\n", kernel.name, dtype_name(form.dtype),
             backend->name(), grid.groups.volume(), grid.group_size.volume());
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run one kernel on your own data: .npy inputs and outputs, constexprs and the grid given "
      "on the command line, everything checked against the kernel's parameters and contract");
  auto o = std::make_shared<RunOptions>();
  cmd->add_option("kernel", o->kernel, "The kernel's name (see `iron list kernels`)")->required();
  cmd->add_option("--in", o->inputs,
                  "NAME=FILE.npy for each input tensor (an f32 file is rounded into an f16 or "
                  "bf16 parameter)");
  cmd->add_option("--out", o->outputs,
                  "NAME=FILE.npy for each output tensor (bf16 is written as f32, which NumPy "
                  "reads; unwritten elements are NaN)");
  cmd->add_option("--out-shape", o->out_shapes,
                  "NAME=D0[,D1…]: an output's shape (default: the first input's shape)");
  cmd->add_option("--const", o->constants, "NAME=VALUE for each constexpr");
  cmd->add_option("--grid", o->grid, "Threadgroups (not threads) per axis: X[,Y[,Z]]")->required();
  cmd->add_option("--tpg", o->tpg, "Threads per group per axis: X[,Y[,Z]]")->required();
  cmd->add_option("--dtype", o->dtype, "The float type T is bound to (default f32)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  cmd->add_option("--backend", o->backend, "auto (default), sim or cuda")
      ->check(CLI::IsMember({"auto", "sim", "cuda", "metal"}));
  return {cmd, [o] { return run(*o); }};
}

}  // namespace iron::cli
