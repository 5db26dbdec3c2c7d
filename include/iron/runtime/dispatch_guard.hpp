/// The check every backend runs before a launch: arguments against the kernel's parameters, the
/// grid against the kernel's dispatch contract (group sizes, group counts) and the device's
/// limits, and every tensor's element count against its declared layout and its index type.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "iron/core/error.hpp"
#include "iron/core/specialization.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::runtime {

/// What one device allows per launch.
struct DeviceLimits {
  std::uint32_t max_threads_per_group = 1024;
  std::uint64_t max_shared_bytes = std::uint64_t{48} * 1024;
  std::uint32_t max_groups[3] = {2147483647u, 65535, 65535};
};

/// A tensor argument as the guard sees it, wherever it lives (host or device): its dtype and
/// size in bytes, or null.
struct TensorExtent {
  DType dtype = DType::F32;
  std::uint64_t bytes = 0;
  bool null = false;
};
/// One argument as the guard sees it: a tensor's extent or a constexpr scalar.
using GuardArg = std::variant<TensorExtent, Scalar>;

/// Bytes of threadgroup memory the kernel needs: each allocation rounded up to 16 bytes.
std::uint64_t shared_bytes(const ir::Kernel& kernel);

/// What the guard derives from a kernel's IR alone, the same for every launch: its threadgroup
/// memory (shared_bytes) and, for each parameter, the most elements it can have for the
/// kernel's index arithmetic: the largest value of the narrowest index type of its loads,
/// stores and atomics (u32: 2^32 - 1, i32: 2^31 - 1), so that one past the last element is
/// representable too; no access, no limit. Deriving them copies and walks the IR, so a caller
/// that launches one kernel many times derives them once (DeviceKernel does).
struct KernelFacts {
  std::uint64_t shared_bytes = 0;
  std::vector<std::uint64_t> index_limits;  ///< one a parameter
  ir::SpecializationPlan specializations;   ///< what a launch binds (launch_specialization)
};
KernelFacts kernel_facts(const ir::Kernel& kernel);

/// Throws DispatchError "KERNEL: dispatch refused, nothing launched: RULE (VALUES) (WHERE)" for
/// the first broken rule: argument count, kinds and dtypes; group counts; threads per group;
/// every size rule of the contract; every constexpr rule (`require_multiple_of`); the
/// reduction mode's one-dimensional groups; threadgroup
/// memory; every grid rule; every tensor's declared layout; every tensor's index limit. WHERE
/// names the declaration that failed and the kernel's dispatch(...) line.
void check_dispatch(const ir::Kernel& kernel, const std::vector<GuardArg>& args, const Grid& grid,
                    const DeviceLimits& limits = {});
/// The same with the kernel's facts derived beforehand (kernel_facts(kernel)).
void check_dispatch(const ir::Kernel& kernel, const std::vector<GuardArg>& args, const Grid& grid,
                    const DeviceLimits& limits, const KernelFacts& facts);
/// The same for host arguments.
void check_dispatch(const ir::Kernel& kernel, const std::vector<Arg>& args, const Grid& grid,
                    const DeviceLimits& limits = {});

}  // namespace iron::runtime
