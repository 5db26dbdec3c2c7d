/// Test helpers for the emitted-code checks: the NVRTC gate (fail, or skip when allowed).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "iron/runtime/nvrtc.hpp"

namespace iron::checks_test {

/// Whether IRON_ALLOW_NO_NVRTC=1 lets a machine without NVRTC skip the NVRTC checks.
inline bool nvrtc_may_be_missing() {
  const char* allow = std::getenv("IRON_ALLOW_NO_NVRTC");
  return allow != nullptr && std::strcmp(allow, "1") == 0;
}

}  // namespace iron::checks_test

/// Ends the test when NVRTC is absent: a failure with the search list, or a skip with the same
/// reason when IRON_ALLOW_NO_NVRTC=1.
#define IRON_REQUIRE_NVRTC()                                                               \
  do {                                                                                     \
    const auto& iron_nvrtc = ::iron::runtime::nvrtc_status();                              \
    if (!iron_nvrtc.available) {                                                           \
      if (::iron::checks_test::nvrtc_may_be_missing()) GTEST_SKIP() << iron_nvrtc.reason;  \
      FAIL() << iron_nvrtc.reason << "\n(set IRON_ALLOW_NO_NVRTC=1 to skip these checks)"; \
    }                                                                                      \
  } while (0)
