/// TestSetup: traces the kernel under test and checks every name given against its parameters.
#include "iron/testing/test_setup.hpp"

#include <fmt/format.h>

#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/param_lookup.hpp"

namespace iron::testing {

TestSetup::TestSetup(const std::string& kernel, DType dtype, const dsl::TuningConfig& config)
    : kernel_(dsl::kernel_ir_for(kernel, dtype, config)), tuning_(config) {}

const ir::Param& TestSetup::param(const std::string& name, ir::ParamKind kind) const {
  return find_param(kernel_, name, kind);
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

TestSetup& TestSetup::initial(const std::string& name, const std::vector<float>& values) {
  const ir::Param& p = param(name, ir::ParamKind::Output);
  if (p.kind == ir::ParamKind::Output) {
    throw Error(
        fmt::format("kernel {}: initial(\"{}\"): '{}' is an Out<{}>, whose contents are "
                    "undefined at kernel entry; declare it InOut<{}> if the kernel reads "
                    "or keeps what it holds",
                    kernel_.name, name, name, dtype_name(p.dtype), dtype_name(p.dtype)));
  }
  set_once(initial_, kernel_.name, name, pack(values, p.dtype), "initial values of output");
  return *this;
}

TestSetup& TestSetup::constant(const std::string& name, double value) {
  const ir::Param& p = param(name, ir::ParamKind::Constexpr);
  const runtime::Scalar s = constexpr_value(kernel_, p, value);
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

TestSetup& TestSetup::tolerance(const std::string& name, Tolerance tol) {
  param(name, ir::ParamKind::Output);
  set_once(output_tolerances_, kernel_.name, name, tol, "tolerance of output");
  return *this;
}

TestSetup& TestSetup::grid(runtime::Grid g) {
  grid_ = g;
  grid_set_ = true;
  return *this;
}

TestSetup& TestSetup::groups(std::uint32_t count) {
  if (!grid_set_) {
    throw Error(fmt::format("kernel {}: groups({}) changes a grid, but none is set yet",
                            kernel_.name, count));
  }
  runtime::Grid g = grid_;
  g.groups = {count, 1, 1};
  return grid(g);
}

TestSetup& TestSetup::grid_1d(std::uint64_t n, std::uint32_t tpg) {
  return grid(runtime::Grid::elementwise(n, tpg));
}

TestSetup& TestSetup::grid_rows(std::uint32_t rows, std::uint32_t tpg) {
  return grid(runtime::Grid::per_row(rows, tpg));
}

}  // namespace iron::testing
