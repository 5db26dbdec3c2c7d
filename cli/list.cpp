/// `iron list [kernels|tests|benches|targets]`: the registered kernels, kernel tests and benches,
/// and the emitting targets with their profiles.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "iron/bench/registry.hpp"
#include "iron/codegen/targets.hpp"
#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/dsl/tuning.hpp"
#include "iron/testing/registry.hpp"
#include "kernel_params.hpp"

namespace iron::cli {
namespace {

struct Row {
  std::string name;
  std::string dtypes;
  std::string where;
  std::string detail;  ///< printed on its own line under the row when not empty
};

std::string dtype_names(const std::vector<DType>& dtypes) {
  std::string out;
  for (const DType d : dtypes) out += (out.empty() ? "" : " ") + std::string(dtype_name(d));
  return out;
}

void print_rows(const std::string& title, const std::vector<Row>& rows) {
  fmt::print("{} ({}):\n", title, rows.size());
  std::size_t name_width = 0;
  std::size_t dtypes_width = 0;
  for (const Row& r : rows) {
    name_width = std::max(name_width, r.name.size());
    dtypes_width = std::max(dtypes_width, r.dtypes.size());
  }
  for (const Row& r : rows) {
    fmt::print("  {:<{}}  {:<{}}  {}\n", r.name, name_width, r.dtypes, dtypes_width, r.where);
    if (!r.detail.empty()) fmt::print("      {}\n", r.detail);
  }
}

/// "tuning knobs: bm 128|64, bn 256|128|64" (each knob's values, the default first), or "" for a
/// kernel without knobs.
std::string knob_summary(const std::string& kernel) {
  const auto space = dsl::tuning_space(kernel);
  if (!space) return "";
  std::vector<std::string> knobs;
  for (const dsl::TuningKnob& k : space->knobs()) {
    knobs.push_back(fmt::format("{} {}", k.name, fmt::join(k.values, "|")));
  }
  return fmt::format("tuning knobs: {}", fmt::join(knobs, ", "));
}

/// With `params`, each kernel's parameters follow on an indented line of their own; a kernel
/// with tuning knobs has a line naming them.
void list_kernels(bool params) {
  std::vector<Row> rows;
  for (const auto& k : dsl::registered_kernels()) {
    std::vector<std::string> details;
    if (params) details.push_back(param_summary(k));
    if (std::string knobs = knob_summary(k.name); !knobs.empty()) details.push_back(knobs);
    rows.push_back({k.name, dtype_names(k.dtypes), format_loc(k.loc),
                    fmt::format("{}", fmt::join(details, "\n      "))});
  }
  print_rows("kernels", rows);
}

void list_tests() {
  std::vector<Row> rows;
  for (const auto& t : testing::registered_tests()) {
    std::vector<DType> dtypes;
    for (const auto& d : t.dtypes) dtypes.push_back(d.dtype);
    rows.push_back({t.name, dtype_names(dtypes), format_loc(t.loc), ""});
  }
  print_rows("tests", rows);
}

void list_benches() {
  std::vector<Row> rows;
  for (const auto& b : bench::registered_benches()) {
    rows.push_back({b.name, dtype_names(b.dtypes), format_loc(b.loc), ""});
  }
  print_rows("benches", rows);
}

void list_targets() {
  std::vector<Row> rows;
  for (const codegen::Target& t : codegen::targets()) {
    rows.push_back({std::string(t.name), std::string(t.extension),
                    fmt::format("{}; profiles {} (default {})", t.language,
                                fmt::join(t.listed_profiles, ", "), t.default_profile),
                    ""});
  }
  print_rows("targets", rows);
}

}  // namespace

Command add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "list",
      "List the registered kernels (with their dtypes and source location, and with --params "
      "their parameters), kernel tests and benches (with the dtypes they run with), and the "
      "targets code is emitted for (with their file extension, language and profiles)");
  auto what = std::make_shared<std::string>("all");
  auto params = std::make_shared<bool>(false);
  cmd->add_option("what", *what, "kernels, tests, benches, targets, or all (the default)")
      ->check(CLI::IsMember({"kernels", "tests", "benches", "targets", "all"}));
  cmd->add_flag("--params", *params,
                "Under each kernel, its parameters: kind, name and dtype (T: the kernel's float "
                "type, set by --dtype)");
  return {cmd, [what, params] {
            if (*what == "all" || *what == "kernels") list_kernels(*params);
            if (*what == "all" || *what == "tests") list_tests();
            if (*what == "all" || *what == "benches") list_benches();
            if (*what == "all" || *what == "targets") list_targets();
            return 0;
          }};
}

}  // namespace iron::cli
