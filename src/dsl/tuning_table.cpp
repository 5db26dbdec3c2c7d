/// Tuning files: shape buckets, the line format, reading, writing and lookup.
#include "iron/dsl/tuning_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>

#include "iron/core/error.hpp"

namespace iron::dsl {
namespace {

constexpr std::string_view kSeparator = " | ";
constexpr std::string_view kHeader =
    "# Iron tuning file (docs/tuning.md): written by `iron tune`, read by `iron bench --tuning "
    "FILE`\n"
    "# and by the host entry points when IRON_TUNING_FILE names it (the library carries\n"
    "# tuning/*.txt). One entry a line:\n"
    "# kernel | dtype | shape bucket | device | driver | configuration | measured\n"
    "# A bucket gives each integer constexpr's range (its power-of-two ceiling and the values it\n"
    "# shares that ceiling with); the configuration sets the kernel's tuning knobs.\n";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view line, char by) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = line.find(by, start);
    parts.push_back(trim(line.substr(start, at - start)));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

std::optional<std::uint64_t> number(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

/// The smallest value whose power-of-two ceiling is `ceiling`.
std::uint64_t bucket_floor(std::uint64_t ceiling) {
  return ceiling <= 2 ? ceiling : ceiling / 2 + 1;
}

ShapeBucket parse_bucket(std::string_view text) {
  ShapeBucket bucket;
  if (text.empty()) return bucket;
  for (const std::string_view item : split(text, ',')) {
    const std::size_t eq = item.find('=');
    const std::size_t dots = item.find("..");
    const auto lo = dots == std::string_view::npos || eq == std::string_view::npos
                        ? std::nullopt
                        : number(item.substr(eq + 1, dots - eq - 1));
    const auto hi = lo ? number(item.substr(dots + 2)) : std::nullopt;
    if (!hi || eq == 0 || (*hi != 0 && !std::has_single_bit(*hi)) || *lo != bucket_floor(*hi)) {
      throw Error(fmt::format(
          "shape bucket item '{}' is not NAME=LO..HI with HI a power of two (or 0) and LO the "
          "smallest value rounding up to it",
          item));
    }
    if (!bucket.emplace(std::string(item.substr(0, eq)), *hi).second) {
      throw Error(fmt::format("shape bucket names '{}' twice", item.substr(0, eq)));
    }
  }
  return bucket;
}

auto key_of(const TuningEntry& e) {
  return std::tie(e.kernel, e.dtype, e.bucket, e.device, e.driver);
}

}  // namespace

ShapeBucket shape_bucket(const ir::Kernel& kernel,
                         const std::map<std::string, double, std::less<>>& constants) {
  ShapeBucket bucket;
  for (const ir::Param& p : kernel.params) {
    if (p.kind != ir::ParamKind::Constexpr || is_float(p.dtype)) continue;
    const auto found = constants.find(p.name);
    if (found == constants.end()) {
      throw Error(fmt::format("the shape bucket of {} needs constexpr '{}', which is not given",
                              kernel.name, p.name));
    }
    const double v = std::max(found->second, 0.0);
    const auto value = static_cast<std::uint64_t>(std::llround(v));
    bucket[p.name] = value <= 1 ? value : std::bit_ceil(value);
  }
  return bucket;
}

std::string format_bucket(const ShapeBucket& bucket) {
  std::string text;
  for (const auto& [name, ceiling] : bucket) {
    text +=
        fmt::format("{}{}={}..{}", text.empty() ? "" : ",", name, bucket_floor(ceiling), ceiling);
  }
  return text;
}

TuningTable TuningTable::parse(std::string_view text, const std::string& origin) {
  TuningTable table;
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = trim(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    try {
      std::vector<std::string_view> fields;
      std::size_t from = 0;
      while (true) {
        const std::size_t at = line.find(kSeparator, from);
        fields.push_back(trim(line.substr(from, at - from)));
        if (at == std::string_view::npos) break;
        from = at + kSeparator.size();
      }
      if (fields.size() != 7) {
        throw Error(
            fmt::format("{} fields where an entry has 7 (kernel | dtype | shape bucket | "
                        "device | driver | configuration | measured)",
                        fields.size()));
      }
      TuningEntry e;
      e.kernel = fields[0];
      const auto dtype = parse_dtype(fields[1]);
      if (!dtype) throw Error(fmt::format("'{}' is not a dtype", fields[1]));
      e.dtype = *dtype;
      e.bucket = parse_bucket(fields[2]);
      e.device = fields[3];
      e.driver = fields[4];
      e.config = parse_config(fields[5]);
      e.measured = fields[6];
      if (e.kernel.empty() || e.device.empty() || e.driver.empty()) {
        throw Error("the kernel, device and driver must be named");
      }
      if (table.find(e.kernel, e.dtype, e.bucket, e.device, e.driver) != nullptr) {
        throw Error("a second entry for the same kernel, dtype, bucket, device and driver");
      }
      table.put(std::move(e));
    } catch (const Error& e) {
      throw Error(fmt::format("{}:{}: {}", origin, line_no, e.what()));
    }
  }
  return table;
}

TuningTable TuningTable::read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read tuning file {}", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

std::string TuningTable::text() const {
  std::string text(kHeader);
  for (const TuningEntry& e : entries_) {
    text += fmt::format("{}{}{}{}{}{}{}{}{}{}{}{}{}\n", e.kernel, kSeparator, dtype_name(e.dtype),
                        kSeparator, format_bucket(e.bucket), kSeparator, e.device, kSeparator,
                        e.driver, kSeparator, format_config(e.config), kSeparator, e.measured);
  }
  return text;
}

void TuningTable::write(const std::string& path) const {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code made;
  if (!parent.empty()) std::filesystem::create_directories(parent, made);
  if (made) {
    throw Error(fmt::format("cannot make the folder of tuning file {}: {}", path, made.message()));
  }
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text();
    out.flush();
    if (!out) throw Error(fmt::format("cannot write tuning file {}", temporary));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw Error(fmt::format("cannot replace tuning file {}", path));
  }
}

