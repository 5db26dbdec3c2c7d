/// The geometry registry, the query's accessors and the shapes geometry functions share.
#include "iron/dsl/geometry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "iron/core/error.hpp"
#include "iron/dsl/registration.hpp"
#include "iron/dsl/tracer.hpp"
#include "iron/dsl/tuning.hpp"

namespace iron::dsl {
namespace {

std::vector<GeometryInfo>& registry() {
  static std::vector<GeometryInfo> geometries;
  return geometries;
}

std::uint32_t saturated(std::uint64_t n) {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(n, std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace

std::uint64_t GeometryQuery::constant(std::string_view name) const {
  const auto found = constants.find(name);
  if (found == constants.end()) {
    throw Error(fmt::format("the geometry needs constexpr '{}', which is not given", name));
  }
  const double v = found->second;
  if (!(v >= 0.0) || v != std::floor(v) ||
      v > static_cast<double>(std::numeric_limits<std::uint64_t>::max())) {
    throw Error(
        fmt::format("the geometry needs constexpr '{}' to be a whole number of at least "
                    "zero, not {}",
                    name, v));
  }
  return static_cast<std::uint64_t>(v);
}

std::uint64_t GeometryQuery::tensor_elements(std::string_view name) const {
  const auto found = elements.find(name);
  if (found == elements.end()) {
    throw Error(
        fmt::format("the geometry needs the size of tensor '{}', which is not given", name));
  }
  return found->second;
}

std::uint32_t GeometryQuery::threads_per_group(std::uint32_t preferred) const {
  return fixed_threads ? fixed_threads->x : preferred;
}

Geometry Geometry::elementwise(std::uint64_t items, std::uint32_t tpg) {
  const std::uint64_t per_group = std::max<std::uint32_t>(tpg, 1);
  const std::uint64_t groups = std::max<std::uint64_t>((items + per_group - 1) / per_group, 1);
  return {{saturated(groups)}, {tpg}};
}

Geometry Geometry::per_row(std::uint64_t rows, std::uint32_t tpg) {
  return {{saturated(rows)}, {tpg}};
}

std::uint64_t vector_count(std::uint64_t elements, DType dtype) {
  constexpr std::uint64_t kVectorBytes = 16;
  const std::uint64_t per_vector = std::max<std::uint64_t>(kVectorBytes / dtype_size(dtype), 1);
  return std::max<std::uint64_t>((elements + per_vector - 1) / per_vector, 1);
}

std::uint32_t tile_count(std::uint64_t size, std::uint64_t tile) {
  return saturated(std::max<std::uint64_t>(size / tile + (size % tile != 0 ? 1 : 0), 1));
}

std::uint32_t whole_simdgroups(std::uint64_t wanted, std::uint32_t most) {
  constexpr std::uint64_t kSimdWidth = 32;
  const std::uint64_t rounded =
      (std::max<std::uint64_t>(wanted, 1) + kSimdWidth - 1) / kSimdWidth * kSimdWidth;
  return static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(rounded, kSimdWidth, std::max<std::uint64_t>(most, kSimdWidth)));
}

const std::vector<GeometryInfo>& registered_geometries() {
  check_registrations();
  return registry();
}

const GeometryInfo* find_geometry(std::string_view name) {
  const auto& all = registered_geometries();
  const auto at =
      std::lower_bound(all.begin(), all.end(), name,
                       [](const GeometryInfo& g, std::string_view n) { return g.name < n; });
  return at != all.end() && at->name == name ? &*at : nullptr;
}

std::optional<Geometry> geometry_for(std::string_view name, const GeometryQuery& query) {
  return geometry_for(name, query, TuningConfig{});
}

namespace detail {

GeometryRegistrar::GeometryRegistrar(const char* name, GeometryFunction function,
                                     SourceLocation where) {
  GeometryInfo info{name, to_loc(where), function};
  register_once(registry(), std::move(info), "geometry");
}

}  // namespace detail
}  // namespace iron::dsl
