/// The backend plan of `iron test`: the simulator's sanitizer first wherever it can run.
#include "iron/testing/backend_plan.hpp"

#include <algorithm>

namespace iron::testing {
namespace {

bool available(const std::vector<runtime::BackendStatus>& statuses, std::string_view name) {
  return std::any_of(statuses.begin(), statuses.end(), [&](const runtime::BackendStatus& s) {
    return s.name == name && s.available;
  });
}

}  // namespace

std::vector<std::string> test_backends(std::string_view requested,
                                       const std::vector<runtime::BackendStatus>& statuses) {
  if (requested == "auto") {
    std::vector<std::string> names{"sim"};
    if (available(statuses, "cuda")) names.emplace_back("cuda");
    return names;
  }
  if (requested != "all") return {std::string(requested)};
  std::vector<std::string> names{"sim"};
  for (const auto& s : statuses) {
    if (s.available && s.name != "sim") names.push_back(s.name);
  }
  return names;
}

std::string checks_label(const std::vector<std::string>& backends) {
  std::string label;
  for (const auto& name : backends) {
    if (!label.empty()) label += " + ";
    label += name == "sim" ? "sim sanitizer" : name;
  }
  const bool sanitized = std::find(backends.begin(), backends.end(), "sim") != backends.end();
  return sanitized ? label : label + " only, no sanitizer";
}

}  // namespace iron::testing
