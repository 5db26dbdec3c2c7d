// `iron run` without --grid or --tpg, through the CLI as a user runs it: the kernel's geometry
// chooses what is left out (planned for a --tpg given); a kernel with no geometry has no grid.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "iron/dsl/geometry.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/testing/data.hpp"
#include "iron/testing/geometry.hpp"
#include "iron/testing/npy.hpp"

namespace iron::testing {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("iron-run-geometry-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

struct Outcome {
  int status = -1;
  std::string output;
};

/// Runs `iron ARGS`, capturing the exit status and everything printed.
Outcome iron(const std::string& args) {
  const std::string cmd = std::string(IRON_CLI) + " " + args + " 2>&1";
  Outcome o;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return o;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) o.output += buffer;
  const int status = pclose(pipe);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// `iron run iron_copy` on n values 0, 1, …, with `grid_options` added.
Outcome copy_run(std::size_t n, const std::string& grid_options) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  const std::string in = scratch("x.npy").string();
  write_npy(in, {pack(x, DType::F32), {n}});
  return iron("run iron_copy --in inp=" + in + " --out out=" + scratch("y.npy").string() +
              " --const n=" + std::to_string(n) + " --backend sim " + grid_options);
}

TEST(IronRunGeometry, TheKernelsGeometryChoosesTheGrid) {
  const Outcome o = copy_run(1000, "");
  ASSERT_EQ(o.status, 0) << o.output;
  // 1000 f32 values fill 250 16-byte vectors: one each for 256 threads of one group.
  EXPECT_TRUE(contains(o.output,
                       "1 groups of 256 threads (--grid 1 --tpg 256, from the kernel's "
                       "geometry)"))
      << o.output;
  const auto y = unpack(read_npy(scratch("y.npy").string()).tensor);
  ASSERT_EQ(y.size(), 1000u);
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], static_cast<float>(i)) << i;
}

TEST(IronRunGeometry, AGivenGroupSizeIsPlannedFor) {
  const Outcome o = copy_run(1000, "--tpg 32");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_TRUE(contains(o.output, "(--grid 8 --tpg 32, from the kernel's geometry)")) << o.output;
}

TEST(IronRunGeometry, AGivenGridIsUsedAsIs) {
  const Outcome o = copy_run(1000, "--grid 3");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_TRUE(contains(o.output, "(--grid 3 --tpg 256, from the kernel's geometry)")) << o.output;
}

TEST(IronRunGeometry, TinyShapes) {
  const Outcome o = copy_run(1, "");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(unpack(read_npy(scratch("y.npy").string()).tensor), std::vector<float>{0.0f});
}

// Every library kernel has a geometry, so the CLI's refusal cannot be reached through `iron`;
// what it rests on is checked on a fixture kernel that has none.
TEST(IronRunGeometry, AKernelWithoutAGeometryHasNoGrid) {
  ASSERT_EQ(dsl::find_geometry("testing_half_copy"), nullptr);
  const ir::Kernel kernel = dsl::kernel_ir_for("testing_half_copy", DType::F32);
  const dsl::GeometryQuery query =
      geometry_query(kernel, {}, {{"inp", 8}, {"out", 8}}, device_shape("sim"));
  EXPECT_FALSE(geometry_grid(kernel, query).has_value());
}

}  // namespace
}  // namespace iron::testing
