/// The gemm forms with a fused epilogue: the product's f32 sums go through the epilogue before
/// the one rounding to T, so a linear layer's bias, activation and residual add cost no extra
/// pass over out.
///
/// - iron_gemm_bias_{kn,nk}[_silu|_gelu_tanh]: out[i, j] = act(alpha · Σ_p a[i, p] · b(p, j) +
///   bias[j]) (act the identity, silu, or gelu in its tanh form,
///   kernels/primitives/activation.hpp);
/// - iron_gemm_residual_{kn,nk}: out[i, j] = alpha · Σ_p a[i, p] · b(p, j) + residual[i, j];
/// - iron_gemm_beta_{kn,nk}: c[i, j] = alpha · Σ_p a[i, p] · b(p, j) + beta · c[i, j], in place.
///
/// The product and the layouts of a and b are iron_gemm's (kernels/gemm/gemm.cpp).
///
/// ## Error bound
/// iron_gemm's for the sum, then the epilogue in f32: one rounding each for the scale, the add
/// (and beta's product), and the activation's own bound, then the rounding to T.
///
/// ## Layout
/// - `a [m, k]` T; `b [k, n]` T (kn) or `[n, k]` T (nk)
/// - `bias [n]` T; `residual [m, n]` T
/// - `out [m, n]` T; `c [m, n]` T (read and written)
///
/// ## Dispatch
/// Tiled: a grid of ceil(n / 128) × ceil(m / 128) groups of exactly 128 threads.
#include <iron/iron.hpp>

#include "../primitives/activation.hpp"
#include "gemm_tiles.hpp"

namespace iron::kernels {
using namespace iron::dsl;

namespace {

/// The activation of a bias epilogue.
enum class Activation : std::uint8_t { Identity, Silu, GeluTanh };

template <class T, Activation ACT>
Expr<f32> activate(const Expr<f32>& x) {
  if constexpr (ACT == Activation::Silu) {
    return silu<T>(x);
  } else if constexpr (ACT == Activation::GeluTanh) {
    return gelu_tanh<T>(x);
  } else {
    return x;
  }
}

/// The layouts of a and b.
template <MatrixLayout B_LAYOUT, class T>
void declare_operands(const Tensor<T>& a, const Tensor<T>& b) {
  gemm::declare();
  layout(a, "[m, k]");
  layout(b, B_LAYOUT == row_major ? "[k, n]" : "[n, k]");
}

}  // namespace

IRON_KERNEL_TEMPLATE(iron_gemm_bias, (MatrixLayout B_LAYOUT, Activation ACT),
                     (Tensor<T> a, Tensor<T> b, Tensor<T> bias, Out<T> out, Constexpr<u32> m,
                      Constexpr<u32> n, Constexpr<u32> k, Constexpr<f32> alpha)) {
  declare_operands<B_LAYOUT>(a, b);
  layout(bias, "[n]");
  layout(out, "[m, n]");
  gemm::product(a, gemm::DenseB<T, B_LAYOUT>{b, Expr<u32>(0u)}, m, n, k, Expr<u32>(0u),
                [&](const auto& r, const auto& c, const Expr<f32>& sum) {
                  auto biased = fma(sum, Expr<f32>(alpha), cast<f32>(load(bias[c])));
                  store(out[r * n + c], cast<T>(activate<T, ACT>(biased)));
                });
}
IRON_KERNEL_VARIANT(iron_gemm_bias, kn, MatrixLayout::RowMajor, Activation::Identity);
IRON_KERNEL_VARIANT(iron_gemm_bias, nk, MatrixLayout::ColMajor, Activation::Identity);
IRON_KERNEL_VARIANT(iron_gemm_bias, kn_silu, MatrixLayout::RowMajor, Activation::Silu);
IRON_KERNEL_VARIANT(iron_gemm_bias, nk_silu, MatrixLayout::ColMajor, Activation::Silu);
IRON_KERNEL_VARIANT(iron_gemm_bias, kn_gelu_tanh, MatrixLayout::RowMajor, Activation::GeluTanh);
IRON_KERNEL_VARIANT(iron_gemm_bias, nk_gelu_tanh, MatrixLayout::ColMajor, Activation::GeluTanh);

IRON_KERNEL_TEMPLATE(iron_gemm_residual, (MatrixLayout B_LAYOUT),
                     (Tensor<T> a, Tensor<T> b, Tensor<T> residual, Out<T> out, Constexpr<u32> m,
                      Constexpr<u32> n, Constexpr<u32> k, Constexpr<f32> alpha)) {
  declare_operands<B_LAYOUT>(a, b);
  layout(residual, "[m, n]");
  layout(out, "[m, n]");
  gemm::product(a, gemm::DenseB<T, B_LAYOUT>{b, Expr<u32>(0u)}, m, n, k, Expr<u32>(0u),
                [&](const auto& r, const auto& c, const Expr<f32>& sum) {
                  auto at = r * n + c;
                  store(out[at],
                        cast<T>(fma(sum, Expr<f32>(alpha), cast<f32>(load(residual[at])))));
                });
}
IRON_KERNEL_VARIANT(iron_gemm_residual, kn, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_gemm_residual, nk, MatrixLayout::ColMajor);

IRON_KERNEL_TEMPLATE(iron_gemm_beta, (MatrixLayout B_LAYOUT),
                     (Tensor<T> a, Tensor<T> b, InOut<T> c, Constexpr<u32> m, Constexpr<u32> n,
                      Constexpr<u32> k, Constexpr<f32> alpha, Constexpr<f32> beta)) {
  declare_operands<B_LAYOUT>(a, b);
  layout(c, "[m, n]");
  gemm::product(a, gemm::DenseB<T, B_LAYOUT>{b, Expr<u32>(0u)}, m, n, k, Expr<u32>(0u),
                [&](const auto& r, const auto& col, const Expr<f32>& sum) {
                  auto at = r * n + col;
                  auto old = cast<f32>(load(c[at]));
                  store(c[at], cast<T>(fma(sum, Expr<f32>(alpha), old * beta)));
                });
}
IRON_KERNEL_VARIANT(iron_gemm_beta, kn, MatrixLayout::RowMajor);
IRON_KERNEL_VARIANT(iron_gemm_beta, nk, MatrixLayout::ColMajor);

IRON_GEOMETRY(iron_gemm_bias_kn) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_bias_nk) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_bias_kn_silu) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_bias_nk_silu) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_bias_kn_gelu_tanh) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_bias_nk_gelu_tanh) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_residual_kn) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_residual_nk) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_beta_kn) { return gemm::geometry(q); }
IRON_GEOMETRY(iron_gemm_beta_nk) { return gemm::geometry(q); }

}  // namespace iron::kernels

