/// Choosing kernels and targets from command-line words, shared by inspect, build, snap, diff.
#pragma once

#include <string>
#include <vector>

#include "iron/codegen/target.hpp"
#include "iron/dsl/kernel.hpp"

namespace iron::cli {

struct KernelForm {
  const dsl::KernelInfo* info;
  DType dtype;
};

/// The kernel named `name` in dtype `dtype` ("f32", "f16", "bf16"); UsageError otherwise.
KernelForm resolve_kernel(const std::string& name, const std::string& dtype);

/// Every registered kernel × dtype whose name matches `filter` (ECMAScript regex search; empty
/// matches all) and whose dtype is `dtype` (empty: all); UsageError when nothing matches.
std::vector<KernelForm> select_kernels(const std::string& filter, const std::string& dtype);

/// A target profile by name (sm_80, sm_90, metal3.0, metal3.1); UsageError otherwise.
codegen::TargetProfile resolve_profile(const std::string& name);

}  // namespace iron::cli
