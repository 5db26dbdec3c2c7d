/// BenchSetup: everything one kernel benchmark needs: the traced kernel, its buffers (random
/// inputs, outputs), constexprs, the grid, the work it does (bytes moved, FLOPs), the case the
/// peers script times with PyTorch / Triton, an optional hand-written CUDA reference and an
/// optional library call (cuBLAS) timed in the same process.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "iron/core/ir.hpp"
#include "iron/runtime/launch.hpp"
#include "iron/testing/test_setup.hpp"

namespace iron::bench {

/// How a bench input is filled on the host before it is uploaded once.
struct BenchFill {
  enum class Kind { Uniform, Values, Words } kind = Kind::Uniform;
  float lo = -1.0f, hi = 1.0f;             ///< Uniform: values in [lo, hi), rounded to the dtype
  std::vector<float> values;               ///< Values: given, converted to the dtype
  std::vector<std::uint32_t> words;        ///< Words: integer data (indices, packed weights)
  std::uint32_t word_lo = 0, word_hi = 0;  ///< Words with no list: uniform integers [lo, hi)
  std::size_t count = 0;
};

/// One argument of a reference kernel: the name of a bench buffer or constexpr (the same data
/// Iron's kernel gets), or a scalar of its own (see u32_arg).
using ReferenceArg = std::variant<std::string, runtime::Scalar>;
inline runtime::Scalar u32_arg(std::uint32_t v) { return {DType::U32, 0.0, v}; }

/// A hand-written CUDA kernel timed beside Iron's and checked against it: its arguments in its
/// own parameter order, its grid, and the tolerance for comparing its outputs with Iron's. The
/// source is compiled by NVRTC with IRON_REF_T defined as the bench dtype's CUDA type.
struct CudaReference {
  std::string name;    ///< shown in the report ("hand-written CUDA", "cub")
  std::string source;  ///< CUDA C++ for NVRTC; may use the dtype macro IRON_REF_T
  std::string symbol;  ///< the extern "C" __global__ function
  std::vector<ReferenceArg> args;
  runtime::Grid grid;
  testing::Tolerance tolerance{1e-2, 1e-2};
};

/// A matrix operand of a library reference: a bench input by name (the data Iron's kernel gets,
/// rotated with it), or values of its own, converted to the bench dtype and uploaded once.
struct MatrixOperand {
  std::string input;          ///< a bench input's name; empty when `values` are given
  std::vector<float> values;  ///< row-major, exactly the operand's element count
};

/// A cuBLAS matrix product timed beside Iron's kernel in the same process (device events, the
/// same stream) and checked against one of its outputs: row-major
/// `output[m, n] = alpha · a[m, k] @ b[k, n]`, every matrix in the bench dtype, accumulated in f32
/// (cublasGemmEx). With n = 1 it is a matrix-vector product.
struct LibraryReference {
  std::string name;  ///< shown in the report ("x @ H (cuBLAS)")
  std::uint32_t m = 0, n = 0, k = 0;
  MatrixOperand a, b;
  std::string output;  ///< the Iron output it is compared with; m · n elements
  float alpha = 1.0f;
  testing::Tolerance tolerance{1e-2, 1e-2};
  bool b_transposed = false;  ///< b is [n, k] (a linear layer's weight): output = alpha · a @ bᵀ
};

class BenchSetup {
 public:
  /// Traces kernel `kernel` with T = dtype, its tuning knobs at their defaults.
  BenchSetup(const std::string& kernel, DType dtype);
  /// Traces the kernel again under tuning configuration `config` (iron/dsl/tuning.hpp; knobs it
  /// leaves out at their defaults) and, when a grid was set, plans it again from the kernel's
  /// geometry under `config`: what `iron bench --tuning` does with a tuning file's entry.
  BenchSetup& tune(const dsl::TuningConfig& config);

