/// Backends behind one interface: each runs a Launch on its device. `sim` is always present;
/// `cuda` and `metal` report why they are absent when they cannot run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iron/runtime/launch.hpp"

namespace iron::runtime {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  /// Runs the launch after the dispatch guard accepted it; outputs are written back in place.
  virtual void run(const Launch& launch) = 0;
  /// After a run: the source location ("file:line") of the store that last wrote element
  /// `index` of tensor parameter `param`, "" when no thread wrote it, nullopt when the backend
  /// cannot tell (only the simulator can).
  virtual std::optional<std::string> element_writer(std::size_t /*param*/,
                                                    std::uint64_t /*index*/) const {
    return std::nullopt;
  }
};

/// A backend by name ("sim", or "auto" for the best one present); Error naming why a named
/// backend is unavailable.
std::unique_ptr<Backend> make_backend(std::string_view name);

/// Every backend name Iron knows, with whether it can run here and, if not, why.
struct BackendStatus {
  std::string name;
  bool available = false;
  std::string reason;
};
std::vector<BackendStatus> backend_statuses();

}  // namespace iron::runtime
