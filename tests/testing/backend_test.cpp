/// Tests of the backend registry: the simulator by name, and why others are absent.
#include "iron/runtime/backend.hpp"

#include <gtest/gtest.h>

#include "iron/core/error.hpp"

namespace iron::runtime {
namespace {

std::string error_of(std::string_view name) {
  try {
    make_backend(name);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Backend, SimByName) { EXPECT_EQ(make_backend("sim")->name(), "sim"); }

TEST(Backend, UnavailableBackendsSayWhy) {
  EXPECT_EQ(error_of("metal").find("backend metal is not available: "), 0u);
  EXPECT_EQ(error_of("tpu"), "unknown backend 'tpu': choose auto, sim, cuda or metal");
}

}  // namespace
}  // namespace iron::runtime
