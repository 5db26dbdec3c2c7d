/// Specializations: `%s = specialize %c` is %c, but where %c is a function of constexpr
/// parameters and constants alone, a launch knows its value before the kernel runs, so the module
/// it loads may be compiled with %s bound to that value (select_target_paths keeps only the
/// branch taken, and its shared memory). A kernel written as `IRON_IF(specialized(k % 8u == 0u))
/// { fast path } IRON_ELSE { general path }` then compiles one path per module, not both.
/// Binding changes no result: the bound value is the one %c would have had.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "iron/core/evaluate.hpp"
#include "iron/core/ir.hpp"

namespace iron::ir {

/// The most specializations of one kernel that launches bind; later ones stay conditions.
inline constexpr std::size_t kMaxSpecializations = 16;

/// Which values of a kernel are launch constants: computed from constants and constexpr
/// parameters by exact pure ops, so every thread of a launch holds the same one (a branch on one
/// is taken by all of them or by none).
class LaunchConstants {
 public:
  explicit LaunchConstants(const Kernel& kernel);
  bool contains(ValueId v) const;

 private:
  std::unordered_map<ValueId, const Op*> defs_;
  mutable std::unordered_map<ValueId, bool> known_;
};

/// The kernel's bindable specializations, in program order: the results of its `specialize`
/// ops whose condition is computed from constants and constexpr parameters by exact pure ops
/// (no approximate instruction), at most kMaxSpecializations of them.
std::vector<ValueId> bindable_specializations(const Kernel& kernel);

/// How to compute each bindable specialization from a launch's constexpr values, derived once
/// per kernel so that a launch evaluates a few ops, not the kernel.
class SpecializationPlan {
 public:
  SpecializationPlan() = default;
  explicit SpecializationPlan(const Kernel& kernel);

  /// The number of bindable specializations (0: every launch loads the one module).
  std::size_t size() const { return results_.size(); }

  /// Each bindable specialization's value for a launch whose constexpr parameter i holds
  /// params[i] (entries of tensor parameters are ignored), or nullopt when one is not the single
  /// value a device computes (a division by zero, a NaN) or a parameter it reads has no value of
  /// its type in `params`: such a launch binds nothing.
  std::optional<std::vector<bool>> values(std::span<const ScalarValue> params) const;

 private:
  /// One op of a condition's slice: its operands are earlier steps.
  struct Step {
    OpKind kind = OpKind::Const;
    DType type = DType::U32;
    std::vector<std::uint32_t> args;
    ScalarValue constant;  ///< Const: its value
    int param = -1;        ///< ConstexprRef: the parameter
  };
  std::vector<Step> steps_;
  std::vector<std::uint32_t> results_;  ///< the step of each specialization's condition
};

/// Every bindable specialization of `kernel` true: the case a kernel states as its usual one,
/// which `iron warmup` and the tuner compile ahead of the launches.
std::vector<bool> usual_specialization(const Kernel& kernel);

/// The values a launch of `kernel` whose constexpr parameters hold `constants` (by name) binds:
/// empty when the kernel has none or one has no single value for them (the launch binds none).
/// Error naming the first constexpr parameter that `constants` lacks.
std::vector<bool> specialization_for(const Kernel& kernel,
                                     const std::map<std::string, double, std::less<>>& constants);

/// The bits of `values` as one number (bit i: specialization i), for keys of loaded modules.
std::uint64_t specialization_bits(const std::vector<bool>& values);

}  // namespace iron::ir
