/// `iron cache info|clear`: the on-disk cache of compiled kernels (cubins), with each entry's cold
/// cost (its recorded NVRTC compile) and, asked for, its warm cost (read, check and load now).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "iron/bench/device.hpp"
#include "iron/runtime/compile_records.hpp"
#include "iron/runtime/module_cache.hpp"
#include "iron/runtime/warmup.hpp"

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

struct InfoOptions {
  bool entries = false;
  bool warm = false;
};

/// One entry's costs: cold as recorded when it was compiled, warm as measured now.
struct EntryTimes {
  std::string key;
  std::optional<runtime::CompileRecord> record;
  std::optional<double> read_ms;  ///< read and checksum (--warm)
  std::optional<double> load_ms;  ///< cuModuleLoadData (--warm, with a GPU)
  std::string problem;            ///< why it could not be read or loaded
};

EntryTimes entry_times(const Cache& cache, const runtime::BlobStore& records,
                       const std::string& key, bool warm) {
  EntryTimes t{key, runtime::load_compile_record(records, key), std::nullopt, std::nullopt, ""};
  if (!warm) return t;
  const auto start = std::chrono::steady_clock::now();
  const runtime::BlobStore::Loaded loaded = cache.store.load(key);
  t.read_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (loaded.outcome != runtime::BlobStore::Loaded::Outcome::Hit) {
    t.problem = loaded.why.empty() ? "gone" : loaded.why;
    return t;
  }
  try {
    t.load_ms = runtime::time_module_load(loaded.blob);
  } catch (const Error& e) {
    t.problem = e.what();
  }
  return t;
}

std::string ms_text(const std::optional<double>& ms) {
  return ms ? fmt::format("{:8.2f} ms", *ms) : fmt::format("{:>11}", "-");
}

/// "median M ms, max X ms (SYMBOL)" over the values, or "none".
template <typename Get>
std::string spread_text(const std::vector<EntryTimes>& all, Get get) {
  std::vector<double> values;
  std::string slowest;
  double most = -1.0;
  for (const EntryTimes& t : all) {
    const std::optional<double> v = get(t);
    if (!v) continue;
    values.push_back(*v);
    if (*v > most) {
      most = *v;
      slowest = t.record ? t.record->symbol : t.key;
    }
  }
  if (values.empty()) return "none";
  const bench::Spread spread = bench::spread_of(values);
  return fmt::format("{} entries, median {:.2f} ms, max {:.2f} ms ({})", values.size(),
                     spread.median, spread.max, slowest);
}

int cache_info(const InfoOptions& o) {
  const Cache cache = open_cache();
  const runtime::BlobStore::Summary summary = cache.store.summary();
  fmt::print("kernel cache: {} (chosen by {})\n", cache.store.dir().string(), cache.dir.chosen_by);
  fmt::print("  {} {}, {}\n", summary.entries, summary.entries == 1 ? "entry" : "entries",
             size_text(summary.bytes));
  const std::optional<runtime::BlobStore> records = runtime::compile_record_store();
  std::vector<EntryTimes> all;
  for (const std::string& key : cache.store.keys()) {
    all.push_back(entry_times(cache, *records, key, o.warm));
  }
  if (o.entries) {
    for (const EntryTimes& t : all) {
      fmt::print("  {} {:<40} {:<6} cold {}", t.key, t.record ? t.record->symbol : "(no record)",
                 t.record ? t.record->arch : "",
                 ms_text(t.record ? std::optional(t.record->compile_ms) : std::nullopt));
      if (o.warm) fmt::print("  warm read {} load {}", ms_text(t.read_ms), ms_text(t.load_ms));
      fmt::print("{}\n", t.problem.empty() ? "" : "  (" + t.problem + ")");
    }
  }
  fmt::print("  cold, NVRTC compile as recorded: {}\n", spread_text(all, [](const EntryTimes& t) {
               return t.record ? std::optional(t.record->compile_ms) : std::nullopt;
             }));
  if (o.warm) {
    fmt::print("  warm, read and check: {}\n",
               spread_text(all, [](const EntryTimes& t) { return t.read_ms; }));
    const bool loaded = std::any_of(all.begin(), all.end(),
                                    [](const EntryTimes& t) { return t.load_ms.has_value(); });
    fmt::print("  warm, cuModuleLoadData: {}\n",
               loaded || all.empty()
                   ? spread_text(all, [](const EntryTimes& t) { return t.load_ms; })
                   : "not measured (no CUDA device here)");
  }
  return 0;
}

int cache_clear() {
  const Cache cache = open_cache();
  const runtime::BlobStore::Summary removed = cache.store.clear();
  if (const auto records = runtime::compile_record_store()) records->clear();
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
  auto options = std::make_shared<InfoOptions>();
  auto* info = cmd->add_subcommand(
      "info",
      "Print the cache folder, its entries and their size, and the cold cost of its entries "
      "(each one's NVRTC compile time, recorded when it was compiled)");
  info->add_flag("--entries", options->entries, "One line per entry: key, kernel form, times");
  info->add_flag("--warm", options->warm,
                 "Also measure the warm cost now: reading and checking each entry, and loading "
                 "it on the GPU (cuModuleLoadData) when there is one");
  auto* clear = cmd->add_subcommand(
      "clear", "Remove every cached kernel (each is compiled again when next needed)");
  // require_subcommand(1): exactly one of info and clear was given.
  return {cmd, [clear, options] { return clear->parsed() ? cache_clear() : cache_info(*options); }};
}

}  // namespace iron::cli
