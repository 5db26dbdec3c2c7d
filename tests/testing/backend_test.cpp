/// Tests of the backend registry: the simulator by name or as "auto", and why others are absent.
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

TEST(Backend, SimByNameAndAsAuto) {
  EXPECT_EQ(make_backend("sim")->name(), "sim");
  EXPECT_EQ(make_backend("auto")->name(), "sim");
}

TEST(Backend, UnavailableBackendsSayWhy) {
  EXPECT_EQ(error_of("cuda"),
            "backend cuda is not available: the CUDA backend is not implemented yet");
  EXPECT_EQ(error_of("metal").find("backend metal is not available: "), 0u);
  EXPECT_EQ(error_of("tpu"), "unknown backend 'tpu': choose auto, sim, cuda or metal");
}

TEST(Backend, StatusesListEveryBackend) {
  const auto statuses = backend_statuses();
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_EQ(statuses[0].name, "sim");
  EXPECT_TRUE(statuses[0].available);
  for (std::size_t i = 1; i < statuses.size(); ++i) {
    EXPECT_FALSE(statuses[i].available) << statuses[i].name;
    EXPECT_FALSE(statuses[i].reason.empty()) << statuses[i].name;
  }
}

}  // namespace
}  // namespace iron::runtime
