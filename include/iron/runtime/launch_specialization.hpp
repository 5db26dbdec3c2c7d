/// The specialization a launch binds (iron/core/specialization.hpp): each bindable
/// specialization's value for the launch's constexpr arguments, and the key of the module
/// compiled for them.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "iron/core/specialization.hpp"
#include "iron/runtime/launch.hpp"

namespace iron::runtime {

/// The values `plan` gives for a launch with `args` (one per kernel parameter, a Scalar for each
/// constexpr one: Arg or DeviceArg); empty when the kernel has no bindable specialization or one
/// of them has no single value for these arguments (the launch then binds none).
template <class LaunchArg>
std::vector<bool> launch_specialization(const ir::SpecializationPlan& plan,
                                        const std::vector<LaunchArg>& args) {
  if (plan.size() == 0) return {};
  std::vector<ir::ScalarValue> params(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (const Scalar* s = std::get_if<Scalar>(&args[i])) {
      params[i] = ir::constant_value(s->dtype, s->f, s->i);
    }
  }
  return plan.values(params).value_or(std::vector<bool>{});
}

/// A key that tells the modules of one kernel apart by the specialization they bind: 0 for none
/// bound, else the values' bits with bit 63 set.
inline std::uint64_t specialization_key(const std::vector<bool>& values) {
  return values.empty() ? 0 : ir::specialization_bits(values) | (std::uint64_t{1} << 63);
}

}  // namespace iron::runtime
