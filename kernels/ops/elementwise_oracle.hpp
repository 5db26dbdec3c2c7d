/// Oracle support shared by the elementwise kernels' tests.
#pragma once

#include <cmath>
#include <iron/testing/data.hpp>
#include <vector>

namespace iron::kernels {

/// The exact results as f32, except that one which overflows T becomes the infinity T rounds it
/// to: a kernel that computes in f32 and rounds once to T overflows exactly there, and an f16
/// result past 65504 must read as inf, not as a mismatch of 1e5 against inf.
inline std::vector<float> overflowing_as(std::vector<float> exact, DType dt) {
  const std::vector<float> in_dtype = testing::round_through(exact, dt);
  for (std::size_t i = 0; i < exact.size(); ++i) {
    if (std::isinf(in_dtype[i])) exact[i] = in_dtype[i];
  }
  return exact;
}

}  // namespace iron::kernels