  /// An input of `count` values uniform in [lo, hi), in the parameter's dtype.
  BenchSetup& random(const std::string& name, std::size_t count, float lo = -1.0f, float hi = 1.0f);
  /// An input with the given values (converted to the parameter's dtype).
  BenchSetup& input(const std::string& name, const std::vector<float>& values);
  /// An input of integer data given word by word.
  BenchSetup& input_u32(const std::string& name, const std::vector<std::uint32_t>& words);
  /// An input of `count` integers uniform in [lo, hi) (indices, packed weights).
  BenchSetup& random_u32(const std::string& name, std::size_t count, std::uint32_t lo,
                         std::uint32_t hi);
  /// An output of `count` elements.
  BenchSetup& output(const std::string& name, std::size_t count);
  /// Outputs that the kernel writes only in part (a cache append, a scatter): the runner then
  /// skips its check that every output element was written.
  BenchSetup& partial_outputs();
  BenchSetup& constant(const std::string& name, double value);
  BenchSetup& grid(runtime::Grid g);
  BenchSetup& grid_1d(std::uint64_t n, std::uint32_t tpg);
  BenchSetup& grid_rows(std::uint32_t rows, std::uint32_t tpg);
  /// The fewest bytes the kernel must move through device memory: each input read once, each
  /// output written once (small constexprs not counted).
  BenchSetup& bytes_moved(std::uint64_t bytes);
  /// Floating-point operations the kernel must do (0 for pure data movement).
  BenchSetup& flops(std::uint64_t count);
  /// The case the peers script times, by operation name and named dimensions, e.g.
  /// peer("softmax", {{"rows", 4096}, {"n", 4096}}). The script knows each operation.
  BenchSetup& peer(const std::string& op, std::map<std::string, double> dims);
  BenchSetup& reference(CudaReference ref);
  /// A library call timed and checked beside the kernel (see LibraryReference); its names and
  /// own values are checked here, its sizes against the buffers by check_library_reference.
  BenchSetup& library_reference(LibraryReference ref);

  const ir::Kernel& kernel() const { return kernel_; }
  /// The tuning configuration the kernel was traced under.
  const dsl::TuningConfig& tuning() const { return tuning_; }
  DType dtype() const { return dtype_; }
  const std::map<std::string, BenchFill>& inputs() const { return inputs_; }
  const std::map<std::string, std::size_t>& outputs() const { return outputs_; }
  const std::map<std::string, runtime::Scalar>& constants() const { return constants_; }
  const runtime::Grid& launch_grid() const { return grid_; }
  bool has_grid() const { return grid_set_; }
  bool checks_every_output() const { return !partial_outputs_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t flop_count() const { return flops_; }
  const std::string& peer_op() const { return peer_op_; }
  const std::map<std::string, double>& peer_dims() const { return peer_dims_; }
  const std::optional<CudaReference>& cuda_reference() const { return reference_; }
  const std::optional<LibraryReference>& library_call() const { return library_; }

 private:
  const ir::Param& param(const std::string& name, ir::ParamKind kind) const;
  BenchSetup& fill(const std::string& name, BenchFill f);
  ir::Kernel kernel_;
  dsl::TuningConfig tuning_;
  DType dtype_;
  std::map<std::string, BenchFill> inputs_;
  std::map<std::string, std::size_t> outputs_;
  std::map<std::string, runtime::Scalar> constants_;
  runtime::Grid grid_;
  bool grid_set_ = false;
  bool partial_outputs_ = false;
  std::uint64_t bytes_ = 0;
  std::uint64_t flops_ = 0;
  std::string peer_op_;
  std::map<std::string, double> peer_dims_;
  std::optional<CudaReference> reference_;
  std::optional<LibraryReference> library_;
};

/// What is wrong with the setup's library reference given its buffers ("" when nothing, or when
/// it has none): an input operand smaller than its matrix, an output not of m · n elements.
std::string check_library_reference(const BenchSetup& setup);

}  // namespace iron::bench
