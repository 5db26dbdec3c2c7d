/// What the kernel cache keeps of how each entry was made: the cold cost of a module (its NVRTC
/// compile time), so that `iron cache info` can show cold and warm times side by side. A record is
/// `KEY.record` beside `KEY.cubin` in the cache folder, written and checked like an entry
/// (BlobStore), and removed with it by `iron cache clear`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "iron/runtime/module_cache.hpp"

namespace iron::runtime {

struct CompileRecord {
  std::string symbol;       ///< the kernel form, "iron_softmax_bf16"
  std::string arch;         ///< "sm_90"
  double compile_ms = 0.0;  ///< NVRTC's compile of the source to the cubin
};

/// The records' store (`KEY.record` in cache_dir()); nullopt when there is no cache folder.
std::optional<BlobStore> compile_record_store();

/// Writes the record of entry `key`; Error when it cannot be written.
void store_compile_record(std::string_view key, const CompileRecord& record);

/// The record of entry `key`, or nullopt when there is none or it is damaged (then removed).
std::optional<CompileRecord> load_compile_record(const BlobStore& records, std::string_view key);

}  // namespace iron::runtime
