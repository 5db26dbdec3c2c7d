/// What the dispatch guard says about one launch of a library kernel with given constexprs, for
/// the contract tests: tensors empty (the constexpr rules are checked before any tensor's size),
/// `groups` groups of `threads`, a 9.0 device's shared memory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "iron/iron.hpp"
#include "iron/runtime/dispatch_guard.hpp"

namespace iron::test_support {

struct GuardLaunch {
  std::map<std::string, std::int64_t> integers;  ///< every integer constexpr, by name
  std::map<std::string, double> floats;          ///< float constexprs (1.0 where left out)
  std::uint32_t threads = 128;
  dsl::TuningConfig config;  ///< the knobs the kernel is traced under (its defaults where empty)
  std::uint32_t groups = 1;  ///< groups along x
};

/// The refusal's message, or "not refused".
inline std::string guard_refusal(const std::string& kernel, const GuardLaunch& launch) {
  const ir::Kernel k = dsl::kernel_ir_for(kernel, DType::BF16, launch.config);
  std::vector<runtime::GuardArg> args;
  for (const ir::Param& p : k.params) {
    if (p.kind != ir::ParamKind::Constexpr) {
      args.emplace_back(runtime::TensorExtent{p.dtype, 0, false});
    } else if (is_integer(p.dtype)) {
      args.emplace_back(runtime::Scalar{p.dtype, 0.0, launch.integers.at(p.name)});
    } else {
      const auto it = launch.floats.find(p.name);
      args.emplace_back(runtime::Scalar{p.dtype, it == launch.floats.end() ? 1.0 : it->second, 0});
    }
  }
  runtime::DeviceLimits hopper;
  hopper.max_shared_bytes = std::uint64_t{227} * 1024;
  try {
    runtime::check_dispatch(k, args, {{launch.groups, 1, 1}, {launch.threads, 1, 1}}, hopper);
  } catch (const DispatchError& e) {
    return e.what();
  }
  return "not refused";
}

}  // namespace iron::test_support
