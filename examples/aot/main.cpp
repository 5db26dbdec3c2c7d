/// A program built against an AOT bundle alone (`iron build --aot DIR`): no Iron headers, no
/// CUDA toolkit, only the bundle's iron_aot.hpp on the include path. It runs iron_scale,
/// iron_gemm_nk and iron_gemm_warpgroup_nk (its sm_90a cubin on a 9.0 device) in bf16 on the GPU
/// and checks them against the math done on the host in double; first, without a device, that
/// the bundle's launch checks refuse grids that break the kernels' contracts.
/// Prints "ok" and exits 0 when they match; exits 77 (skipped) when the machine has no CUDA
/// driver or device.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "iron_aot.hpp"

namespace {

constexpr int kSkipped = 77;

/// bf16 bits of `v`, rounded to nearest even (v finite).
std::uint16_t to_bf16(float v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

float from_bf16(std::uint16_t h) {
  const std::uint32_t bits = std::uint32_t{h} << 16;
  float v = 0;
  std::memcpy(&v, &bits, 4);
  return v;
}

/// Small integers over 8: exact in bf16, so the host's double sums are the reference.
std::vector<std::uint16_t> values(std::size_t count, unsigned seed) {
  std::vector<std::uint16_t> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = to_bf16(static_cast<float>(static_cast<int>((i * 7 + seed) % 17) - 8) / 8.0f);
  }
  return v;
}

/// The largest |device - want| relative to 1 + |want|.
double worst(const std::vector<std::uint16_t>& got, const std::vector<double>& want) {
  double w = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    w = std::max(w, std::abs(from_bf16(got[i]) - want[i]) / (1.0 + std::abs(want[i])));
  }
  return w;
}

double run_scale(iron_aot::Bundle& bundle) {
  const std::uint32_t n = 5000;
  const auto x = values(n, 3);
  std::vector<double> want(n);
  for (std::uint32_t i = 0; i < n; ++i) want[i] = 0.5 * from_bf16(x[i]);
  const auto in = bundle.alloc(n * 2), out = bundle.alloc(n * 2);
  bundle.upload(in, x.data(), n * 2);
  iron_aot::iron_scale_bf16(bundle, nullptr, {(n + 255) / 256, 1, 1}, {256, 1, 1}, in, out, 0.5f,
                            n);
  bundle.synchronize();
  std::vector<std::uint16_t> got(n);
  bundle.download(got.data(), out, n * 2);
  bundle.free(in);
  bundle.free(out);
  return worst(got, want);
}

/// The product a [m, k] · b [n, k]ᵀ by `launch`, against the host's.
template <class Launch>
double run_gemm(iron_aot::Bundle& bundle, Launch&& launch) {
  const std::uint32_t m = 130, n = 200, k = 328;
  const auto a = values(std::size_t{m} * k, 1), b = values(std::size_t{n} * k, 5);
  std::vector<double> want(std::size_t{m} * n, 0.0);
  for (std::uint32_t i = 0; i < m; ++i) {
    for (std::uint32_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (std::uint32_t p = 0; p < k; ++p) {
        sum += double{from_bf16(a[i * k + p])} * from_bf16(b[j * k + p]);
      }
      want[i * n + j] = sum;
    }
  }
  const auto da = bundle.alloc(a.size() * 2), db = bundle.alloc(b.size() * 2),
             dout = bundle.alloc(want.size() * 2);
  bundle.upload(da, a.data(), a.size() * 2);
  bundle.upload(db, b.data(), b.size() * 2);
  launch(da, db, dout, m, n, k);
  bundle.synchronize();
  std::vector<std::uint16_t> got(want.size());
  bundle.download(got.data(), dout, got.size() * 2);
  bundle.free(da);
  bundle.free(db);
  bundle.free(dout);
  return worst(got, want);
}

/// What `check` throws, or "" when it accepts the launch.
template <class Check>
std::string refusal(Check&& check) {
  try {
    check();
  } catch (const iron_aot::Error& e) {
    return e.what();
  }
  return "";
}

/// The bundle's host-side launch checks, which need no device: a grid that breaks a kernel's
/// contract is refused with the rule and its values before anything is launched.
bool refuses_broken_launches() {
  const std::string too_many = refusal([] {
    iron_aot::check_iron_scale_bf16({100, 1, 1}, {256, 1, 1}, 0.5f, 5000);
  });
  const std::string too_few = refusal([] {
    iron_aot::check_iron_gemm_nk_bf16({2, 1, 1}, {128, 1, 1}, 130, 200, 328, 1.0f);
  });
  const std::string fine = refusal([] {
    iron_aot::check_iron_gemm_nk_bf16({2, 2, 1}, {128, 1, 1}, 130, 200, 328, 1.0f);
  });
  const bool ok = too_many ==
                      "iron_scale_bf16: launch refused, nothing launched: groups.x (100) must be "
                      "at most ceil_div(n, tpg) = 20" &&
                  too_few ==
                      "iron_gemm_nk_bf16: launch refused, nothing launched: groups.y (1) must be "
                      "ceil_div(m, 128) = 2" &&
                  fine.empty();
  if (!ok) {
    std::printf("launch checks: got\n  %s\n  %s\n  %s\n", too_many.c_str(), too_few.c_str(),
                fine.c_str());
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string folder = argc > 1 ? argv[1] : ".";
  if (!refuses_broken_launches()) return 1;
  try {
    iron_aot::Bundle bundle(folder);
    const double scale = run_scale(bundle);
    const double gemm = run_gemm(bundle, [&](auto a, auto b, auto out, auto m, auto n, auto k) {
      iron_aot::iron_gemm_nk_bf16(bundle, nullptr, {(n + 127) / 128, (m + 127) / 128, 1},
                                  {128, 1, 1}, a, b, out, m, n, k, 1.0f);
    });
    const double warpgroup = run_gemm(bundle, [&](auto a, auto b, auto out, auto m, auto n,
                                                  auto k) {
      // A 128×256 tile a group (kernels/gemm/gemm.cpp), so ceil(n / 256) columns of groups.
      iron_aot::iron_gemm_warpgroup_nk_bf16(bundle, nullptr, {(n + 255) / 256, (m + 127) / 128, 1},
                                            {256, 1, 1}, a, b, out, m, n, k, 1.0f);
    });
    std::printf(
        "sm_%d: iron_scale_bf16 worst %g, iron_gemm_nk_bf16 worst %g, "
        "iron_gemm_warpgroup_nk_bf16 worst %g\n",
        bundle.sm(), scale, gemm, warpgroup);
    // scale is exact; the products' sums are exact in f32, then rounded once to bf16.
    if (scale > 0.0 || gemm > 1.0 / 256 || warpgroup > 1.0 / 256) {
      std::printf("mismatch\n");
      return 1;
    }
    std::printf("ok\n");
    return 0;
  } catch (const iron_aot::Error& e) {
    const std::string what = e.what();
    std::printf("%s\n", what.c_str());
    const bool no_device = what.find("no CUDA driver") != std::string::npos ||
                           what.find("cuInit failed") != std::string::npos;
    return no_device ? kSkipped : 1;
  }
}
