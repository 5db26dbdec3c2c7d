/// Parameter summaries and tables for `iron list --params` and `iron run`'s messages.
#include "kernel_params.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace iron::cli {

std::string param_summary(const dsl::KernelInfo& info) {
  const ir::Kernel first = info.trace(info.dtypes.front());
  const ir::Kernel second = info.dtypes.size() > 1 ? info.trace(info.dtypes[1]) : first;
  std::string out;
  for (std::size_t i = 0; i < first.params.size(); ++i) {
    const ir::Param& p = first.params[i];
    const bool generic = p.dtype != second.params[i].dtype;
    out += fmt::format("{}{} {}: {}", out.empty() ? "" : ", ", ir::param_kind_name(p.kind), p.name,
                       generic ? std::string_view("T") : dtype_name(p.dtype));
  }
  return out;
}

std::string run_option(const ir::Param& p) {
  switch (p.kind) {
    case ir::ParamKind::Input:
      return fmt::format("--in {}=FILE.npy", p.name);
    case ir::ParamKind::Output:
      return fmt::format("--out {}=FILE.npy", p.name);
    case ir::ParamKind::InOut:
      return fmt::format("--in {}=FILE.npy --out {}=FILE.npy", p.name, p.name);
    case ir::ParamKind::Constexpr:
      break;
  }
  return fmt::format("--const {}=VALUE", p.name);
}

std::string param_table(const ir::Kernel& kernel) {
  std::size_t kind_width = 0, name_width = 0;
  for (const ir::Param& p : kernel.params) {
    kind_width = std::max(kind_width, ir::param_kind_name(p.kind).size());
    name_width = std::max(name_width, p.name.size());
  }
  std::string out;
  for (const ir::Param& p : kernel.params) {
    out += fmt::format("  {:<{}}  {:<{}}  {:<4}  {}\n", ir::param_kind_name(p.kind), kind_width,
                       p.name, name_width, dtype_name(p.dtype), run_option(p));
  }
  return out;
}

}  // namespace iron::cli
