/// TestSetup: traces the kernel under test and checks every name given against its parameters.
#include "iron/testing/test_setup.hpp"

#include <fmt/format.h>

#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/testing/data.hpp"

namespace iron::testing {
namespace {

std::string_view kind_phrase(ir::ParamKind kind) {
  switch (kind) {
    case ir::ParamKind::Input:
      return "input tensor";
    case ir::ParamKind::Output:
      return "output tensor";
    case ir::ParamKind::Constexpr:
      return "constexpr";
  }
  return "parameter";
}

/// The parameter as written in the kernel's signature: "Out<f16> out".
std::string signature_of(const ir::Param& p) {
  const std::string_view wrapper = p.kind == ir::ParamKind::Input    ? "Tensor"
                                   : p.kind == ir::ParamKind::Output ? "Out"
                                                                     : "Constexpr";
  return fmt::format("{}<{}> {}", wrapper, dtype_name(p.dtype), p.name);
}

/// `map[name] = value`, refusing a second value for the same name.
template <class Map, class V>
void set_once(Map& map, const std::string& kernel, const std::string& name, V&& value,
              std::string_view what) {
  if (!map.emplace(name, std::forward<V>(value)).second) {
    throw Error(fmt::format("kernel {}: {} '{}' is given twice", kernel, what, name));
  }
}

}  // namespace

TestSetup::TestSetup(const std::string& kernel, DType dtype)
    : kernel_(dsl::kernel_ir_for(kernel, dtype)) {}

const ir::Param& TestSetup::param(const std::string& name, ir::ParamKind kind) const {
  const int index = kernel_.find_param(name);
  if (index >= 0 && kernel_.params[static_cast<std::size_t>(index)].kind == kind) {
    return kernel_.params[static_cast<std::size_t>(index)];
  }
  std::string listed;
  for (const ir::Param& p : kernel_.params) {
    listed += (listed.empty() ? "" : ", ") + signature_of(p);
  }
  const std::string actually =
      index < 0 ? ""
                : fmt::format(" ('{}' is its {})", name,
                              kind_phrase(kernel_.params[static_cast<std::size_t>(index)].kind));
  throw Error(fmt::format("kernel {} has no {} '{}'{}; its parameters are: {}", kernel_.name,
                          kind_phrase(kind), name, actually, listed));
}

TestSetup& TestSetup::input(const std::string& name, const std::vector<float>& values) {
  const ir::Param& p = param(name, ir::ParamKind::Input);
  set_once(inputs_, kernel_.name, name, pack(values, p.dtype), "input");
  return *this;
}

TestSetup& TestSetup::input_u32(const std::string& name, const std::vector<std::uint32_t>& values) {
  const ir::Param& p = param(name, ir::ParamKind::Input);
  set_once(inputs_, kernel_.name, name, pack_u32(values, p.dtype), "input");
  return *this;
}

TestSetup& TestSetup::output(const std::string& name, std::size_t count) {
  param(name, ir::ParamKind::Output);
  set_once(outputs_, kernel_.name, name, count, "output");
  return *this;
}

TestSetup& TestSetup::constant(const std::string& name, double value) {
  const ir::Param& p = param(name, ir::ParamKind::Constexpr);
  runtime::Scalar s;
  s.dtype = p.dtype;
  if (is_float(p.dtype)) {
    s.f = round_through({static_cast<float>(value)}, p.dtype).front();
  } else {
    if (!holds_integer(p.dtype, value)) {
      throw Error(fmt::format("kernel {}: constexpr '{}' is {}, which cannot hold {}", kernel_.name,
                              name, dtype_name(p.dtype), value));
    }
    s.i = static_cast<std::int64_t>(value);
  }
  set_once(constants_, kernel_.name, name, s, "constexpr");
  return *this;
}

TestSetup& TestSetup::expect(const std::string& name, const std::vector<float>& values) {
  param(name, ir::ParamKind::Output);
  set_once(expected_, kernel_.name, name, values, "expected values of output");
  return *this;
}

TestSetup& TestSetup::tolerance(Tolerance tol) {
  tolerance_ = tol;
  has_tolerance_ = true;
  return *this;
}

TestSetup& TestSetup::grid(runtime::Grid g) {
  grid_ = g;
  grid_set_ = true;
  return *this;
}

TestSetup& TestSetup::grid_1d(std::uint64_t n, std::uint32_t tpg) {
  return grid(runtime::Grid::elementwise(n, tpg));
}

TestSetup& TestSetup::grid_rows(std::uint32_t rows, std::uint32_t tpg) {
  return grid(runtime::Grid::per_row(rows, tpg));
}

}  // namespace iron::testing