// The tests and benches: compiled into iron_kernel_tests, never into iron_kernels.
#if IRON_KERNEL_TESTS
#include <iron/bench/geometry.hpp>
#include <iron/bench/registry.hpp>
#include <iron/testing/geometry.hpp>
#include <iron/testing/registry.hpp>

#include "gemm_oracle.hpp"

namespace iron::kernels {

namespace {

/// What a form adds after the product, in double, and the inputs it takes (the order is the
/// `epilogue` dimension of the peer case, bench/peer_ops.py).
enum class Fused : std::uint8_t { Bias, BiasSilu, BiasGeluTanh, Residual, Beta };

double apply(Fused f, double x) {
  if (f == Fused::BiasSilu) return x / (1.0 + std::exp(-x));
  if (f == Fused::BiasGeluTanh) {
    constexpr double kSqrtTwoOverPi = 0.79788456080286536;
    return 0.5 * x * (1.0 + std::tanh(kSqrtTwoOverPi * (x + 0.044715 * x * x * x)));
  }
  return x;
}

std::string kernel_name(Fused f, bool b_rows) {
  const std::string layout = b_rows ? "kn" : "nk";
  switch (f) {
    case Fused::Bias:
      return "iron_gemm_bias_" + layout;
    case Fused::BiasSilu:
      return "iron_gemm_bias_" + layout + "_silu";
    case Fused::BiasGeluTanh:
      return "iron_gemm_bias_" + layout + "_gelu_tanh";
    case Fused::Residual:
      return "iron_gemm_residual_" + layout;
    case Fused::Beta:
      return "iron_gemm_beta_" + layout;
  }
  return "";
}

/// out = epilogue(alpha · a · op(b)), the oracle in double: the product's bound (γ_k of the
/// largest Σ|a·b|, times alpha) carried through the epilogue (whose slope is at most 1.13 for
/// silu and gelu, |beta| for c's term is exact in the bound's unit), plus the epilogue's
/// roundings: a few u relative, 2^-20 for the approximate activations.
testing::TestSetup fused_setup(Fused f, bool b_rows, std::size_t m, std::size_t n, std::size_t k,
                               DType dt, testing::Rng& rng) {
  constexpr double kAlpha = 0.75;
  constexpr double kBeta = -0.5;
  const auto a = testing::round_through(rng.uniform(m * k, -1.0f, 1.0f), dt);
  const auto b = testing::round_through(rng.uniform(k * n, -1.0f, 1.0f), dt);
  const auto product = gemm_oracle(a, b, m, n, k, b_rows, kAlpha);
  testing::TestSetup setup(kernel_name(f, b_rows), dt);
  setup.input("a", a)
      .input("b", b)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .constant("alpha", kAlpha);
  std::vector<double> exact(product.begin(), product.end());
  if (f == Fused::Residual || f == Fused::Beta) {
    const auto other = testing::round_through(rng.uniform(m * n, -2.0f, 2.0f), dt);
    for (std::size_t i = 0; i < exact.size(); ++i) {
      exact[i] += (f == Fused::Beta ? kBeta : 1.0) * other[i];
    }
    if (f == Fused::Beta) {
      setup.output("c", m * n).initial("c", other).constant("beta", kBeta);
    } else {
      setup.input("residual", other).output("out", m * n);
    }
  } else {
    const auto bias = testing::round_through(rng.uniform(n, -1.0f, 1.0f), dt);
    for (std::size_t i = 0; i < exact.size(); ++i) exact[i] = apply(f, exact[i] + bias[i % n]);
    setup.input("bias", bias).output("out", m * n);
  }
  const std::string result = f == Fused::Beta ? "c" : "out";
  const double product_error =
      1.13 * testing::tolerance::gamma(k) * kAlpha * max_abs_dot(a, b, m, n, k, b_rows);
  setup.expect(result, std::vector<float>(exact.begin(), exact.end()))
      .tolerance(testing::tolerance::stored(dt, product_error, testing::tolerance::gamma(8)));
  return setup.grid(testing::geometry_grid(setup));
}

/// A linear layer's shape with the epilogue, beside cuBLAS's plain product (the fused work
/// should cost nothing measurable).
bench::BenchSetup fused_bench(Fused f, bool b_rows, std::size_t m, std::size_t n, std::size_t k,
                              DType dt) {
  bench::BenchSetup setup(kernel_name(f, b_rows), dt);
  setup.random("a", m * k)
      .random("b", k * n)
      .constant("m", static_cast<double>(m))
      .constant("n", static_cast<double>(n))
      .constant("k", static_cast<double>(k))
      .constant("alpha", 1.0);
  std::size_t extra = 0;  // elements the epilogue reads
  if (f == Fused::Residual) {
    setup.random("residual", m * n).output("out", m * n);
    extra = m * n;
  } else if (f == Fused::Beta) {
    setup.output("c", m * n).constant("beta", 0.5);  // timed, not checked: any contents do
    extra = m * n;
  } else {
    setup.random("bias", n).output("out", m * n);
    extra = n;
  }
  return setup.grid(bench::geometry_grid(setup))
      .bytes_moved((m * k + k * n + m * n + extra) * dtype_size(dt))
      .flops(2 * m * n * k)
      .peer("gemm_epilogue", {{"m", static_cast<double>(m)},
                              {"n", static_cast<double>(n)},
                              {"k", static_cast<double>(k)},
                              {"b_rows", b_rows ? 1.0 : 0.0},
                              {"epilogue", static_cast<double>(f)}});
}

}  // namespace

// Each form in both layouts: whole tiles, sizes just past a tile, primes; a bench at a linear
// layer's shape (cuBLAS's plain product of that shape is in iron_gemm's benches).
#define IRON_GEMM_FUSED_CASES(KN, NK, FUSED)                                                       \
  IRON_TEST(NK, tiles_256x128x64, F32, F16, BF16) {                                                \
    return fused_setup(FUSED, false, 256, 128, 64, dt, rng);                                       \
  }                                                                                                \
  IRON_TEST(NK, primes_37x23x19, F32, F16, BF16) {                                                 \
    return fused_setup(FUSED, false, 37, 23, 19, dt, rng);                                         \
  }                                                                                                \
  IRON_TEST(KN, past_a_tile_129x65x40, F32, F16, BF16) {                                           \
    return fused_setup(FUSED, true, 129, 65, 40, dt, rng);                                         \
  }                                                                                                \
  IRON_TEST(KN, ones_1x1x1, F32, F16, BF16) { return fused_setup(FUSED, true, 1, 1, 1, dt, rng); } \
  IRON_BENCH(NK, m4096_n4096_k4096, BF16) {                                                        \
    return fused_bench(FUSED, false, 4096, 4096, 4096, dt);                                        \
  }                                                                                                \
  IRON_BENCH(KN, m4096_n4096_k4096, BF16) { return fused_bench(FUSED, true, 4096, 4096, 4096, dt); }
IRON_GEMM_FUSED_CASES(iron_gemm_bias_kn, iron_gemm_bias_nk, Fused::Bias)
IRON_GEMM_FUSED_CASES(iron_gemm_bias_kn_silu, iron_gemm_bias_nk_silu, Fused::BiasSilu)
IRON_GEMM_FUSED_CASES(iron_gemm_bias_kn_gelu_tanh, iron_gemm_bias_nk_gelu_tanh, Fused::BiasGeluTanh)
IRON_GEMM_FUSED_CASES(iron_gemm_residual_kn, iron_gemm_residual_nk, Fused::Residual)
IRON_GEMM_FUSED_CASES(iron_gemm_beta_kn, iron_gemm_beta_nk, Fused::Beta)
#undef IRON_GEMM_FUSED_CASES

// An MLP's up projection with its activation, and a down projection with the residual.
IRON_BENCH(iron_gemm_bias_nk_silu, m4096_n14336_k4096, BF16) {
  return fused_bench(Fused::BiasSilu, false, 4096, 14336, 4096, dt);
}
IRON_BENCH(iron_gemm_residual_nk, m4096_n4096_k14336, BF16) {
  return fused_bench(Fused::Residual, false, 4096, 4096, 14336, dt);
}

}  // namespace iron::kernels
#endif  // IRON_KERNEL_TESTS
