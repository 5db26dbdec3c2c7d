/// The `iron` command line: list, inspect, build, test, bench, device, cache, snap, diff, run.
#include <fmt/format.h>

#include <vector>

#include "commands.hpp"
#include "iron/dsl/registration.hpp"

int main(int argc, char** argv) {
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
      iron::cli::add_run_command(app),    iron::cli::add_bench_command(app)};
  try {
    app.parse(argc, argv);
    // Kernels, tests and benches registered twice make every command report them, not only
    // the commands that read the registries: the binary itself is broken.
    iron::dsl::check_registrations();
    for (const auto& command : commands) {
      if (command.parser->parsed()) return command.run();
    }
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const iron::cli::UsageError& e) {
    fmt::print(stderr, "iron: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "iron: {}\n", e.what());
    return 1;
  } catch (...) {
    fmt::print(stderr, "iron: an unknown error was thrown\n");
    return 1;
  }
  return 2;
}