const TuningEntry* TuningTable::find(std::string_view kernel, DType dtype,
                                     const ShapeBucket& bucket, std::string_view device,
                                     std::string_view driver) const {
  for (const TuningEntry& e : entries_) {
    if (e.kernel == kernel && e.dtype == dtype && e.bucket == bucket && e.device == device &&
        e.driver == driver) {
      return &e;
    }
  }
  return nullptr;
}

TuningConfig TuningTable::config_for(const ir::Kernel& kernel,
                                     const std::map<std::string, double, std::less<>>& constants,
                                     std::string_view device, std::string_view driver) const {
  const std::optional<TuningSpace> space = tuning_space(kernel.name);
  if (!space) return {};
  // Most launches are of kernels without an entry: say so before making the bucket.
  const bool listed = std::any_of(entries_.begin(), entries_.end(), [&](const TuningEntry& e) {
    return e.kernel == kernel.name && e.dtype == kernel.dtype;
  });
  const TuningEntry* entry =
      listed ? find(kernel.name, kernel.dtype, shape_bucket(kernel, constants), device, driver)
             : nullptr;
  const TuningConfig chosen =
      entry != nullptr ? entry->config : space->preferred(kernel.name, kernel.dtype, constants);
  // A knob at its default is left out, so that the defaults have one spelling (the empty
  // configuration) and a launcher keeps one traced kernel for them.
  const TuningConfig defaults = space->defaults();
  TuningConfig config;
  for (const auto& [name, value] : chosen) {
    const auto d = defaults.find(name);
    if (d == defaults.end() || d->second != value) config.emplace(name, value);
  }
  return config;
}

void TuningTable::put(TuningEntry entry) {
  if (entry.measured.find(kSeparator) != std::string::npos ||
      entry.measured.find('\n') != std::string::npos ||
      entry.device.find(kSeparator) != std::string::npos) {
    throw Error("a tuning entry's device and note may hold neither \" | \" nor a line break");
  }
  const auto same = std::find_if(entries_.begin(), entries_.end(),
                                 [&](const TuningEntry& e) { return key_of(e) == key_of(entry); });
  if (same != entries_.end()) {
    *same = std::move(entry);
    return;
  }
  const auto at = std::upper_bound(
      entries_.begin(), entries_.end(), entry,
      [](const TuningEntry& a, const TuningEntry& b) { return key_of(a) < key_of(b); });
  entries_.insert(at, std::move(entry));
}

const TuningTable& builtin_tuning_table() {
  static const TuningTable table = [] {
    struct File {
      std::string_view name, text;
    };
    static constexpr File kFiles[] = {
#include "builtin_tuning.inc"
    };
    TuningTable t;
    for (const File& f : kFiles) {
      const TuningTable file = TuningTable::parse(f.text, "tuning/" + std::string(f.name));
      for (const TuningEntry& e : file.entries()) t.put(e);
    }
    return t;
  }();
  return table;
}

TuningTable merged_tuning_table(const char* path, const char* builtin) {
  TuningTable table;
  if (builtin == nullptr || std::string_view(builtin) != "0") table = builtin_tuning_table();
  if (path != nullptr && *path != '\0') {
    try {
      const TuningTable file = TuningTable::read(path);
      for (const TuningEntry& e : file.entries()) table.put(e);
    } catch (const Error& e) {
      throw Error(fmt::format("IRON_TUNING_FILE: {}", e.what()));
    }
  }
  return table;
}

const TuningTable& environment_tuning_table() {
  struct Loaded {
    TuningTable table;
    std::string error;
  };
  static const Loaded loaded = [] {
    Loaded l;
    try {
      l.table =
          merged_tuning_table(std::getenv("IRON_TUNING_FILE"), std::getenv("IRON_TUNING_BUILTIN"));
    } catch (const Error& e) {
      l.error = e.what();
    }
    return l;
  }();
  if (!loaded.error.empty()) throw Error(loaded.error);
  return loaded.table;
}

TuningConfig environment_tuning_for(const ir::Kernel& kernel,
                                    const std::map<std::string, double, std::less<>>& constants,
                                    std::string_view device, std::string_view driver) {
  return environment_tuning_table().config_for(kernel, constants, device, driver);
}

}  // namespace iron::dsl
