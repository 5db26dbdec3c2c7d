/// The `iron` subcommands: each adds its parser to the app and returns what runs it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "iron/core/error.hpp"

namespace iron::cli {

/// A mistake on the command line or in an input file; `iron` exits with kExitUsage.
using UsageError = iron::UsageError;

/// The exit statuses of `iron`, one per kind of outcome (docs/cli.md).
enum ExitStatus : int {
  kExitSuccess = 0,      ///< the command did what was asked
  kExitCheckFailed = 1,  ///< a test, bench or snapshot check ran and failed
  kExitUsage = 2,        ///< the command line or an input file cannot be used
  kExitRefused = 3,      ///< the kernel or its launch was refused (any other iron::Error)
  kExitInternal = 4,     ///< a bug in Iron itself
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
Command add_warmup_command(CLI::App& app);
Command add_tune_command(CLI::App& app);

}  // namespace iron::cli
