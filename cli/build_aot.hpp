/// `iron build --aot DIR`: an ahead-of-time bundle of the selected kernel forms.
#pragma once

#include <string>

namespace iron::cli {

/// Compiles every kernel form matching `filter` and `dtype` to a cubin for each bundled
/// architecture (sm_80, sm_90) and writes them to `dir` with the launch header iron_aot.hpp
/// (iron/codegen/aot_bundle.hpp). Throws Error when NVRTC is missing or a compile fails.
int build_aot(const std::string& dir, const std::string& filter, const std::string& dtype);

}  // namespace iron::cli
