/// The check every backend runs before a launch: arguments against the kernel's parameters, the
/// grid against the kernel's dispatch contract and the device's limits.
#pragma once

#include <cstdint>
#include <vector>

#include "iron/core/error.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::runtime {

/// What one device allows per launch.
struct DeviceLimits {
  std::uint32_t max_threads_per_group = 1024;
  std::uint64_t max_shared_bytes = std::uint64_t{48} * 1024;
  std::uint32_t max_groups[3] = {2147483647u, 65535, 65535};
};

/// Bytes of threadgroup memory the kernel needs: each allocation rounded up to 16 bytes.
std::uint64_t shared_bytes(const ir::Kernel& kernel);

/// Throws DispatchError "KERNEL: dispatch refused, nothing launched: RULE (VALUES)" for the first
/// broken rule: argument count, kinds and dtypes; group counts; threads per group; every size
/// rule of the contract; the reduction mode's one-dimensional groups; threadgroup memory.
void check_dispatch(const ir::Kernel& kernel, const std::vector<Arg>& args, const Grid& grid,
                    const DeviceLimits& limits = {});

}  // namespace iron::runtime
