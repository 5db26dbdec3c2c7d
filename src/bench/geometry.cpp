/// A bench's grid from its kernel's geometry, on the CUDA device benches run on.
#include "iron/bench/geometry.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>

#include "iron/core/error.hpp"
#include "iron/testing/geometry.hpp"

namespace iron::bench {

runtime::Grid geometry_grid(const BenchSetup& setup) {
  std::map<std::string, std::uint64_t> elements;
  for (const auto& [name, fill] : setup.inputs()) elements.emplace(name, fill.count);
  for (const auto& [name, count] : setup.outputs()) elements.emplace(name, count);
  const ir::Kernel& kernel = setup.kernel();
  const auto grid = testing::geometry_grid(
      kernel,
      testing::geometry_query(kernel, setup.constants(), elements, testing::device_shape("cuda")),
      setup.tuning());
  if (!grid) throw Error(fmt::format("kernel {} has no geometry (IRON_GEOMETRY)", kernel.name));
  return *grid;
}

}  // namespace iron::bench
