/// Modules by key in memory, backed by the disk BlobStore and NVRTC.
#include "cuda_module_cache.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "iron/core/error.hpp"
#include "iron/core/hash.hpp"
#include "iron/runtime/compile_records.hpp"
#include "iron/runtime/module_cache.hpp"
#include "iron/runtime/nvrtc.hpp"

namespace iron::runtime::cuda {
namespace {

using Clock = std::chrono::steady_clock;

/// One key's module; its mutex makes concurrent first uses load it once.
struct Slot {
  std::mutex mutex;
  CUmodule module = nullptr;
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

CUmodule module_from(const std::vector<std::byte>& cubin, const std::string& symbol) {
  CUmodule module = nullptr;
  driver().check(driver().api().module_load_data(&module, cubin.data()), "cuModuleLoadData",
                 symbol);
  return module;
}

CUmodule load_or_compile(const codegen::CompiledKernel& compiled, int sm, const std::string& key) {
  const std::optional<BlobStore> store = module_store();
  if (store) {
    const Clock::time_point start = Clock::now();
    BlobStore::Loaded cached = store->load(key);
    if (cached.outcome == BlobStore::Loaded::Outcome::Hit) {
      const CUmodule module = module_from(cached.blob, compiled.symbol);
      record_cache_event({CacheEventKind::DiskHit, compiled.symbol, key, ms_since(start), ""});
      return module;
    }
    if (cached.outcome == BlobStore::Loaded::Outcome::Rejected) {
      record_cache_event({CacheEventKind::Rejected, compiled.symbol, key, 0.0,
                          fmt::format("{}: {}", store->entry_path(key).string(), cached.why)});
    }
  }
  const Clock::time_point start = Clock::now();
  const CubinResult cubin =
      compile_cubin(compiled.source, compiled.symbol, sm, compiled.arch_specific);
  const double compile_ms = ms_since(start);
  const CUmodule module = module_from(cubin.cubin, compiled.symbol);
  record_cache_event({CacheEventKind::Compiled, compiled.symbol, key, compile_ms, ""});
  if (store) {
    try {
      store->store(key, cubin.cubin);
      store_compile_record(key, {compiled.symbol, compiled.profile, compile_ms});
    } catch (const Error& e) {
      record_cache_event({CacheEventKind::StoreFailed, compiled.symbol, key, 0.0, e.what()});
    }
  }
  return module;
}

}  // namespace

std::string module_key(const codegen::CompiledKernel& compiled, int sm) {
  const NvrtcStatus& nvrtc = nvrtc_status();
  const std::string arch = fmt::format("sm_{}{}", sm, compiled.arch_specific ? "a" : "");
  return module_cache_key(ir::structural_hash(compiled.lowered), arch, IRON_VERSION, nvrtc.major,
                          nvrtc.minor, compiled.source);
}

CUmodule load_module(const codegen::CompiledKernel& compiled, int sm) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<Slot>> slots;

  const std::string key = module_key(compiled, sm);
  std::shared_ptr<Slot> slot;
  {
    const std::lock_guard lock(mutex);
    std::shared_ptr<Slot>& entry = slots[key];
    if (entry == nullptr) entry = std::make_shared<Slot>();
    slot = entry;
  }
  const std::lock_guard lock(slot->mutex);
  if (slot->module != nullptr) {
    record_cache_event({CacheEventKind::MemoryHit, compiled.symbol, key, 0.0, ""});
    return slot->module;
  }
  // A load that throws leaves the slot empty, so the next call tries again.
  slot->module = load_or_compile(compiled, sm, key);
  return slot->module;
}

unsigned int opt_in_shared_memory(CUfunction function, const codegen::CompiledKernel& compiled) {
  const std::uint32_t bytes = compiled.lowered.shared_bytes;
  if (!codegen::uses_dynamic_shared(bytes)) return 0;
  const Driver& d = driver();
  d.check(d.api().func_set_attribute(function,
                                     static_cast<int>(FunctionAttribute::MaxDynamicSharedSizeBytes),
                                     static_cast<int>(bytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", compiled.symbol);
  return bytes;
}

}  // namespace iron::runtime::cuda
