/// A discrete Fourier transform of a short sequence held in one thread's registers,
/// X[k] = Σ_n x[n]·e^(−2πi·nk/N), unrolled at trace time by mixed-radix Cooley–Tukey: radix 4
/// (two radix-2 steps whose twiddle is −i, exact) and radix 2 for powers of two, and for an odd
/// factor R (5 for 400 = 16·25) the direct R-point transform on the symmetric pairs
/// x[n] ± x[R − n], half the products of the plain sum. Twiddles are constants rounded to f32
/// at trace time; quarter turns are exact (0, ±1) and cost nothing.
///
/// A part known to be zero at trace time (the imaginary part of a real input) is carried as
/// "absent" and every operation on it is skipped, so a real input costs what a real transform
/// does. Outputs the caller never uses are removed by dead-code elimination.
///
/// Error: an input passes, per radix level, through the level's butterfly additions (1 for
/// radix 2, 2 for radix 4, 3 + 1 product for radix 5) and one twiddle product (2 roundings and
/// the constant's own u): each level adds at most 6u relative to Σ|x[n]| on each output's real
/// and imaginary parts (see the kernels' error bounds).
#pragma once

#include <cmath>
#include <cstdint>
#include <iron/iron.hpp>
#include <numbers>
#include <optional>
#include <vector>

namespace iron::kernels::audio {
using namespace iron::dsl;

/// A real or imaginary part: absent means exactly zero.
using Part = std::optional<Expr<f32>>;

/// A complex value of two parts, either of which may be known to be zero.
struct Complex {
  Part re, im;
};

inline Part add(const Part& a, const Part& b) {
  if (!a) return b;
  if (!b) return a;
  return *a + *b;
}

inline Part sub(const Part& a, const Part& b) {
  if (!b) return a;
  if (!a) return -*b;
  return *a - *b;
}

/// a · c for a trace-time constant c (exact for 0 and ±1).
inline Part scale(const Part& a, double c) {
  if (!a || c == 0.0) return std::nullopt;
  if (c == 1.0) return a;
  if (c == -1.0) return -*a;
  return *a * static_cast<f32>(c);
}

/// a · c + b · d for trace-time constants c and d, one fused multiply-add where both are used.
inline Part dot2(const Part& a, double c, const Part& b, double d) {
  const Part ac = scale(a, c);
  const Part bd = scale(b, d);
  if (!ac) return bd;
  if (!bd) return ac;
  if (c == 1.0 || c == -1.0 || d == 1.0 || d == -1.0) return *ac + *bd;
  return fma(*a, static_cast<f32>(c), *bd);
}

inline Complex add(const Complex& a, const Complex& b) {
  return {add(a.re, b.re), add(a.im, b.im)};
}
inline Complex sub(const Complex& a, const Complex& b) {
  return {sub(a.re, b.re), sub(a.im, b.im)};
}

/// cos and sin of 2π·m/n, exact at the quarter turns.
inline std::pair<double, double> unit_root(std::int64_t m, std::int64_t n) {
  m = ((m % n) + n) % n;
  if (4 * m % n == 0) {
    constexpr double kCos[] = {1.0, 0.0, -1.0, 0.0};
    constexpr double kSin[] = {0.0, 1.0, 0.0, -1.0};
    const auto q = static_cast<std::size_t>(4 * m / n);
    return {kCos[q], kSin[q]};
  }
  const double angle = 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

/// a · e^(−2πi·m/n).
inline Complex twiddle(const Complex& a, std::int64_t m, std::int64_t n) {
  const auto [c, s] = unit_root(m, n);
  // (re + i·im)(c − i·s) = (re·c + im·s) + i(im·c − re·s)
  return {dot2(a.re, c, a.im, s), dot2(a.im, c, a.re, -s)};
}

/// The direct transform of an odd length r on the pairs x[n] ± x[r − n]:
/// X[k] = x[0] + Σ_{n ≤ (r−1)/2} (x[n] + x[r−n])·cos θ − i·(x[n] − x[r−n])·sin θ, θ = 2πnk/r.
inline std::vector<Complex> odd_dft(const std::vector<Complex>& x) {
  const auto r = static_cast<std::int64_t>(x.size());
  std::vector<Complex> sums;
  std::vector<Complex> diffs;
  for (std::int64_t n = 1; 2 * n < r; ++n) {
    sums.push_back(add(x[n], x[r - n]));
    diffs.push_back(sub(x[n], x[r - n]));
  }
  std::vector<Complex> out;
  for (std::int64_t k = 0; k < r; ++k) {
    Complex acc = x[0];
    for (std::size_t p = 0; p < sums.size(); ++p) {
      const auto [c, s] = unit_root(static_cast<std::int64_t>(p + 1) * k, r);
      // (a_re + i a_im)·c − i·(b_re + i b_im)·s = (a_re·c + b_im·s) + i(a_im·c − b_re·s)
      acc.re = add(acc.re, dot2(sums[p].re, c, diffs[p].im, s));
      acc.im = add(acc.im, dot2(sums[p].im, c, diffs[p].re, -s));
    }
    out.push_back(acc);
  }
  return out;
}

/// X = DFT(x), x.size() a product of 2, 4 and odd factors.
inline std::vector<Complex> small_dft(const std::vector<Complex>& x) {
  const auto n = static_cast<std::int64_t>(x.size());
  if (n == 1) return x;
  if (n == 2) return {add(x[0], x[1]), sub(x[0], x[1])};
  const std::int64_t radix = n % 4 == 0 && n > 4 ? 4 : n % 2 == 0 ? 2 : n % 5 == 0 && n > 5 ? 5 : n;
  if (radix == n) return odd_dft(x);
  // Decimation in time: n = radix·m + r, k = k0 + (n / radix)·k1.
  const std::int64_t m = n / radix;
  std::vector<std::vector<Complex>> parts;
  for (std::int64_t r = 0; r < radix; ++r) {
    std::vector<Complex> sub_x;
    for (std::int64_t j = 0; j < m; ++j) sub_x.push_back(x[radix * j + r]);
    parts.push_back(small_dft(sub_x));
  }
  std::vector<Complex> out(x.size());
  for (std::int64_t k0 = 0; k0 < m; ++k0) {
    std::vector<Complex> column;
    for (std::int64_t r = 0; r < radix; ++r) column.push_back(twiddle(parts[r][k0], r * k0, n));
    const auto y = small_dft(column);
    for (std::int64_t k1 = 0; k1 < radix; ++k1) out[k0 + m * k1] = y[k1];
  }
  return out;
}

}  // namespace iron::kernels::audio
