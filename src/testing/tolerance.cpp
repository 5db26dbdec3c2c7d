/// Error-bound arithmetic for kernel tests: unit roundoffs, γ_k, sum bounds and the tolerance
/// that an f32 result with a known error bound needs once stored in a dtype.
#include "iron/testing/tolerance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "iron/core/error.hpp"

namespace iron::testing::tolerance {
namespace {

/// f32's smallest normal: the most any f32 intermediate that underflows (or is flushed to zero
/// by a GPU) can lose, far above the 2^-150 of a single subnormal rounding.
constexpr double kF32SmallestNormal = 0x1p-126;

void require_float(DType dt) {
  if (!is_float(dt)) {
    throw Error(fmt::format("tolerance: {} is not a float dtype", dtype_name(dt)));
  }
}

}  // namespace

double unit_roundoff(DType dt) {
  require_float(dt);
  switch (dt) {
    case DType::F32:
      return 0x1p-24;
    case DType::F16:
      return 0x1p-11;
    case DType::F8E4M3:
      return 0x1p-4;
    case DType::F8E5M2:
      return 0x1p-3;
    default:
      return 0x1p-8;
  }
}

double underflow(DType dt) {
  require_float(dt);
  switch (dt) {
    case DType::F32:
      return 0x1p-150;
    case DType::F16:
      return 0x1p-25;
    case DType::F8E4M3:
      return 0x1p-10;
    case DType::F8E5M2:
      return 0x1p-17;
    default:
      return 0x1p-134;
  }
}

double gamma(std::size_t k) {
  const double ku = static_cast<double>(k) * unit_roundoff(DType::F32);
  if (ku >= 0.5) {
    throw Error(fmt::format("tolerance: γ_{} is not a useful bound (k·u = {:.3g} ≥ 1/2)", k, ku));
  }
  return ku / (1.0 - ku);
}

double sum_error(std::size_t depth, double abs_sum) { return gamma(depth) * abs_sum; }

std::size_t group_sum_depth(std::size_t n, std::uint32_t tpg, std::size_t lanes) {
  if (n == 0 || tpg == 0 || lanes == 0) return 0;
  const std::size_t runs = (n + lanes - 1) / lanes;
  const std::size_t per_thread = lanes * ((runs + tpg - 1) / tpg);
  return std::min(per_thread - 1 + (tpg - 1), n - 1);
}

std::size_t lanes_per_vector(DType dt) { return 16 / dtype_size(dt); }

double max_row_abs_sum(const std::vector<float>& x, std::size_t rows, std::size_t n) {
  if (x.size() != rows * n) {
    throw Error(fmt::format("tolerance: {} values are not [{}, {}]", x.size(), rows, n));
  }
  double most = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (std::size_t j = 0; j < n; ++j) s += std::fabs(static_cast<double>(x[r * n + j]));
    most = std::max(most, s);
  }
  return most;
}

double max_row_range(const std::vector<float>& x, std::size_t rows, std::size_t n) {
  if (x.size() != rows * n) {
    throw Error(fmt::format("tolerance: {} values are not [{}, {}]", x.size(), rows, n));
  }
  double most = 0.0;
  if (n == 0) return most;
  for (std::size_t r = 0; r < rows; ++r) {
    const auto row = std::span(x).subspan(r * n, n);
    const auto [lo, hi] = std::minmax_element(row.begin(), row.end());
    most = std::max(most, static_cast<double>(*hi) - static_cast<double>(*lo));
  }
  return most;
}

double max_abs(const std::vector<float>& x) {
  double most = 0.0;
  for (const float v : x) most = std::max(most, std::fabs(static_cast<double>(v)));
  return most;
}

Tolerance exact() { return {0.0, 0.0}; }

Tolerance stored(DType dt, double abs_err, double rel_err) {
  const double u32 = unit_roundoff(DType::F32);
  const double eta32 = underflow(DType::F32);
  // f32 results are stored as they are; other dtypes round once more.
  const double u_dt = dt == DType::F32 ? 0.0 : unit_roundoff(dt);
  const double eta_dt = dt == DType::F32 ? 0.0 : underflow(dt);
  // |got − want| ≤ |got − c| + |c − e| + |e − want|, with |c| ≤ (1 + rel)|e| + abs and
  // |e| ≤ (|want| + η32) / (1 − u32).
  const double rtol = (rel_err + u32 + u_dt * (1.0 + rel_err)) / (1.0 - u32);
  const double atol = abs_err * (1.0 + u_dt) + eta_dt + eta32 + rtol * eta32 + kF32SmallestNormal;
  return {atol, rtol};
}

Tolerance correctly_rounded(DType dt) {
  if (dt == DType::F32) return exact();
  return {underflow(dt), unit_roundoff(dt)};
}

Tolerance relative(DType dt, std::size_t k) { return stored(dt, 0.0, gamma(k)); }

}  // namespace iron::testing::tolerance
