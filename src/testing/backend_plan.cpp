/// The backend plan of `iron test`: the sanitizing backends first wherever they can run, then
/// the device backends the request asks for, as the backend registry describes them.
#include "iron/testing/backend_plan.hpp"

#include <algorithm>

namespace iron::testing {
namespace {

/// Whether the registry's entry named `name` is a sanitizer (the simulator).
bool sanitizes(std::string_view name) {
  const runtime::BackendEntry* entry = runtime::find_backend(name);
  return entry != nullptr && entry->sanitizer;
}

/// Whether the registry's entry named `name` runs on a GPU.
bool on_device(std::string_view name) {
  const runtime::BackendEntry* entry = runtime::find_backend(name);
  return entry != nullptr && entry->device;
}

}  // namespace

std::vector<std::string> test_backends(std::string_view requested,
                                       const std::vector<runtime::BackendStatus>& statuses) {
  if (requested != "auto" && requested != "all") return {std::string(requested)};
  std::vector<std::string> names;
  for (const auto& s : statuses) {
    if (s.available && sanitizes(s.name)) names.push_back(s.name);
  }
  for (const auto& s : statuses) {
    if (!s.available || sanitizes(s.name)) continue;
    if (requested == "all") {
      names.push_back(s.name);
    } else if (on_device(s.name)) {
      names.push_back(s.name);  // auto: the first device backend present
      break;
    }
  }
  return names;
}

std::string checks_label(const std::vector<std::string>& backends) {
  std::string label;
  for (const auto& name : backends) {
    if (!label.empty()) label += " + ";
    label += sanitizes(name) ? name + " sanitizer" : name;
  }
  const bool sanitized = std::any_of(backends.begin(), backends.end(), sanitizes);
  return sanitized ? label : label + " only, no sanitizer";
}

}  // namespace iron::testing
