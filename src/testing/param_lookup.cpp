/// Parameter lookup shared by TestSetup and BenchSetup.
#include "iron/testing/param_lookup.hpp"

#include <fmt/format.h>

#include "iron/testing/data.hpp"

namespace iron::testing {
namespace {

std::string_view kind_phrase(ir::ParamKind kind) {
  switch (kind) {
    case ir::ParamKind::Input:
      return "input tensor";
    case ir::ParamKind::Output:
      return "output tensor";
    case ir::ParamKind::InOut:
      return "in-out tensor";
    case ir::ParamKind::Constexpr:
      return "constexpr";
  }
  return "parameter";
}

/// The parameter as written in the kernel's signature: "Out<f16> out".
std::string signature_of(const ir::Param& p) {
  const std::string_view wrapper = p.kind == ir::ParamKind::Input    ? "Tensor"
                                   : p.kind == ir::ParamKind::Output ? "Out"
                                   : p.kind == ir::ParamKind::InOut  ? "InOut"
                                                                     : "Constexpr";
  return fmt::format("{}<{}> {}", wrapper, dtype_name(p.dtype), p.name);
}

}  // namespace

const ir::Param& find_param(const ir::Kernel& kernel, const std::string& name, ir::ParamKind kind) {
  const int index = kernel.find_param(name);
  const auto fits = [&](ir::ParamKind have) {
    return have == kind || (kind == ir::ParamKind::Output && ir::is_output(have));
  };
  if (index >= 0 && fits(kernel.params[static_cast<std::size_t>(index)].kind)) {
    return kernel.params[static_cast<std::size_t>(index)];
  }
  std::string listed;
  for (const ir::Param& p : kernel.params) {
    listed += (listed.empty() ? "" : ", ") + signature_of(p);
  }
  const std::string actually =
      index < 0 ? ""
                : fmt::format(" ('{}' is its {})", name,
                              kind_phrase(kernel.params[static_cast<std::size_t>(index)].kind));
  throw Error(fmt::format("kernel {} has no {} '{}'{}; its parameters are: {}", kernel.name,
                          kind_phrase(kind), name, actually, listed));
}

runtime::Scalar constexpr_value(const ir::Kernel& kernel, const ir::Param& param, double value) {
  runtime::Scalar s;
  s.dtype = param.dtype;
  if (is_float(param.dtype)) {
    s.f = round_through({static_cast<float>(value)}, param.dtype).front();
  } else {
    if (!holds_integer(param.dtype, value)) {
      throw Error(fmt::format("kernel {}: constexpr '{}' is {}, which cannot hold {}", kernel.name,
                              param.name, dtype_name(param.dtype), value));
    }
    s.i = static_cast<std::int64_t>(value);
  }
  return s;
}

}  // namespace iron::testing
