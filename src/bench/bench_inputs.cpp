/// Bench inputs made on the host (see bench_inputs.hpp).
#include "iron/bench/bench_inputs.hpp"

#include <cstdint>
#include <vector>

namespace iron::bench {
namespace {

/// `count` values uniform in [lo, hi): a splitmix64 stream, several times faster than the test
/// Rng's distributions, which matters for inputs of hundreds of millions of elements.
std::vector<float> fast_uniform(std::size_t count, float lo, float hi, std::uint64_t seed) {
  std::vector<float> v(count);
  std::uint64_t state = seed;
  const float scale = (hi - lo) / 16777216.0f;  // 24 random bits per value
  for (float& x : v) {
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    x = lo + static_cast<float>(z >> 40) * scale;
  }
  return v;
}

}  // namespace

runtime::HostTensor make_input(const BenchFill& f, DType dtype, testing::Rng& rng) {
  switch (f.kind) {
    case BenchFill::Kind::Uniform:
      return testing::pack(fast_uniform(f.count, f.lo, f.hi, rng.integers(1, 0, 0xFFFFFFFFu)[0]),
                           dtype);
    case BenchFill::Kind::Values:
      return testing::pack(f.values, dtype);
    case BenchFill::Kind::Words:
      return testing::pack_u32(
          f.words.empty() ? rng.integers(f.count, f.word_lo, f.word_hi) : f.words, dtype);
  }
  return {};
}

}  // namespace iron::bench
