/// TestSetup: everything one kernel test needs: the traced kernel, inputs, outputs (poisoned
/// before each run), constexprs, expected outputs and the grid. Inputs are given in f32 and
/// packed into each parameter's dtype; round_through() gives the oracle the same values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "iron/core/ir.hpp"
#include "iron/dsl/tuning.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::testing {

/// Absolute and relative tolerance: |got - want| <= atol + rtol * |want|. NaN never passes.
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

class TestSetup {
 public:
  /// Traces kernel `kernel` with T = dtype, under tuning configuration `config` (the kernel's
  /// knobs it leaves out at their defaults; iron/dsl/tuning.hpp).
  TestSetup(const std::string& kernel, DType dtype, const dsl::TuningConfig& config = {});

  /// An input tensor; values are converted to the parameter's dtype (rounding floats).
  TestSetup& input(const std::string& name, const std::vector<float>& values);
  /// An input of integer data (indices, packed weights), converted to the parameter's dtype.
  TestSetup& input_u32(const std::string& name, const std::vector<std::uint32_t>& values);
  /// An output tensor (Out or InOut) of `count` elements; an Out is filled with NaN (or 0xFF
  /// bytes) before each run.
  TestSetup& output(const std::string& name, std::size_t count);
  /// The values InOut tensor `name` holds before the run: for a kernel that updates it in place
  /// or writes only part of it (a cache append). Its expected values must then say what the
  /// untouched elements keep. Required for an InOut tensor; refused for an Out, whose contents
  /// are undefined at entry.
  TestSetup& initial(const std::string& name, const std::vector<float>& values);
  /// A constexpr value, converted to the parameter's dtype.
  TestSetup& constant(const std::string& name, double value);
  /// The values an output must hold after the run.
  TestSetup& expect(const std::string& name, const std::vector<float>& values);
  /// The tolerance of every output, derived from the kernel's error bound for this shape and
  /// data (iron/testing/tolerance.hpp); overrides a tolerance registered with the dtype.
  TestSetup& tolerance(Tolerance tol);
  /// The tolerance of output `name` alone, for a kernel whose outputs have different bounds;
  /// overrides tolerance(tol) for that output.
  TestSetup& tolerance(const std::string& name, Tolerance tol);
  TestSetup& grid(runtime::Grid g);
  /// Elementwise: ceil(n / tpg) groups of tpg threads.
  TestSetup& grid_1d(std::uint64_t n, std::uint32_t tpg);
  /// One group of tpg threads per row.
  TestSetup& grid_rows(std::uint32_t rows, std::uint32_t tpg);
  /// The grid set so far with `count` groups along x alone (a persistent kernel's launch over
  /// fewer groups than its tiles, so that each runs on from tile to tile); an error before a
  /// grid is set.
  TestSetup& groups(std::uint32_t count);

  const ir::Kernel& kernel() const { return kernel_; }
  /// The tuning configuration the kernel was traced under (its geometry plans with it).
  const dsl::TuningConfig& tuning() const { return tuning_; }
  const runtime::Grid& launch_grid() const { return grid_; }
  /// Whether grid(), grid_1d() or grid_rows() was called.
  bool has_grid() const { return grid_set_; }
  const std::map<std::string, runtime::HostTensor>& inputs() const { return inputs_; }
  const std::map<std::string, std::size_t>& outputs() const { return outputs_; }
  /// Outputs given initial() values, packed in their parameter's dtype.
  const std::map<std::string, runtime::HostTensor>& initial_values() const { return initial_; }
  const std::map<std::string, runtime::Scalar>& constants() const { return constants_; }
  const std::map<std::string, std::vector<float>>& expected() const { return expected_; }
  bool has_tolerance() const { return has_tolerance_; }
  Tolerance tolerance_override() const { return tolerance_; }
  /// Outputs given their own tolerance.
  const std::map<std::string, Tolerance>& output_tolerances() const { return output_tolerances_; }

 private:
  const ir::Param& param(const std::string& name, ir::ParamKind kind) const;
  ir::Kernel kernel_;
  dsl::TuningConfig tuning_;
  std::map<std::string, runtime::HostTensor> inputs_;
  std::map<std::string, std::size_t> outputs_;
  std::map<std::string, runtime::HostTensor> initial_;
  std::map<std::string, runtime::Scalar> constants_;
  std::map<std::string, std::vector<float>> expected_;
  runtime::Grid grid_;
  bool grid_set_ = false;
  bool has_tolerance_ = false;
  Tolerance tolerance_;
  std::map<std::string, Tolerance> output_tolerances_;
};

}  // namespace iron::testing
