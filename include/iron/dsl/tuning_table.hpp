/// Tuning files (docs/tuning.md): the configuration `iron tune` measured fastest for each
/// (kernel, dtype, shape bucket, device, driver), one entry a line of text that can be read,
/// diffed and committed. `iron bench --tuning FILE` and the host entry points (iron::lib, through
/// IRON_TUNING_FILE) trace each launch's kernel under the entry of its shape, when there is one.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "iron/core/dtype.hpp"
#include "iron/core/ir.hpp"
#include "iron/dsl/tuning.hpp"

namespace iron::dsl {

/// The shape a tuning entry stands for: each integer constexpr of the kernel rounded up to a
/// power of two (m = 3000 and m = 4096 share m's bucket 2049..4096), by name.
using ShapeBucket = std::map<std::string, std::uint64_t, std::less<>>;

/// The bucket of a launch of `kernel` with these constexpr values (float constexprs, such as a
/// scale, are left out); Error when an integer constexpr of the kernel is not given.
ShapeBucket shape_bucket(const ir::Kernel& kernel,
                         const std::map<std::string, double, std::less<>>& constants);

/// One line of a tuning file.
struct TuningEntry {
  std::string kernel;
  DType dtype = DType::F32;
  ShapeBucket bucket;
  std::string device;  ///< the device's name, as `iron device` shows it
  std::string driver;  ///< the CUDA driver version, "13.0"
  TuningConfig config;
  std::string measured;  ///< what the tuner saw: times, the shape timed, the date
};

/// The entries of a tuning file, at most one per (kernel, dtype, bucket, device, driver).
class TuningTable {
 public:
  /// The table in `text`; Error naming `origin` and the line of the first malformed entry.
  static TuningTable parse(std::string_view text, const std::string& origin);
  /// The table in file `path`; Error when it cannot be read or is malformed.
  static TuningTable read(const std::string& path);
  /// The file's text: a header saying what it is, then the entries sorted by their key.
  std::string text() const;
  /// Writes text() to `path` (through a temporary file, so that a failed write loses nothing).
  void write(const std::string& path) const;

  /// The entry of this key, or nullptr.
  const TuningEntry* find(std::string_view kernel, DType dtype, const ShapeBucket& bucket,
                          std::string_view device, std::string_view driver) const;
  /// The configuration of the entry for a launch of `kernel` with these constexprs on the device
  /// named `device` under CUDA driver `driver` ("13.0"), or, where the table has none, the
  /// kernel's own rule's (TuningSpace::prefer), less the knobs it sets to their defaults; the
  /// empty configuration (the kernel's defaults) when the kernel has no knobs, or neither an
  /// entry nor a rule.
  TuningConfig config_for(const ir::Kernel& kernel,
                          const std::map<std::string, double, std::less<>>& constants,
                          std::string_view device, std::string_view driver) const;
  /// Adds `entry`, replacing the one with the same key.
  void put(TuningEntry entry);
  const std::vector<TuningEntry>& entries() const { return entries_; }

 private:
  std::vector<TuningEntry> entries_;
};

/// "k=2049..4096,m=1..1" (names in order).
std::string format_bucket(const ShapeBucket& bucket);

/// The entries of the committed tuning files (tuning/*.txt, measured on the devices Iron is
/// benchmarked on), compiled into the library.
const TuningTable& builtin_tuning_table();

/// builtin_tuning_table() (none where `builtin` is "0") with the entries of the file `path`
/// (none where null or empty) put over it: the file's entry wins where both have one. Error
/// naming IRON_TUNING_FILE when the file cannot be read or is malformed.
TuningTable merged_tuning_table(const char* path, const char* builtin);

/// merged_tuning_table(IRON_TUNING_FILE, IRON_TUNING_BUILTIN), made once per process. Error
/// (every call) when the file cannot be read or is malformed.
const TuningTable& environment_tuning_table();

/// environment_tuning_table().config_for(…): what launches through the host entry points and
/// iron_torch run under.
TuningConfig environment_tuning_for(const ir::Kernel& kernel,
                                    const std::map<std::string, double, std::less<>>& constants,
                                    std::string_view device, std::string_view driver);

}  // namespace iron::dsl
