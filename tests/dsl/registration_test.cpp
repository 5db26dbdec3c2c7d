// Registering a name twice is recorded with both places (never thrown from a static
// initialiser, which would abort the program before main). The whole path, from two files to
// the error every registry read raises, is tested by the iron_broken_registry program.
#include "iron/dsl/registration.hpp"

#include <gtest/gtest.h>

#include "iron/dsl/kernel.hpp"

namespace {
using namespace iron::dsl;

KernelInfo kernel_at(std::string name, std::string file, std::uint32_t line) {
  return {std::move(name), {std::move(file), line}, {iron::DType::F32}, {}};
}

TEST(DslRegistration, SecondEntryOfANameIsRefusedWithBothPlaces) {
  std::vector<KernelInfo> kernels;
  EXPECT_EQ(detail::insert_unique(kernels, kernel_at("k_b", "kernels/b.cpp", 40), "kernel"),
            std::nullopt);
  EXPECT_EQ(detail::insert_unique(kernels, kernel_at("k_a", "kernels/a.cpp", 3), "kernel"),
            std::nullopt);
  const auto problem =
      detail::insert_unique(kernels, kernel_at("k_b", "kernels/a.cpp", 12), "kernel");
  ASSERT_TRUE(problem.has_value());
  // The places come in file:line order, whichever static initialiser ran first.
  EXPECT_EQ(*problem, "kernel 'k_b' is registered twice: kernels/a.cpp:12 and kernels/b.cpp:40");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "k_a");
  EXPECT_EQ(kernels[1].name, "k_b");
  EXPECT_EQ(kernels[1].loc.file, "kernels/b.cpp");  // the first registration stays
}

TEST(DslRegistration, TwiceInOneFileOrdersByLine) {
  EXPECT_EQ(detail::registered_twice("bench", "k.big", {"kernels/k.cpp", 90}, {"kernels/k.cpp", 9}),
            "bench 'k.big' is registered twice: kernels/k.cpp:9 and kernels/k.cpp:90");
}

TEST(DslRegistration, ThisProgramRegisteredEverythingOnce) {
  EXPECT_NO_THROW(check_registrations());
}

}  // namespace
