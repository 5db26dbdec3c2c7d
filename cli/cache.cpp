/// `iron cache info|clear`: the on-disk cache of compiled kernels (cubins).
#include <fmt/format.h>

#include <optional>
#include <utility>

#include "commands.hpp"
#include "iron/runtime/module_cache.hpp"

namespace iron::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string size_text(std::uint64_t bytes) {
  return fmt::format("{:.1f} MiB ({} bytes)", static_cast<double>(bytes) / kMiB, bytes);
}

/// The cache folder and its store, or a usage error saying how to choose a folder.
struct Cache {
  runtime::CacheDir dir;
  runtime::BlobStore store;
};

Cache open_cache() {
  std::optional<runtime::CacheDir> dir = runtime::cache_dir();
  std::optional<runtime::BlobStore> store = runtime::module_store();
  if (!dir || !store) {
    throw UsageError(
        "no kernel cache folder: set IRON_CACHE_DIR (or XDG_CACHE_HOME, or HOME) to choose one");
  }
  return {std::move(*dir), std::move(*store)};
}

int cache_info() {
  const Cache cache = open_cache();
  const runtime::BlobStore::Summary summary = cache.store.summary();
  fmt::print("kernel cache: {} (chosen by {})\n", cache.store.dir().string(), cache.dir.chosen_by);
  fmt::print("  {} {}, {}\n", summary.entries, summary.entries == 1 ? "entry" : "entries",
             size_text(summary.bytes));
  return 0;
}

int cache_clear() {
  const Cache cache = open_cache();
  const runtime::BlobStore::Summary removed = cache.store.clear();
  fmt::print("kernel cache: removed {} {}, {}, from {}\n", removed.entries,
             removed.entries == 1 ? "entry" : "entries", size_text(removed.bytes),
             cache.store.dir().string());
  return 0;
}

}  // namespace

Command add_cache_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "cache",
      "Inspect or empty the cache of compiled CUDA kernels (cubins), kept between runs in "
      "$IRON_CACHE_DIR, else $XDG_CACHE_HOME/iron, else ~/.cache/iron");
  cmd->require_subcommand(1);
  cmd->add_subcommand("info", "Print the cache folder, its entries and their size");
  auto* clear = cmd->add_subcommand(
      "clear", "Remove every cached kernel (each is compiled again when next needed)");
  // require_subcommand(1): exactly one of info and clear was given.
  return {cmd, [clear] { return clear->parsed() ? cache_clear() : cache_info(); }};
}

}  // namespace iron::cli
