/// The tensor maps a kernel with TMA copies is launched with (ir::Kernel::tensor_maps): each
/// encoded by the driver for the launch's tensor address, sizes and box, and cached per
/// (address, element type, sizes, box, swizzle), so a map is never reused for another buffer.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "driver.hpp"
#include "iron/core/ir.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::runtime::cuda {

/// CUtensorMap: 128 opaque bytes, passed to the kernel by value.
struct alignas(64) EncodedTensorMap {
  std::array<std::uint64_t, 16> opaque{};
};

/// `maps` (those of `kernel` once lowered: PreparedKernel::tensor_maps) for a launch with `args`
/// (constexprs give each map's base, height and width) and `addresses` (the device address of each
/// tensor argument). A map whose tensor is not 16-byte aligned, or whose row is not a multiple of
/// 16 bytes, cannot be encoded: the kernel only reads it on the path that has those alignments (its
/// copies' own precondition), so it gets zeros. Throws iron::Error naming the kernel when the
/// driver refuses a map it can have.
std::vector<EncodedTensorMap> encode_tensor_maps(const ir::Kernel& kernel,
                                                 const std::vector<ir::TensorMap>& maps,
                                                 const std::vector<Arg>& args,
                                                 const std::vector<CUdeviceptr>& addresses);

}  // namespace iron::runtime::cuda
