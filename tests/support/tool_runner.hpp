/// Running an external tool for a check: finding it on PATH, a scratch folder for its input, and
/// the run itself with its output captured.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace iron::checks {

/// The first of `names` that is an executable file in a folder of $PATH, as a full path.
std::optional<std::filesystem::path> find_program(std::initializer_list<const char*> names);

/// A fresh folder under the system temp folder, removed with everything in it on destruction.
class ScratchDir {
 public:
  /// `prefix` starts the folder's name; iron::Error when it cannot be made.
  explicit ScratchDir(const std::string& prefix);
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct ToolRun {
  int exit_code = 0;   ///< the exit status; 128 + N when killed by signal N
  std::string output;  ///< stdout and stderr, interleaved as written
};

/// Runs `argv` (argv[0] is the program's path) and waits for it; iron::Error naming the failing
/// system call when it cannot be started or waited for.
ToolRun run_tool(const std::vector<std::string>& argv);

}  // namespace iron::checks
