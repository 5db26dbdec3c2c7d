/// The gemm family's test oracle, from the definition in double: shared by the tests of every
/// form (plain, batched, fused epilogues). Test code only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace iron::kernels {

/// The definition, in double: out[i, j] = alpha · Σ_p a[i, p] · b(p, j).
inline std::vector<float> gemm_oracle(const std::vector<float>& a, const std::vector<float>& b,
                                      std::size_t m, std::size_t n, std::size_t k, bool b_rows,
                                      double alpha) {
  std::vector<float> out(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        sum += double(a[i * k + p]) * double(b_rows ? b[p * n + j] : b[j * k + p]);
      }
      out[i * n + j] = static_cast<float>(alpha * sum);
    }
  }
  return out;
}

/// The largest Σ_p |a[i, p] · b(p, j)|: the scale of the error bound.
inline double max_abs_dot(const std::vector<float>& a, const std::vector<float>& b, std::size_t m,
                          std::size_t n, std::size_t k, bool b_rows) {
  std::vector<float> abs_a(a.size());
  std::vector<float> abs_b(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) abs_a[i] = std::fabs(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) abs_b[i] = std::fabs(b[i]);
  const std::vector<float> sums = gemm_oracle(abs_a, abs_b, m, n, k, b_rows, 1.0);
  return sums.empty() ? 0.0 : *std::max_element(sums.begin(), sums.end());
}

/// A product's expected output and its error bound's scales: the largest S = Σ_p |a[i, p] ·
/// w(i, j, p)| and the largest X = Σ_p |a[i, p]|.
struct ProductExpected {
  std::vector<float> out;
  double s = 0.0;
  double x = 0.0;
};

/// The definition in double, out[i, j] = Σ_p a[i, p] · w(i, j, p) for a [m, k], with the scales
/// of the error bound: for weights that are not a plain matrix (decoded from codes, or an
/// expert's per row).
template <class Weight>
ProductExpected product_oracle(const std::vector<float>& a, std::size_t m, std::size_t n,
                               std::size_t k, Weight&& w) {
  ProductExpected e;
  e.out.resize(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    double row = 0.0;
    for (std::size_t p = 0; p < k; ++p) row += std::fabs(double{a[i * k + p]});
    e.x = std::max(e.x, row);
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      double magnitude = 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        const double product = double{a[i * k + p]} * w(i, j, p);
        sum += product;
        magnitude += std::fabs(product);
      }
      e.out[i * n + j] = static_cast<float>(sum);
      e.s = std::max(e.s, magnitude);
    }
  }
  return e;
}

}  // namespace iron::kernels
