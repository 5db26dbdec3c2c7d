/// BenchSetup: traces the kernel measured and checks every name given against its parameters.
#include "iron/bench/setup.hpp"

#include <fmt/format.h>

#include <tuple>

#include "iron/bench/geometry.hpp"
#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/testing/param_lookup.hpp"

namespace iron::bench {

BenchSetup::BenchSetup(const std::string& kernel, DType dtype)
    : kernel_(dsl::kernel_ir_for(kernel, dtype)), dtype_(dtype) {}

BenchSetup& BenchSetup::tune(const dsl::TuningConfig& config) {
  kernel_ = dsl::kernel_ir_for(kernel_.name, dtype_, config);
  tuning_ = config;
  if (grid_set_) grid_ = geometry_grid(*this);
  return *this;
}

const ir::Param& BenchSetup::param(const std::string& name, ir::ParamKind kind) const {
  return testing::find_param(kernel_, name, kind);
}

BenchSetup& BenchSetup::fill(const std::string& name, BenchFill f) {
  param(name, ir::ParamKind::Input);
  if (f.count == 0) throw Error(fmt::format("kernel {}: input '{}' is empty", kernel_.name, name));
  testing::set_once(inputs_, kernel_.name, name, std::move(f), "input");
  return *this;
}

BenchSetup& BenchSetup::random(const std::string& name, std::size_t count, float lo, float hi) {
  if (!(lo < hi)) {
    throw Error(fmt::format("kernel {}: input '{}' needs lo < hi, got [{}, {})", kernel_.name, name,
                            lo, hi));
  }
  BenchFill f;
  f.lo = lo;
  f.hi = hi;
  f.count = count;
  return fill(name, std::move(f));
}

BenchSetup& BenchSetup::input(const std::string& name, const std::vector<float>& values) {
  BenchFill f;
  f.kind = BenchFill::Kind::Values;
  f.values = values;
  f.count = values.size();
  return fill(name, std::move(f));
}

BenchSetup& BenchSetup::input_u32(const std::string& name,
                                  const std::vector<std::uint32_t>& words) {
  BenchFill f;
  f.kind = BenchFill::Kind::Words;
  f.words = words;
  f.count = words.size();
  return fill(name, std::move(f));
}

BenchSetup& BenchSetup::random_u32(const std::string& name, std::size_t count, std::uint32_t lo,
                                   std::uint32_t hi) {
  if (!(lo < hi)) {
    throw Error(fmt::format("kernel {}: input '{}' needs lo < hi, got [{}, {})", kernel_.name, name,
                            lo, hi));
  }
  BenchFill f;
  f.kind = BenchFill::Kind::Words;
  f.word_lo = lo;
  f.word_hi = hi;
  f.count = count;
  return fill(name, std::move(f));
}

BenchSetup& BenchSetup::output(const std::string& name, std::size_t count) {
  param(name, ir::ParamKind::Output);
  if (count == 0) throw Error(fmt::format("kernel {}: output '{}' is empty", kernel_.name, name));
  testing::set_once(outputs_, kernel_.name, name, count, "output");
  return *this;
}

BenchSetup& BenchSetup::partial_outputs() {
  partial_outputs_ = true;
  return *this;
}

BenchSetup& BenchSetup::constant(const std::string& name, double value) {
  const ir::Param& p = param(name, ir::ParamKind::Constexpr);
  testing::set_once(constants_, kernel_.name, name, testing::constexpr_value(kernel_, p, value),
                    "constexpr");
  return *this;
}

BenchSetup& BenchSetup::grid(runtime::Grid g) {
  grid_ = g;
  grid_set_ = true;
  return *this;
}

BenchSetup& BenchSetup::grid_1d(std::uint64_t n, std::uint32_t tpg) {
  return grid(runtime::Grid::elementwise(n, tpg));
}

BenchSetup& BenchSetup::grid_rows(std::uint32_t rows, std::uint32_t tpg) {
  return grid(runtime::Grid::per_row(rows, tpg));
}

BenchSetup& BenchSetup::bytes_moved(std::uint64_t bytes) {
  bytes_ = bytes;
  return *this;
}

BenchSetup& BenchSetup::flops(std::uint64_t count) {
  flops_ = count;
  return *this;
}

BenchSetup& BenchSetup::peer(const std::string& op, std::map<std::string, double> dims) {
  peer_op_ = op;
  peer_dims_ = std::move(dims);
  return *this;
}

BenchSetup& BenchSetup::reference(CudaReference ref) {
  for (const ReferenceArg& a : ref.args) {
    const auto* arg = std::get_if<std::string>(&a);
    if (arg != nullptr && kernel_.find_param(*arg) < 0) {
      throw Error(fmt::format("kernel {}: reference {} names '{}', which is not a parameter",
                              kernel_.name, ref.name, *arg));
    }
  }
  reference_ = std::move(ref);
  return *this;
}

namespace {

/// "" or what is wrong with operand `what` ("a", "b") of `rows` × `cols` elements in `dtype`.
std::string operand_problem(const ir::Kernel& kernel, DType dtype, const MatrixOperand& operand,
                            const char* what, std::uint64_t rows, std::uint64_t cols) {
  if (operand.input.empty() == operand.values.empty()) {
    return fmt::format("operand {} needs either an input's name or values of its own", what);
  }
  if (operand.input.empty()) {
    return operand.values.size() == rows * cols
               ? ""
               : fmt::format("operand {} has {} values; {} × {} needs {}", what,
                             operand.values.size(), rows, cols, rows * cols);
  }
  const int param = kernel.find_param(operand.input);
  if (param < 0 || kernel.params[static_cast<std::size_t>(param)].kind != ir::ParamKind::Input) {
    return fmt::format("operand {} names '{}', which is not an input", what, operand.input);
  }
  const DType held = kernel.params[static_cast<std::size_t>(param)].dtype;
  return held == dtype ? ""
                       : fmt::format("operand {}: input '{}' holds {}, the product takes {}", what,
                                     operand.input, dtype_name(held), dtype_name(dtype));
}

}  // namespace

BenchSetup& BenchSetup::library_reference(LibraryReference ref) {
  const auto fail = [&](const std::string& why) {
    return Error(fmt::format("kernel {}: library reference {}: {}", kernel_.name, ref.name, why));
  };
  if (ref.m == 0 || ref.n == 0 || ref.k == 0) {
    throw fail(fmt::format("m, n and k must be positive, got {}, {}, {}", ref.m, ref.n, ref.k));
  }
  for (const std::string& problem : {operand_problem(kernel_, dtype_, ref.a, "a", ref.m, ref.k),
                                     operand_problem(kernel_, dtype_, ref.b, "b", ref.k, ref.n)}) {
    if (!problem.empty()) throw fail(problem);
  }
  const int out = kernel_.find_param(ref.output);
  if (out < 0 || kernel_.params[static_cast<std::size_t>(out)].kind != ir::ParamKind::Output) {
    throw fail(fmt::format("'{}' is not an output", ref.output));
  }
  if (const DType held = kernel_.params[static_cast<std::size_t>(out)].dtype; held != dtype_) {
    throw fail(fmt::format("output '{}' holds {}, the product writes {}", ref.output,
                           dtype_name(held), dtype_name(dtype_)));
  }
  library_ = std::move(ref);
  return *this;
}

std::string check_library_reference(const BenchSetup& setup) {
  if (!setup.library_call()) return "";
  const LibraryReference& ref = *setup.library_call();
  const auto problem = [&](const std::string& why) {
    return fmt::format("library reference {}: {}", ref.name, why);
  };
  const std::uint64_t m = ref.m;
  const std::uint64_t n = ref.n;
  const std::uint64_t k = ref.k;
  for (const auto& [operand, what, need] :
       {std::tuple{&ref.a, "a", m * k}, std::tuple{&ref.b, "b", k * n}}) {
    if (operand->input.empty()) continue;
    const auto found = setup.inputs().find(operand->input);
    if (found == setup.inputs().end()) {
      return problem(fmt::format("operand {}: input '{}' is not given", what, operand->input));
    }
    if (found->second.count < need) {
      return problem(fmt::format("operand {}: input '{}' holds {} elements; the product reads {}",
                                 what, operand->input, found->second.count, need));
    }
  }
  const auto out = setup.outputs().find(ref.output);
  if (out == setup.outputs().end()) {
    return problem(fmt::format("output '{}' is not given", ref.output));
  }
  if (out->second != m * n) {
    return problem(fmt::format("output '{}' holds {} elements; the product writes {} × {} = {}",
                               ref.output, out->second, m, n, m * n));
  }
  return "";
}

}  // namespace iron::bench
