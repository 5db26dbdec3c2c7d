/// The kernel module cache: compiled device code kept on disk between processes, keyed by what
/// produced it, and this process's record of compiles, loads and rejected entries.
///
/// ## Where
/// The folder is $IRON_CACHE_DIR (the folder itself) when set; else $XDG_CACHE_HOME/iron when
/// XDG_CACHE_HOME is an absolute path; else $HOME/.cache/iron. With none of them set nothing is
/// stored and every process compiles its kernels afresh. `iron cache info|clear` manage it;
/// give Iron a folder of its own, since clearing removes every `KEY.cubin` in it.
///
/// ## Entries
/// One file per key, `KEY.cubin`: a 32-byte header — the magic "IRONBLOB", the format version
/// (u32), 4 zero bytes, the payload size (u64) and the FNV-1a 64 checksum of the payload (u64),
/// all little-endian — then the payload. A writer writes a temp file in the same folder
/// (`.KEY.PID.RANDOM.tmp`), closes it and renames it over `KEY.cubin`, so a reader in any process
/// sees a whole entry or none, and concurrent writers of one key leave one valid entry. A reader
/// removes a file that is truncated, larger than kMaxEntryBytes, or has a wrong magic, version,
/// size or checksum, and counts it as rejected; the caller then rebuilds the entry. Something
/// other than a regular file under an entry's name (a folder, a device) is also rejected, but
/// left in place and never read; storing that key then fails and says why. The disk logic has
/// nothing to do with CUDA: BlobStore keeps any byte blobs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iron::runtime {

/// The largest entry file read (headers included); a cubin is a few MiB at most.
inline constexpr std::uintmax_t kMaxEntryBytes = std::uintmax_t{256} << 20;

/// The cache folder and the variable it came from ("$IRON_CACHE_DIR", "$XDG_CACHE_HOME" or
/// "$HOME"); nullopt when none is set. Read from the environment on every call.
struct CacheDir {
  std::filesystem::path path;
  std::string chosen_by;
};
std::optional<CacheDir> cache_dir();

/// FNV-1a, 64-bit: the entries' checksum and the key's hash.
std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t seed = 0xcbf29ce484222325ull);

/// 16 lower-case hex digits: a 64-bit hash over the structural hash of the LOWERED kernel, the
/// target architecture ("sm_90"), Iron's version, NVRTC's version and the emitted source text.
std::string module_cache_key(std::uint64_t lowered_hash, std::string_view arch,
                             std::string_view iron_version, int nvrtc_major, int nvrtc_minor,
                             std::string_view source);

/// Byte blobs stored by key as files `KEY` + extension in one folder (see the file comment).
/// Keys are non-empty and made of letters, digits, '-' and '_'. Safe to share between threads
/// and processes.
class BlobStore {
 public:
  BlobStore(std::filesystem::path dir, std::string extension);

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entry_path(std::string_view key) const;

  struct Loaded {
    enum class Outcome : std::uint8_t { Hit, Miss, Rejected };
    Outcome outcome = Outcome::Miss;
    std::vector<std::byte> blob;  ///< the payload, on a hit
    std::string why;              ///< on a rejection: what was wrong with the file
  };
  /// A missing file is a miss; a damaged one is removed and reported as rejected; a folder or
  /// other non-regular file is reported as rejected and left alone.
  Loaded load(std::string_view key) const;

  /// Creates the folder if needed and replaces the entry atomically. Throws iron::Error naming
  /// the file and the system's error when it cannot be written.
  void store(std::string_view key, std::span<const std::byte> blob) const;

  struct Summary {
    std::size_t entries = 0;
    std::uint64_t bytes = 0;  ///< file sizes, headers included
  };
  /// The entries (regular files) now in the folder (none if it does not exist).
  Summary summary() const;
  /// The keys of those entries, sorted.
  std::vector<std::string> keys() const;
  /// Removes every entry and any temp file a crashed writer left (regular files only); returns
  /// the entries removed.
  /// Throws iron::Error naming a file that cannot be removed.
  Summary clear() const;

 private:
  std::filesystem::path dir_;
  std::string extension_;
};

/// The store of CUDA cubins (`KEY.cubin`) in cache_dir(); nullopt when there is no folder.
std::optional<BlobStore> module_store();

/// What happened when a kernel's module was needed, in this process.
enum class CacheEventKind : std::uint8_t {
  Compiled,     ///< not cached: compiled with NVRTC (ms = compile time)
  DiskHit,      ///< read from the disk cache and loaded (ms = read + load time)
  MemoryHit,    ///< already loaded in this process
  Rejected,     ///< a damaged disk entry, removed (detail = why); a compile follows
  StoreFailed,  ///< the compiled module could not be written to disk (detail = why)
};

struct CacheEvent {
  CacheEventKind kind = CacheEventKind::Compiled;
  std::string symbol;  ///< the kernel's symbol, e.g. "iron_scale_f16"
  std::string key;
  double ms = 0.0;
  std::string detail;
};

/// Appends to this process's record. Thread-safe.
void record_cache_event(CacheEvent event);
/// This process's record so far, in order. Thread-safe.
std::vector<CacheEvent> cache_events();
/// One line for `iron test`: "kernel cache: 3 compiled (1240 ms), 12 loaded from disk (35 ms),
/// 40 reused in memory, 1 damaged entry rebuilt, 1 not stored"; parts with no event are left out,
/// and "" when there is no event at all.
std::string cache_summary(const std::vector<CacheEvent>& events);

}  // namespace iron::runtime
