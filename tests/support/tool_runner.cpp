/// Finding, running and capturing an external tool with posix_spawn.
#include "support/tool_runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <system_error>

#include "iron/core/error.hpp"

extern char** environ;  // NOLINT: POSIX declares it nowhere

namespace iron::checks {
namespace {

namespace fs = std::filesystem;

std::string system_error(const char* call, int error) {
  return fmt::format("{} failed: {}", call, std::strerror(error));
}

/// posix_spawn file actions, destroyed on every path out.
class FileActions {
 public:
  FileActions() {
    if (const int error = posix_spawn_file_actions_init(&actions_); error != 0) {
      throw Error(system_error("posix_spawn_file_actions_init", error));
    }
  }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }

  void dup2(int from, int to) {
    if (const int error = posix_spawn_file_actions_adddup2(&actions_, from, to); error != 0) {
      throw Error(system_error("posix_spawn_file_actions_adddup2", error));
    }
  }
  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_{};
};

/// Both ends of a pipe whose descriptors close on exec; each end is closed once.
class Pipe {
 public:
  Pipe() {
    if (pipe2(fds_, O_CLOEXEC) != 0) throw Error(system_error("pipe2", errno));
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    close_read();
    close_write();
  }
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }
  void close_read() { close_end(0); }
  void close_write() { close_end(1); }

 private:
  void close_end(int end) {
    if (fds_[end] >= 0) ::close(fds_[end]);
    fds_[end] = -1;
  }
  int fds_[2] = {-1, -1};
};

}  // namespace

std::optional<fs::path> find_program(std::initializer_list<const char*> names) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  for (const char* name : names) {
    std::string_view folders = path;
    while (true) {
      const std::size_t colon = folders.find(':');
      const std::string_view folder = folders.substr(0, colon);
      const fs::path candidate = fs::path(folder.empty() ? "." : folder) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
      if (colon == std::string_view::npos) break;
      folders.remove_prefix(colon + 1);
    }
  }
  return std::nullopt;
}

ScratchDir::ScratchDir(const std::string& prefix) {
  std::error_code error;
  const fs::path temp = fs::temp_directory_path(error);
  if (error) throw Error("cannot find the temp folder: " + error.message());
  std::string pattern = (temp / (prefix + "XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) throw Error(system_error("mkdtemp", errno));
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;  // a leftover temp folder is not worth failing a check for
  fs::remove_all(path_, ignored);
}

ToolRun run_tool(const std::vector<std::string>& argv) {
  Pipe pipe;
  FileActions actions;
  actions.dup2(pipe.write_end(), STDOUT_FILENO);
  actions.dup2(pipe.write_end(), STDERR_FILENO);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (const int error = posix_spawn(&pid, args[0], actions.get(), nullptr, args.data(), environ);
      error != 0) {
    throw Error(fmt::format("cannot run {}: {}", argv[0], system_error("posix_spawn", error)));
  }
  pipe.close_write();

  ToolRun run;
  char buffer[4096];
  int read_error = 0;
  while (true) {
    const ssize_t got = read(pipe.read_end(), buffer, sizeof buffer);
    if (got > 0) {
      run.output.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      read_error = got == 0 ? 0 : errno;
      break;
    }
  }
  int status = 0;  // wait even after a read error, so no zombie is left behind
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      throw Error(fmt::format("waiting for {}: {}", argv[0], system_error("waitpid", errno)));
    }
  }
  if (read_error != 0) {
    throw Error(
        fmt::format("reading the output of {}: {}", argv[0], system_error("read", read_error)));
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

}  // namespace iron::checks
