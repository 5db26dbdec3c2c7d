/// Problems found while registering kernels, tests and benches (a name registered twice, a test
/// listing no dtypes). A static initialiser cannot report an error: a throw there aborts the
/// whole program before main, whatever the command. So registrars record each problem, and every
/// read of a registry (and the CLI at start-up) raises them all as one Error.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::dsl {

/// Throws Error listing every recorded registration problem, one a line; returns when none.
void check_registrations();

namespace detail {

/// Records a problem a static registrar found, for check_registrations().
void record_registration_problem(std::string message);

/// "kernel 'x' is registered twice: a.cpp:12 and b.cpp:40", the two places in file:line order
/// (static initialisers of two files run in no set order, so the message is the same each run).
std::string registered_twice(std::string_view what, std::string_view name, const ir::SourceLoc& a,
                             const ir::SourceLoc& b);

/// Inserts `entry` into `entries`, kept sorted by name. An entry whose name is already there is
/// not inserted; the problem is returned instead. `what` names the kind ("kernel", "test").
template <class Entry>
std::optional<std::string> insert_unique(std::vector<Entry>& entries, Entry entry,
                                         std::string_view what) {
  const auto at =
      std::lower_bound(entries.begin(), entries.end(), entry.name,
                       [](const Entry& e, const std::string& name) { return e.name < name; });
  if (at != entries.end() && at->name == entry.name) {
    return registered_twice(what, entry.name, at->loc, entry.loc);
  }
  entries.insert(at, std::move(entry));
  return std::nullopt;
}

/// Inserts `entry` as insert_unique does and records the problem it finds, except that an entry
/// of the same name and place is already there and counts once: a kernel file is compiled into
/// both the kernel library and its tests, so its registrations may arrive twice.
template <class Entry>
void register_once(std::vector<Entry>& entries, Entry entry, std::string_view what) {
  const auto same = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) {
    return e.name == entry.name && e.loc == entry.loc;
  });
  if (same != entries.end()) return;
  if (auto problem = insert_unique(entries, std::move(entry), what)) {
    record_registration_problem(std::move(*problem));
  }
}

}  // namespace detail
}  // namespace iron::dsl
