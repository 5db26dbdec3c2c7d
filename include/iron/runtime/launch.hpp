/// What one kernel launch needs on any backend: the kernel, its arguments in parameter order,
/// and the grid, counted in threadgroups (groups) and threads per group.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "iron/core/ir.hpp"
#include "iron/core/size_expr.hpp"

namespace iron::runtime {

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint64_t volume() const { return std::uint64_t{x} * y * z; }
};

/// Launch geometry. `groups` is a count of threadgroups, never of threads.
struct Grid {
  Dim3 groups;
  Dim3 group_size;
  /// One thread per element: ceil(n / tpg) groups of tpg threads.
  static Grid elementwise(std::uint64_t n, std::uint32_t tpg);
  /// One group of `tpg` threads per row.
  static Grid per_row(std::uint32_t rows, std::uint32_t tpg);
};

/// A tensor in host memory: raw little-endian elements of `dtype`.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<std::byte> bytes;
  std::size_t count() const { return bytes.size() / dtype_size(dtype); }
};

/// A constexpr argument. Floats are carried in `f`, integers and bools in `i`.
struct Scalar {
  DType dtype = DType::U32;
  double f = 0.0;
  std::int64_t i = 0;
  double as_double() const { return is_float(dtype) ? f : static_cast<double>(i); }
};

/// One argument per kernel parameter, in parameter order: a tensor for Input/Output
/// parameters, a scalar for Constexpr ones.
using Arg = std::variant<HostTensor*, Scalar>;

struct Launch {
  const ir::Kernel* kernel = nullptr;
  std::vector<Arg> args;
  Grid grid;
};

/// The value of host expression `e` of `kernel` (a tensor map's base, height or width) for a
/// launch with `args`: its constexpr leaves are those arguments.
ir::SizeValue evaluate_for_launch(const ir::Kernel& kernel, const std::vector<Arg>& args,
                                  const ir::SizeExpr& e);

}  // namespace iron::runtime
