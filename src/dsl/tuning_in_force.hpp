/// The defaults of a kernel's tuning knobs put in force for a trace reached without
/// kernel_ir_for (a registry walk: `iron build`, `iron inspect`, the tests of every kernel), so
/// that tuned() always has a configuration to read while a kernel is traced.
#pragma once

#include <string_view>

namespace iron::dsl::detail {

/// Puts kernel `kernel`'s defaults in force until destroyed, unless a configuration for it
/// already is (kernel_ir_for with a configuration).
class DefaultTuning {
 public:
  explicit DefaultTuning(std::string_view kernel);
  ~DefaultTuning();
  DefaultTuning(const DefaultTuning&) = delete;
  DefaultTuning& operator=(const DefaultTuning&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace iron::dsl::detail
