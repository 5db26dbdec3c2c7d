/// Launch geometry that lives with each kernel: IRON_GEOMETRY(kernel) { … } next to the kernel
/// says which threads per group and group counts it wants for a shape, so its bench, `iron run`
/// and applications launch it without guessing a grid.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iron/core/dtype.hpp"
#include "iron/core/ir.hpp"
#include "iron/core/source_location.hpp"

namespace iron::dsl {

/// Extents along x, y and z: group counts, or threads per group.
struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  bool operator==(const Dim3&) const = default;
};

/// The device a launch is planned for. The defaults (a device of 132 multiprocessors, groups of
/// up to 1024 threads) stand for a device that cannot be asked, such as the simulator.
struct DeviceShape {
  std::uint32_t multiprocessors = 132;
  std::uint32_t max_threads_per_group = 1024;
};

/// What is known when a kernel is launched: the dtype T is bound to, the constexprs by name, the
/// element count of each tensor by name, the device, and the threads per group the caller fixed
/// (`iron run --tpg`), if any.
struct GeometryQuery {
  DType dtype = DType::F32;
  std::map<std::string, double, std::less<>> constants;
  std::map<std::string, std::uint64_t, std::less<>> elements;
  DeviceShape device;
  std::optional<Dim3> fixed_threads;

  /// The value of integer constexpr `name`; Error when it is not given or not a whole number
  /// of at least zero.
  std::uint64_t constant(std::string_view name) const;
  /// The element count of tensor `name`; Error when it is not given.
  std::uint64_t tensor_elements(std::string_view name) const;
  /// The threads per group along x the caller fixed, else `preferred`: a geometry plans its
  /// group count for this value.
  std::uint32_t threads_per_group(std::uint32_t preferred) const;
};

/// A launch: group counts and threads per group along each axis.
struct Geometry {
  Dim3 groups;
  Dim3 threads;

  /// One thread per item: ceil(items / tpg) groups of tpg threads (at least one group; the
  /// count saturates at 2^32 - 1 so that an oversized grid is refused rather than wrapped).
  static Geometry elementwise(std::uint64_t items, std::uint32_t tpg);
  /// One group of tpg threads per row.
  static Geometry per_row(std::uint64_t rows, std::uint32_t tpg);
};

/// The 16-byte vectors that `elements` values of `dtype` fill, the last one partly (at least
/// one): how many threads a vectorized elementwise loop keeps busy with one access each.
std::uint64_t vector_count(std::uint64_t elements, DType dtype);

/// The tiles of `tile` elements that cover `size`, the last one partly: ceil(size / tile), at
/// least one, saturated at 2^32 - 1 (a group count along one axis of a tiled launch).
std::uint32_t tile_count(std::uint64_t size, std::uint64_t tile);

/// `wanted` threads rounded up to a multiple of 32 (a whole number of simdgroups), between 32
/// and `most`.
std::uint32_t whole_simdgroups(std::uint64_t wanted, std::uint32_t most);

/// A kernel's geometry function.
using GeometryFunction = Geometry (*)(const GeometryQuery&);

/// A registered geometry: the kernel it is for, where it is defined, and the function.
struct GeometryInfo {
  std::string name;
  ir::SourceLoc loc;
  GeometryFunction function = nullptr;
};

/// Every geometry linked into the program, sorted by kernel name.
const std::vector<GeometryInfo>& registered_geometries();
/// The geometry of kernel `name`, or nullptr when it registered none.
const GeometryInfo* find_geometry(std::string_view name);
/// The geometry kernel `name` wants for `query` (its tuning knobs at their defaults), or nullopt
/// when it registered none. An Error the function throws (a constexpr or tensor it needs is not
/// given) names the kernel.
std::optional<Geometry> geometry_for(std::string_view name, const GeometryQuery& query);

namespace detail {

/// Registers `function` as the geometry of kernel `name`. A kernel file is compiled into both
/// the kernel library and its tests, so the same definition (same name and place) may arrive
/// twice and counts once; another place for the same name is a registration problem.
struct GeometryRegistrar {
  GeometryRegistrar(const char* name, GeometryFunction function,
                    SourceLocation where = SourceLocation::current());
};

}  // namespace detail
}  // namespace iron::dsl

/// Defines and registers the geometry of kernel NAME (an IRON_KERNEL, or one IRON_KERNEL_VARIANT
/// by its full name, e.g. iron_hadamard_n64). The body sees `q`, the GeometryQuery, and returns
/// a Geometry:
///   IRON_GEOMETRY(iron_scale) { return Geometry::elementwise(q.constant("n"), 256); }
#define IRON_GEOMETRY(NAME)                                                                       \
  static ::iron::dsl::Geometry NAME##_geometry(const ::iron::dsl::GeometryQuery& q);              \
  [[maybe_unused]] static const ::iron::dsl::detail::GeometryRegistrar NAME##_geometry_registrar{ \
      #NAME, &NAME##_geometry};                                                                   \
  static ::iron::dsl::Geometry NAME##_geometry([[maybe_unused]] const ::iron::dsl::GeometryQuery& q)
