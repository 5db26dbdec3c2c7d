// Every library kernel's geometry: each kernel under kernels/ has one, it passes the dispatch
// guard on every shape its tests and benches use (and on those shapes cut to one row), and a
// launch on its grid computes what the kernel's oracle says, on the simulator.
#include "iron/dsl/geometry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "iron/bench/registry.hpp"
#include "iron/codegen/target.hpp"
#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/runtime/backend.hpp"
#include "iron/runtime/dispatch_guard.hpp"
#include "iron/testing/geometry.hpp"
#include "iron/testing/registry.hpp"
#include "iron/testing/runner.hpp"

namespace iron::testing {
namespace {

/// Kernel names defined under kernels/: IRON_KERNEL(name, …) and each
/// IRON_KERNEL_VARIANT(name, suffix, …) as name_suffix.
std::vector<std::string> library_kernels() {
  const std::regex plain(R"(IRON_KERNEL\(\s*(\w+)\s*,)");
  const std::regex variant(R"(IRON_KERNEL_VARIANT\(\s*(\w+)\s*,\s*(\w+)\s*,)");
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(IRON_SOURCE_DIR) + "/kernels")) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (std::sregex_iterator it(s.begin(), s.end(), plain), end; it != end; ++it) {
      names.push_back((*it)[1]);
    }
    for (std::sregex_iterator it(s.begin(), s.end(), variant), end; it != end; ++it) {
      names.push_back((*it)[1].str() + "_" + (*it)[2].str());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// The tensors of a launch as the guard sees them, with their element counts.
struct Shapes {
  std::map<std::string, runtime::Scalar> constants;
  std::map<std::string, std::uint64_t> elements;
};

Shapes shapes_of(const TestSetup& setup) {
  Shapes s{setup.constants(), {}};
  for (const auto& [name, tensor] : setup.inputs()) s.elements.emplace(name, tensor.count());
  for (const auto& [name, count] : setup.outputs()) s.elements.emplace(name, count);
  return s;
}

Shapes shapes_of(const bench::BenchSetup& setup) {
  Shapes s{setup.constants(), {}};
  for (const auto& [name, fill] : setup.inputs()) s.elements.emplace(name, fill.count);
  for (const auto& [name, count] : setup.outputs()) s.elements.emplace(name, count);
  return s;
}

/// The same launch cut to one row: every tensor whose layout counts `groups.x` rows holds the
/// elements of one. Nullopt when no layout mentions groups.x.
std::optional<Shapes> one_row(const ir::Kernel& kernel, const Shapes& shapes) {
  Shapes cut = shapes;
  bool has_rows = false;
  for (const ir::TensorLayout& layout : kernel.dispatch.layouts) {
    const ir::SizeExpr count = ir::product_of(layout.dims);
    bool counts_rows = false;
    ir::for_each_leaf(count, [&](const ir::SizeExpr& leaf) {
      counts_rows |= leaf.kind == ir::SizeExpr::Kind::Groups && leaf.axis == 0;
    });
    if (!counts_rows) continue;
    const ir::SizeValue v =
        ir::evaluate_size_expr(count, [&](const ir::SizeExpr& leaf) -> std::optional<std::int64_t> {
          if (leaf.kind == ir::SizeExpr::Kind::Groups) return 1;
          const auto c = shapes.constants.find(leaf.name);
          if (leaf.kind != ir::SizeExpr::Kind::Constexpr || c == shapes.constants.end()) {
            return std::nullopt;
          }
          return c->second.i;
        });
    if (!v.ok() || v.value <= 0) continue;
    cut.elements[layout.param] = static_cast<std::uint64_t>(v.value);
    has_rows = true;
  }
  if (!has_rows) return std::nullopt;
  return cut;
}

/// "" when the guard accepts the geometry's grid for `shapes` (under the tuning configuration
/// the kernel was traced with), else why not.
std::string guard_verdict(const ir::Kernel& kernel, const Shapes& shapes,
                          const dsl::TuningConfig& tuning) {
  try {
    const auto grid = geometry_grid(
        kernel, geometry_query(kernel, shapes.constants, shapes.elements, dsl::DeviceShape{}),
        tuning);
    if (!grid) return "no geometry";
    std::vector<runtime::GuardArg> args;
    for (const ir::Param& p : kernel.params) {
      if (p.kind == ir::ParamKind::Constexpr) {
        args.emplace_back(shapes.constants.at(p.name));
      } else {
        args.emplace_back(
            runtime::TensorExtent{p.dtype, shapes.elements.at(p.name) * dtype_size(p.dtype)});
      }
    }
    // The tests run on the simulator, which stands for a compute capability 9.0 device.
    runtime::DeviceLimits limits;
    limits.max_shared_bytes = codegen::TargetProfile::cuda(90).max_shared_bytes;
    runtime::check_dispatch(kernel, args, *grid, limits);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(KernelGeometry, EveryLibraryKernelHasAGeometry) {
  std::vector<std::string> without;
  for (const std::string& name : library_kernels()) {
    if (dsl::find_geometry(name) == nullptr) without.push_back(name);
  }
  std::string list;
  for (const std::string& name : without) list += "\n  " + name;
  EXPECT_TRUE(without.empty()) << without.size()
                               << " library kernels have no IRON_GEOMETRY, so `iron run` needs "
                                  "--grid and --tpg for them:"
                               << list;
}

TEST(KernelGeometry, EveryGeometryNamesARegisteredKernel) {
  for (const dsl::GeometryInfo& g : dsl::registered_geometries()) {
    EXPECT_NE(dsl::find_kernel(g.name), nullptr)
        << "the geometry at " << format_loc(g.loc) << " names no kernel: " << g.name;
  }
}

/// Whether `kernel` is a library kernel with a geometry (the toolkit's own test fixtures are
/// not library kernels).
bool library_kernel_with_geometry(const std::string& kernel) {
  static const std::vector<std::string> library = library_kernels();
  return std::binary_search(library.begin(), library.end(), kernel) &&
         dsl::find_geometry(kernel) != nullptr;
}

TEST(KernelGeometry, GeometriesPassTheGuardOnEveryTestShape) {
  int checked = 0;
  for (const TestCase& test : registered_tests()) {
    if (!library_kernel_with_geometry(test.kernel)) continue;
    for (const DTypeTolerance& d : test.dtypes) {
      Rng rng(1);
      const TestSetup setup = test.make(d.dtype, rng);
      const Shapes shapes = shapes_of(setup);
      EXPECT_EQ(guard_verdict(setup.kernel(), shapes, setup.tuning()), "")
          << test.name << " [" << dtype_name(d.dtype) << "]";
      if (const auto cut = one_row(setup.kernel(), shapes)) {
        EXPECT_EQ(guard_verdict(setup.kernel(), *cut, setup.tuning()), "")
            << test.name << " [" << dtype_name(d.dtype) << "] cut to one row";
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(KernelGeometry, GeometriesPassTheGuardOnEveryBenchShape) {
  for (const bench::BenchCase& b : bench::registered_benches()) {
    if (!library_kernel_with_geometry(b.kernel)) continue;
    for (const DType dt : b.dtypes) {
      const bench::BenchSetup setup = b.make(dt);
      EXPECT_EQ(guard_verdict(setup.kernel(), shapes_of(setup), setup.tuning()), "")
          << b.name << " [" << dtype_name(dt) << "]";
    }
  }
}

/// The element count of every tensor of the test's f32 (or first) form: its size.
std::uint64_t test_size(const TestCase& test) {
  Rng rng(1);
  const TestSetup setup = test.make(test.dtypes.front().dtype, rng);
  std::uint64_t total = 0;
  for (const auto& [name, count] : shapes_of(setup).elements) total += count;
  return total;
}

TEST(KernelGeometry, GeometriesRunOnTheSimulator) {
  // Each kernel's smallest test, in every dtype it lists, on the grid of the kernel's geometry.
  std::map<std::string, std::pair<std::uint64_t, const TestCase*>> smallest;
  for (const TestCase& test : registered_tests()) {
    if (!library_kernel_with_geometry(test.kernel)) continue;
    const std::uint64_t size = test_size(test);
    auto [at, fresh] = smallest.try_emplace(test.kernel, size, &test);
    if (!fresh && size < at->second.first) at->second = {size, &test};
  }
  ASSERT_FALSE(smallest.empty());
  auto sim = runtime::make_backend("sim");
  for (const auto& [kernel, entry] : smallest) {
    TestCase on_geometry = *entry.second;
    on_geometry.make = [make = entry.second->make](DType dt, Rng& rng) {
      TestSetup setup = make(dt, rng);
      setup.grid(geometry_grid(setup));
      return setup;
    };
    for (const DTypeTolerance& d : on_geometry.dtypes) {
      const TestResult r = run_test(on_geometry, d.dtype, *sim, 1);
      EXPECT_TRUE(r.passed) << on_geometry.name << " [" << dtype_name(d.dtype)
                            << "] on its kernel's geometry: " << r.message;
    }
  }
}

}  // namespace
}  // namespace iron::testing
