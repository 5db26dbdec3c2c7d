/// Tolerances derived from a kernel's stated error bound (the "## Error bound" section of its doc
/// comment) for one case's shape and data, so a tolerance follows the case, never a number that
/// happened to pass. A kernel test states its tolerance with these in TestSetup::tolerance().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "iron/core/dtype.hpp"
#include "iron/testing/test_setup.hpp"

namespace iron::testing::tolerance {

/// The unit roundoff u of a float dtype: 2^-24 (f32), 2^-11 (f16), 2^-8 (bf16). Rounding x to the
/// dtype errs by at most u·|x| + underflow(dtype).
double unit_roundoff(DType dt);

/// The underflow term of rounding to a float dtype: half its smallest subnormal, 2^-150 (f32),
/// 2^-25 (f16), 2^-134 (bf16).
double underflow(DType dt);

/// γ_k = k·u / (1 − k·u), u = f32's unit roundoff: the relative error of a product or quotient of
/// k f32 roundings, and of a term that passes through k f32 additions (Higham, §3.1).
double gamma(std::size_t k);

/// The error of a sum computed in f32, in any order, in which every term passes through at most
/// `depth` additions: |computed − exact| ≤ γ_depth · Σ|x|. A sequential sum of n terms has depth
/// n − 1; a tree over n terms, ⌈log2 n⌉.
double sum_error(std::size_t depth, double abs_sum);

/// The addition depth of a group reduction over a row of n terms by tpg threads: each thread
/// sums its strided terms, then the group sums the tpg partials (reduce_sum, in any order or
/// tree), and never more than n − 1 (adding an idle thread's 0 is exact). A thread reads the row
/// in runs of `lanes` consecutive terms (a wide access; 1 for single elements), so it sums
/// lanes·⌈⌈n/lanes⌉/tpg⌉ terms at most: depth that − 1 + tpg − 1.
std::size_t group_sum_depth(std::size_t n, std::uint32_t tpg, std::size_t lanes = 1);

/// The terms of type `dt` in one 16-byte access: the run a wide (vectorized or register-resident)
/// row read gives each thread.
std::size_t lanes_per_vector(DType dt);

/// The f32 math functions' error bounds in units of u (one ulp is at most 2u relative): the
/// larger of CUDA's (CUDA C++ Programming Guide, single-precision functions, without fast math)
/// and the host libm's that the simulator calls. Division and sqrt are correctly rounded (1u).
inline constexpr std::size_t kExpU = 4;     ///< expf: 2 ulp
inline constexpr std::size_t kLogU = 2;     ///< logf: 1 ulp
inline constexpr std::size_t kRsqrtU = 4;   ///< rsqrtf: 2 ulp
inline constexpr std::size_t kSinCosU = 4;  ///< sinf, cosf: 2 ulp
inline constexpr std::size_t kErfU = 4;     ///< erff: 2 ulp

/// The largest Σ_j |x[r, j]| over the rows r of a row-major [rows, n] array.
double max_row_abs_sum(const std::vector<float>& x, std::size_t rows, std::size_t n);

/// The largest max_j x[r, j] − min_j x[r, j] over the rows r of a row-major [rows, n] array.
double max_row_range(const std::vector<float>& x, std::size_t rows, std::size_t n);

/// The largest |x|.
double max_abs(const std::vector<float>& x);

/// A kernel that only moves, selects or converts values exactly: every output bit must match.
Tolerance exact();

/// An f32 result c with |c − e| ≤ abs_err + rel_err·|e| (e: the exact value on the rounded
/// inputs), rounded to `dt`, compared with the oracle's f32 rounding of e:
/// |got − want| ≤ abs_err·(1 + u_dt) + underflow terms + (rel_err + u_f32 + u_dt·(1 + rel_err))
/// ·|e|, with |e| bounded through |want|.
Tolerance stored(DType dt, double abs_err, double rel_err);

/// A result that is the f32 rounding of the exact value, as the oracle's is (one correctly rounded
/// operation, e.g. a + b), stored as `dt`: exact for f32, else u_dt relative plus underflow(dt).
Tolerance correctly_rounded(DType dt);

/// `k` f32 operations each correctly rounded (or a math function within k/2 ulp), the result
/// rounded to `dt`: stored(dt, 0, gamma(k)).
Tolerance relative(DType dt, std::size_t k);

}  // namespace iron::testing::tolerance
