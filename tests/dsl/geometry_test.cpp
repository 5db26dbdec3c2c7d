// The geometry API: the query's accessors and their errors, the shared shapes, the registry (one
// definition seen from two compilations counts once) and a geometry as a launch grid.
#include "iron/dsl/geometry.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>

#include "iron/core/error.hpp"
#include "iron/dsl/registration.hpp"
#include "iron/testing/geometry.hpp"
#include "iron/testing/test_setup.hpp"

namespace iron::dsl {
namespace {

// A geometry for a kernel of the toolkit's own test fixtures: one thread per element in groups
// of 64 (or the caller's group size).
IRON_GEOMETRY(testing_scale) {
  return Geometry::elementwise(q.constant("n"), q.threads_per_group(64));
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Geometry, QueryGivesConstantsAndTensorSizes) {
  GeometryQuery q;
  q.constants = {{"n", 4096.0}, {"alpha", 0.5}};
  q.elements = {{"inp", 8192}};
  EXPECT_EQ(q.constant("n"), 4096u);
  EXPECT_EQ(q.tensor_elements("inp"), 8192u);
  EXPECT_EQ(error_of([&] { q.constant("rows"); }),
            "the geometry needs constexpr 'rows', which is not given");
  EXPECT_EQ(error_of([&] { q.constant("alpha"); }),
            "the geometry needs constexpr 'alpha' to be a whole number of at least zero, not 0.5");
  EXPECT_EQ(error_of([&] { q.tensor_elements("out"); }),
            "the geometry needs the size of tensor 'out', which is not given");
}

TEST(Geometry, TheCallersGroupSizeWins) {
  GeometryQuery q;
  EXPECT_EQ(q.threads_per_group(256), 256u);
  q.fixed_threads = Dim3{128, 2, 1};
  EXPECT_EQ(q.threads_per_group(256), 128u);
}

TEST(Geometry, SharedShapes) {
  EXPECT_EQ(Geometry::elementwise(1000, 256).groups, (Dim3{4, 1, 1}));
  EXPECT_EQ(Geometry::elementwise(1000, 256).threads, (Dim3{256, 1, 1}));
  EXPECT_EQ(Geometry::elementwise(0, 256).groups.x, 1u) << "at least one group";
  EXPECT_EQ(Geometry::elementwise(std::numeric_limits<std::uint64_t>::max(), 1).groups.x,
            std::numeric_limits<std::uint32_t>::max())
      << "saturates rather than wraps";
  EXPECT_EQ(Geometry::per_row(7, 512).groups, (Dim3{7, 1, 1}));
  EXPECT_EQ(vector_count(4096, DType::BF16), 512u);
  EXPECT_EQ(vector_count(4096, DType::F32), 1024u);
  EXPECT_EQ(vector_count(1, DType::F32), 1u);
  EXPECT_EQ(vector_count(1001, DType::F16), 126u) << "the last vector partly filled";
  EXPECT_EQ(tile_count(0, 128), 1u) << "at least one group";
  EXPECT_EQ(tile_count(129, 128), 2u);
  EXPECT_EQ(tile_count(256, 128), 2u);
  EXPECT_EQ(tile_count(std::uint64_t{1} << 40, 1), 0xFFFFFFFFu) << "saturated, never wrapped";
  EXPECT_EQ(whole_simdgroups(1, 512), 32u);
  EXPECT_EQ(whole_simdgroups(33, 512), 64u);
  EXPECT_EQ(whole_simdgroups(4096, 512), 512u);
}

TEST(Geometry, RegistryFindsAKernelsGeometry) {
  const GeometryInfo* g = find_geometry("testing_scale");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->loc.file, "tests/dsl/geometry_test.cpp");
  EXPECT_EQ(find_geometry("no_such_kernel"), nullptr);
  EXPECT_FALSE(geometry_for("no_such_kernel", {}).has_value());
}

TEST(Geometry, OneDefinitionSeenTwiceCountsOnce) {
  const GeometryInfo* g = find_geometry("testing_scale");
  ASSERT_NE(g, nullptr);
  const std::size_t before = registered_geometries().size();
  // What the second compilation of a kernel file does: the same name from the same place.
  const detail::GeometryRegistrar again("testing_scale", g->function,
                                        SourceLocation::current(g->loc.file.c_str(), g->loc.line));
  EXPECT_EQ(registered_geometries().size(), before);
  EXPECT_NO_THROW(check_registrations());
}

TEST(Geometry, AnErrorNamesTheKernelAndItsGeometry) {
  const std::string e = error_of([] { geometry_for("testing_scale", {}); });
  EXPECT_NE(e.find("the geometry needs constexpr 'n', which is not given (geometry of "
                   "testing_scale at tests/dsl/geometry_test.cpp:"),
            std::string::npos)
      << e;
}

TEST(Geometry, AsALaunchGridWithTheCallersGroupSize) {
  testing::TestSetup setup("testing_scale", DType::F32);
  setup.input("inp", std::vector<float>(1000, 1.0f))
      .output("out", 1000)
      .constant("alpha", 2.0)
      .constant("n", 1000);
  runtime::Grid grid = testing::geometry_grid(setup);
  EXPECT_EQ(grid.groups.x, 16u);
  EXPECT_EQ(grid.group_size.x, 64u);
  GeometryQuery q = testing::geometry_query(setup.kernel(), setup.constants(),
                                            {{"inp", 1000}, {"out", 1000}}, {});
  q.fixed_threads = Dim3{256, 1, 1};
  grid = *testing::geometry_grid(setup.kernel(), q);
  EXPECT_EQ(grid.groups.x, 4u) << "the group count follows the caller's group size";
  EXPECT_EQ(grid.group_size.x, 256u);
  EXPECT_EQ(error_of([] {
              testing::TestSetup other("testing_half_copy", DType::F32);
              testing::geometry_grid(other);
            }),
            "kernel testing_half_copy has no geometry (IRON_GEOMETRY)");
}

TEST(Geometry, DevicesThatCannotBeAskedGetTheDefaults) {
  EXPECT_EQ(testing::device_shape("sim").multiprocessors, DeviceShape{}.multiprocessors);
  EXPECT_EQ(testing::device_shape("metal").max_threads_per_group, 1024u);
}

}  // namespace
}  // namespace iron::dsl
