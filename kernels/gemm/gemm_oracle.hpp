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

}  // namespace iron::kernels
