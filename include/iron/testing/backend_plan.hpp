/// Which backends `iron test --backend NAME` runs, and how its summary names the checks that ran:
/// `auto` on a machine with a GPU runs the simulator (whose sanitizer checks every access,
/// barrier and race) and then the GPU, so a plain run never skips the sanitizer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "iron/runtime/backend.hpp"

namespace iron::testing {

/// The backends to run, in order, given the status of those Iron knows (`statuses`, see
/// runtime::backend_statuses()) and what the registry says of each: "auto": the sanitizers
/// (sim), then the first device backend available (cuda); "all": the sanitizers, then every
/// other available backend; any other name: that backend alone (made later, so an unavailable
/// one is refused with its reason).
std::vector<std::string> test_backends(std::string_view requested,
                                       const std::vector<runtime::BackendStatus>& statuses);

/// The checks a run made, for the summary line: "sim sanitizer + cuda", "sim sanitizer",
/// "cuda only, no sanitizer" (a sanitizer is named as such).
std::string checks_label(const std::vector<std::string>& backends);

}  // namespace iron::testing
