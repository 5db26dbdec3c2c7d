/// A kernel's registered geometry as a launch grid, planned for the device a backend runs on:
/// what `iron run` uses when --grid or --tpg is left out, and what tests and benches use instead
/// of a grid worked out by hand.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "iron/dsl/geometry.hpp"
#include "iron/runtime/launch.hpp"
#include "iron/testing/test_setup.hpp"

namespace iron::testing {

/// The device backend `backend` ("sim", "cuda", "metal") launches on: the first CUDA device's
/// multiprocessors and group-size limit for "cuda" when one is present, else the defaults.
dsl::DeviceShape device_shape(std::string_view backend);

/// The query for `kernel` with these constexpr values and tensor element counts (by parameter
/// name), on `device`.
dsl::GeometryQuery geometry_query(const ir::Kernel& kernel,
                                  const std::map<std::string, runtime::Scalar>& constants,
                                  const std::map<std::string, std::uint64_t>& elements,
                                  const dsl::DeviceShape& device);

/// The grid the kernel's geometry gives for `query` under tuning configuration `config`, with the
/// threads per group the query fixed (if any) in place of the geometry's; nullopt when the
/// kernel registered no geometry.
std::optional<runtime::Grid> geometry_grid(const ir::Kernel& kernel,
                                           const dsl::GeometryQuery& query,
                                           const dsl::TuningConfig& config = {});

/// The grid the kernel's geometry gives for a test's constexprs, tensors and tuning
/// configuration, on the default device; Error when the kernel registered no geometry.
runtime::Grid geometry_grid(const TestSetup& setup);

}  // namespace iron::testing
