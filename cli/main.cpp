/// The `iron` command line: list, inspect, build, test, bench, device, cache, snap, diff, run,
/// warmup, tune.
#include <fmt/format.h>

#include <exception>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "iron/dsl/registration.hpp"

namespace {

constexpr std::string_view kReportBug =
    "this is a bug in Iron: please report it with the command line that caused it";

/// Prints what `thrown` says and returns the exit status of its kind: a usage mistake, a refused
/// kernel or launch (any other iron::Error), or Iron's own bug (anything else).
int report_exception(const std::exception_ptr& thrown) {
  try {
    std::rethrow_exception(thrown);
  } catch (const iron::UsageError& e) {
    fmt::print(stderr, "iron: {}\n", e.what());
    return iron::cli::kExitUsage;
  } catch (const iron::Error& e) {
    fmt::print(stderr, "iron: {}\n", e.what());
    return iron::cli::kExitRefused;
  } catch (const iron::InternalError& e) {
    fmt::print(stderr, "iron: {}\n{}\n", e.what(), kReportBug);
  } catch (const std::exception& e) {
    fmt::print(stderr, "iron: internal error: {}\n{}\n", e.what(), kReportBug);
  } catch (...) {
    fmt::print(stderr, "iron: internal error: an exception of unknown type\n{}\n", kReportBug);
  }
  return iron::cli::kExitInternal;
}

/// Parses the command line and runs the command it names; returns its exit status.
int run_command(int argc, char** argv) {
  CLI::App app{
      "Iron: GPU kernels written once in a C++ DSL, traced into Iron IR, compiled to CUDA C++ "
      "and Metal Shading Language, and run on the CPU simulator.",
      "iron"};
  app.set_version_flag("--version", IRON_VERSION);
  app.require_subcommand(1);
  const std::vector<iron::cli::Command> commands = {
      iron::cli::add_list_command(app),   iron::cli::add_inspect_command(app),
      iron::cli::add_build_command(app),  iron::cli::add_test_command(app),
      iron::cli::add_device_command(app), iron::cli::add_cache_command(app),
      iron::cli::add_snap_command(app),   iron::cli::add_diff_command(app),
      iron::cli::add_run_command(app),    iron::cli::add_bench_command(app),
      iron::cli::add_warmup_command(app), iron::cli::add_tune_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? iron::cli::kExitSuccess : iron::cli::kExitUsage;
  }
  // Kernels, tests and benches registered twice make every command report them, not only the
  // commands that read the registries: the binary itself is broken.
  iron::dsl::check_registrations();
  for (const auto& command : commands) {
    if (command.parser->parsed()) return command.run();
  }
  return iron::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_command(argc, argv);
  } catch (...) {
    return report_exception(std::current_exception());
  }
}
