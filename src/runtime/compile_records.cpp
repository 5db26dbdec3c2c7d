/// Compile records: three lines (symbol, architecture, milliseconds) in a checked blob.
#include "iron/runtime/compile_records.hpp"

#include <fmt/format.h>

#include <charconv>
#include <vector>

#include "iron/core/error.hpp"

namespace iron::runtime {

std::optional<BlobStore> compile_record_store() {
  const std::optional<CacheDir> dir = cache_dir();
  if (!dir) return std::nullopt;
  return BlobStore(dir->path, ".record");
}

void store_compile_record(std::string_view key, const CompileRecord& record) {
  const std::optional<BlobStore> records = compile_record_store();
  if (!records) return;
  const std::string text =
      fmt::format("{}\n{}\n{:.3f}\n", record.symbol, record.arch, record.compile_ms);
  records->store(key, std::as_bytes(std::span(text.data(), text.size())));
}

std::optional<CompileRecord> load_compile_record(const BlobStore& records, std::string_view key) {
  const BlobStore::Loaded loaded = records.load(key);
  if (loaded.outcome != BlobStore::Loaded::Outcome::Hit) return std::nullopt;
  const std::string text(reinterpret_cast<const char*>(loaded.blob.data()), loaded.blob.size());
  std::vector<std::string_view> lines;
  for (std::size_t start = 0, end = 0; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.emplace_back(text.data() + start, end - start);
  }
  if (lines.size() != 3) return std::nullopt;
  CompileRecord record{std::string(lines[0]), std::string(lines[1]), 0.0};
  const auto [end, error] =
      std::from_chars(lines[2].data(), lines[2].data() + lines[2].size(), record.compile_ms);
  if (error != std::errc() || end != lines[2].data() + lines[2].size()) return std::nullopt;
  return record;
}

}  // namespace iron::runtime
