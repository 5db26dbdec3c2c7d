/// The `iron` subcommands: each adds its parser to the app and returns what runs it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>

namespace iron::cli {

/// A mistake on the command line (unknown name, bad value); `iron` exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A subcommand's parser and its action, run once the parser matched; returns the exit status.
struct Command {
  CLI::App* parser;
  std::function<int()> run;
};

Command add_list_command(CLI::App& app);
Command add_inspect_command(CLI::App& app);
Command add_test_command(CLI::App& app);
Command add_device_command(CLI::App& app);
Command add_cache_command(CLI::App& app);
Command add_build_command(CLI::App& app);
Command add_snap_command(CLI::App& app);
Command add_diff_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_bench_command(CLI::App& app);

}  // namespace iron::cli
