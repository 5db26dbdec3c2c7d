/// Kernel geometries as launch grids: the query from a launch's arguments, the device a backend
/// runs on, and the grid for a test setup.
#include "iron/testing/geometry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "iron/core/error.hpp"
#include "iron/runtime/device_info.hpp"

namespace iron::testing {
namespace {

runtime::Dim3 runtime_dim3(const dsl::Dim3& d) { return {d.x, d.y, d.z}; }

}  // namespace

dsl::DeviceShape device_shape(std::string_view backend) {
  dsl::DeviceShape shape;
  if (backend != "cuda") return shape;
  const runtime::CudaReport& report = runtime::cuda_report();
  if (report.devices.empty()) return shape;
  const runtime::CudaDeviceInfo& device = report.devices.front();
  shape.multiprocessors = static_cast<std::uint32_t>(std::max(device.multiprocessors, 1));
  shape.max_threads_per_group = device.limits.max_threads_per_group;
  return shape;
}

dsl::GeometryQuery geometry_query(const ir::Kernel& kernel,
                                  const std::map<std::string, runtime::Scalar>& constants,
                                  const std::map<std::string, std::uint64_t>& elements,
                                  const dsl::DeviceShape& device) {
  dsl::GeometryQuery query;
  query.dtype = kernel.dtype;
  for (const auto& [name, value] : constants) query.constants.emplace(name, value.as_double());
  for (const auto& [name, count] : elements) query.elements.emplace(name, count);
  query.device = device;
  return query;
}

std::optional<runtime::Grid> geometry_grid(const ir::Kernel& kernel,
                                           const dsl::GeometryQuery& query,
                                           const dsl::TuningConfig& config) {
  const std::optional<dsl::Geometry> geometry = dsl::geometry_for(kernel.name, query, config);
  if (!geometry) return std::nullopt;
  return runtime::Grid{runtime_dim3(geometry->groups),
                       runtime_dim3(query.fixed_threads.value_or(geometry->threads))};
}

runtime::Grid geometry_grid(const TestSetup& setup) {
  std::map<std::string, std::uint64_t> elements;
  for (const auto& [name, tensor] : setup.inputs()) elements.emplace(name, tensor.count());
  for (const auto& [name, count] : setup.outputs()) elements.emplace(name, count);
  const ir::Kernel& kernel = setup.kernel();
  const auto grid = geometry_grid(kernel, geometry_query(kernel, setup.constants(), elements, {}),
                                  setup.tuning());
  if (!grid) throw Error(fmt::format("kernel {} has no geometry (IRON_GEOMETRY)", kernel.name));
  return *grid;
}

}  // namespace iron::testing
