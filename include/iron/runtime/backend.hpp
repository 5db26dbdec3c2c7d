/// Backends behind one interface: each runs a Launch on its device. The backend registry lists
/// every backend Iron knows (the simulator, CUDA, Metal) with whether it can run here, how to
/// make one, and the binary `iron build` can compile ahead of time for it; `--backend`, `iron
/// test`, `iron run` and `iron device` read it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iron/codegen/target.hpp"
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

/// Whether a backend (or a binary compiler) can run here, and if not, why.
struct BackendStatus {
  std::string name;
  bool available = false;
  std::string reason;
};

/// A binary a backend loads, which `iron build --emit NAME` compiles ahead of time from the
/// source of the backend's target.
struct BinaryFormat {
  std::string_view name;      ///< "cubin": the `--emit` value, the output folder and extension
  std::string_view compiler;  ///< "NVRTC": what compiles it, for messages
  /// Whether the compiler is here, and if not, why.
  BackendStatus (*status)();
  /// The binary of `source`, whose kernel is `symbol`, for `profile`; Error when it fails.
  std::vector<std::byte> (*compile)(const std::string& source, const std::string& symbol,
                                    const codegen::TargetProfile& profile);
};

/// One backend Iron knows.
struct BackendEntry {
  std::string_view name;  ///< "sim", "cuda", "metal": the `--backend` value
  /// The emitting target whose source it runs ("cuda", "msl"); "" for one that runs the IR.
  std::string_view target;
  bool device;     ///< runs on a GPU: `--backend auto` takes the first one available
  bool sanitizer;  ///< checks every access, barrier and race: `iron test` runs it first
  /// Whether it can run here, and if not, why (found once per process).
  BackendStatus (*status)();
  /// A new instance; only called when status() says it is available.
  std::unique_ptr<Backend> (*make)();
  /// The binary `iron build` can compile for it, if it loads one.
  std::optional<BinaryFormat> binary;
};

/// Every backend Iron knows, the simulator first.
const std::vector<BackendEntry>& backends();

/// The entry named `name`; nullptr for none.
const BackendEntry* find_backend(std::string_view name);

/// The backend `--backend auto` runs: the first device backend available here, else the
/// simulator.
const BackendEntry& auto_backend();

/// A backend by name (a backends() name, or "auto"); Error naming why a named backend is
/// unavailable, or the choices for an unknown name.
std::unique_ptr<Backend> make_backend(std::string_view name);

/// Every backend's status, in backends() order.
std::vector<BackendStatus> backend_statuses();

}  // namespace iron::runtime
