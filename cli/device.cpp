/// `iron device`: every backend Iron knows, whether it can run here and, if not, why.
#include <fmt/format.h>

#include "commands.hpp"
#include "iron/runtime/backend.hpp"

namespace iron::cli {
namespace {

int list_devices() {
  const std::string best(runtime::make_backend("auto")->name());
  for (const auto& s : runtime::backend_statuses()) {
    if (s.available) {
      fmt::print("{:<6} available{}\n", s.name, s.name == best ? " (--backend auto uses it)" : "");
    } else {
      fmt::print("{:<6} unavailable: {}\n", s.name, s.reason);
    }
  }
  return 0;
}

}  // namespace

Command add_device_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "device", "List the backends (sim, cuda, metal): whether each can run here and, if not, why");
  return {cmd, list_devices};
}

}  // namespace iron::cli
