/// Bench registration: IRON_BENCH(kernel, name, F32, F16, BF16) { return BenchSetup(…); }
/// The body sees `dt`, the dtype being measured. Benches are timed by `iron bench`.
#pragma once

#include <string>
#include <vector>

#include "iron/bench/setup.hpp"
#include "iron/core/source_location.hpp"

namespace iron::bench {

struct BenchCase {
  std::string kernel;  ///< the kernel measured
  std::string name;    ///< "<kernel>.<case>"
  std::vector<DType> dtypes;
  BenchSetup (*make)(DType);
  ir::SourceLoc loc;
};

/// All registered benches, sorted by name.
const std::vector<BenchCase>& registered_benches();

struct BenchRegistrar {
  BenchRegistrar(const char* kernel, const char* name, std::vector<DType> dtypes,
                 BenchSetup (*make)(DType), SourceLocation where = SourceLocation::current());
};

/// The dtypes a bench runs in: IRON_BENCH(k, c, F32, BF16).
namespace bench_dtypes {
inline constexpr DType F32 = DType::F32;
inline constexpr DType F16 = DType::F16;
inline constexpr DType BF16 = DType::BF16;
}  // namespace bench_dtypes

}  // namespace iron::bench

/// Registers bench `NAME` of kernel `KERNEL` for each dtype listed (F32, F16, BF16).
#define IRON_BENCH(KERNEL, NAME, ...)                                                      \
  static ::iron::bench::BenchSetup KERNEL##_##NAME##_bench(::iron::DType dt);              \
  [[maybe_unused]] static const ::iron::bench::BenchRegistrar KERNEL##_##NAME##_bench_reg{ \
      #KERNEL, #NAME,                                                                      \
      [] {                                                                                 \
        using namespace ::iron::bench::bench_dtypes;                                       \
        return ::std::vector<::iron::DType>{__VA_ARGS__};                                  \
      }(),                                                                                 \
      &KERNEL##_##NAME##_bench};                                                           \
  static ::iron::bench::BenchSetup KERNEL##_##NAME##_bench([[maybe_unused]] ::iron::DType dt)
